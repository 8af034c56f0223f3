package contracts

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Package managers a contract's stack may name. The lockfile decides, in this order; a
// repository without one installs with npm (and is not reproducible).
const (
	PackageManagerNPM  = "npm"
	PackageManagerBun  = "bun"
	PackageManagerPNPM = "pnpm"
	PackageManagerYarn = "yarn"
)

// Lockfiles maps each lockfile name to its package manager, in detection order.
var Lockfiles = []struct{ File, PackageManager string }{
	{"package-lock.json", PackageManagerNPM},
	{"bun.lock", PackageManagerBun},
	{"bun.lockb", PackageManagerBun},
	{"pnpm-lock.yaml", PackageManagerPNPM},
	{"yarn.lock", PackageManagerYarn},
}

// DetectPackageManager is the package manager and lockfile of an app folder, given whether a
// file name exists in it. Without a lockfile it is npm and "".
func DetectPackageManager(has func(name string) bool) (pm, lockfile string) {
	for _, lf := range Lockfiles {
		if has(lf.File) {
			return lf.PackageManager, lf.File
		}
	}
	return PackageManagerNPM, ""
}

// Release is a package manager as a repository declares it in package.json's packageManager
// field (corepack's format): "pnpm@9.15.9", "yarn@4.9.2+sha512.<hex>". Version is exact;
// Hash, when given, is "<algorithm>.<hex>" of the release as corepack downloads it.
type Release struct {
	Name, Version, Hash string
}

var (
	releaseVersionRe = regexp.MustCompile(`^(\d{1,4})\.(\d{1,4})\.(\d{1,6})(?:-[0-9A-Za-z.-]{1,40})?$`)
	releaseHashRe    = regexp.MustCompile(`^(sha1|sha224|sha256|sha512)\.([0-9a-f]{40,128})$`)
	hashHexLen       = map[string]int{"sha1": 40, "sha224": 56, "sha256": 64, "sha512": 128}
)

// ParseRelease reads a packageManager field. A name Signoff does not run, a version that is
// not exact (a range, a tag, a URL) or a malformed hash is an error that says which.
func ParseRelease(field string) (Release, error) {
	if len(field) > 300 {
		return Release{}, fmt.Errorf("packageManager: %d characters, at most 300", len(field))
	}
	name, rest, ok := strings.Cut(strings.TrimSpace(field), "@")
	if !ok || name == "" {
		return Release{}, fmt.Errorf("packageManager %q: want name@version, as corepack reads it", field)
	}
	if _, _, _, known := StackCommands(name, "", true); !known {
		return Release{}, fmt.Errorf("packageManager %q: %s is not one Signoff runs (npm, pnpm, yarn, bun)", field, name)
	}
	version, hash, _ := strings.Cut(rest, "+")
	if !releaseVersionRe.MatchString(version) {
		return Release{}, fmt.Errorf("packageManager %q: %q is not an exact version (x.y.z)", field, version)
	}
	if hash != "" {
		m := releaseHashRe.FindStringSubmatch(hash)
		if m == nil || len(m[2]) != hashHexLen[m[1]] {
			return Release{}, fmt.Errorf("packageManager %q: the hash must be sha1, sha224, sha256 or sha512 followed by '.' and its hex digest", field)
		}
	}
	return Release{Name: name, Version: version, Hash: hash}, nil
}

// String is the release as a packageManager field writes it.
func (r Release) String() string {
	s := r.Name + "@" + r.Version
	if r.Hash != "" {
		s += "+" + r.Hash
	}
	return s
}

// Major is the version's first number, 0 when there is none.
func (r Release) Major() int { return versionMajor(r.Version) }

func versionMajor(v string) int {
	v, _, _ = strings.Cut(v, "+") // a stack's version may carry the declared hash
	m := releaseVersionRe.FindStringSubmatch(v)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// YarnBerry reports whether a yarn version is Yarn 2 or later ("Berry"), whose flags,
// lockfile and configuration (.yarnrc.yml) are not Yarn 1's.
func YarnBerry(version string) bool { return versionMajor(version) >= 2 }

// StackCommands are the install, build and start commands of a package manager at a version
// ("" when the repository declares none), as words: what a contract's stack states (joined by
// spaces) and what the preview runs, the same words (the preview only adds where caches go,
// and the host and port to start on). ok is false for a package manager Signoff does not run.
func StackCommands(pm, version string, locked bool) (install, build, start []string, ok bool) {
	switch pm {
	case PackageManagerBun:
		return []string{"bun", "install", "--frozen-lockfile"}, []string{"bun", "run", "build"}, []string{"bun", "run", "start"}, true
	case PackageManagerPNPM:
		return []string{"pnpm", "install", "--frozen-lockfile"}, []string{"pnpm", "run", "build"}, []string{"pnpm", "run", "start"}, true
	case PackageManagerYarn:
		if YarnBerry(version) {
			// Berry refuses Yarn 1's --frozen-lockfile and --non-interactive.
			return []string{"yarn", "install", "--immutable"}, []string{"yarn", "run", "build"}, []string{"yarn", "run", "start"}, true
		}
		return []string{"yarn", "install", "--frozen-lockfile"}, []string{"yarn", "build"}, []string{"yarn", "start"}, true
	case PackageManagerNPM, "":
		install = []string{"npm", "ci"}
		if !locked {
			install = []string{"npm", "install"}
		}
		return install, []string{"npm", "run", "build"}, []string{"npm", "run", "start"}, true
	}
	return nil, nil, nil, false
}

// Command joins command words as a contract's stack states them.
func Command(words []string) string { return strings.Join(words, " ") }
