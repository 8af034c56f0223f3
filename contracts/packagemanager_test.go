package contracts

import (
	"strings"
	"testing"
)

func TestParseRelease(t *testing.T) {
	sha512 := "sha512." + strings.Repeat("ab", 64)
	for _, tc := range []struct {
		field, want, err string
	}{
		{"pnpm@9.15.9", "pnpm@9.15.9", ""},
		{"yarn@4.9.2+" + sha512, "yarn@4.9.2+" + sha512, ""},
		{"yarn@3.6.1", "yarn@3.6.1", ""},
		{"npm@10.9.2", "npm@10.9.2", ""},
		{"pnpm@10.0.0-rc.1", "pnpm@10.0.0-rc.1", ""},
		{"pnpm", "", "want name@version"},
		{"deno@2.0.0", "", "not one Signoff runs"},
		{"pnpm@^9", "", "not an exact version"},
		{"pnpm@latest", "", "not an exact version"},
		{"yarn@https://example.test/yarn.js", "", "not an exact version"},
		{"pnpm@9.1.0+md5.abcdef", "", "the hash must be"},
		{"pnpm@9.1.0+sha256.abc", "", "the hash must be"},
		{"pnpm@9.1.0+sha256." + strings.Repeat("a", 128), "", "the hash must be"},
		{"pnpm@" + strings.Repeat("9", 400), "", "at most 300"},
	} {
		r, err := ParseRelease(tc.field)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%q: %v", tc.field, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: error %v, want one saying %q", tc.field, err, tc.err)
		case tc.err == "" && r.String() != tc.want:
			t.Errorf("%q: read as %q", tc.field, r.String())
		}
	}
}

// Yarn Berry refuses Yarn 1's flags: the contract signs what the declared release accepts.
func TestStackCommandsFollowTheRelease(t *testing.T) {
	for _, tc := range []struct {
		pm, version, install, build string
	}{
		{PackageManagerYarn, "", "yarn install --frozen-lockfile", "yarn build"},
		{PackageManagerYarn, "1.22.22", "yarn install --frozen-lockfile", "yarn build"},
		{PackageManagerYarn, "3.6.1", "yarn install --immutable", "yarn run build"},
		{PackageManagerYarn, "4.9.2+sha512." + strings.Repeat("0", 128), "yarn install --immutable", "yarn run build"},
		{PackageManagerPNPM, "9.15.9", "pnpm install --frozen-lockfile", "pnpm run build"},
		{PackageManagerNPM, "10.9.2", "npm ci", "npm run build"},
	} {
		i, b, _, ok := StackCommands(tc.pm, tc.version, true)
		if !ok || Command(i) != tc.install || Command(b) != tc.build {
			t.Errorf("%s %s: install %q build %q", tc.pm, tc.version, Command(i), Command(b))
		}
	}
}
