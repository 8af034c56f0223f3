package settings

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestDefaults(t *testing.T) {
	s := Defaults()
	if s.DataDir != ".signoff" || s.Authoring.RateLimit != 20 || s.Executor.Timeout != 25*time.Minute || s.HeartbeatTimeout != time.Minute ||
		s.Executor.Network != "egress" || s.Browser.RealTimeFactor != 2 || s.Sentry.Environment != "signoff" ||
		!slices.Equal(s.Authoring.RepoAllowlist, []string{"signoff-fixtures/*", "local/*"}) {
		t.Fatalf("defaults: %+v", s)
	}
	if s.Stripe.SecretKey != "" || s.Executor.Command != "" || s.Browser.AllowNoSandbox {
		t.Fatalf("a service is on by default: %+v", s)
	}
}

func TestLoadReadsEachGroup(t *testing.T) {
	s, err := Load(env("SIGNOFF_DATA_DIR", "/d", "SIGNOFF_RATE_LIMIT", "0", "SIGNOFF_REPO_ALLOWLIST", "acme/*, local/*",
		"SIGNOFF_EXECUTOR_PASS_ENV", "OPENAI_API_KEY ANTHROPIC_API_KEY,X", "SIGNOFF_EXECUTOR_TIMEOUT", "90s",
		"SIGNOFF_EXECUTOR_STDIN", "1", "SIGNOFF_ALLOW_NO_BROWSER_SANDBOX", "1", "SIGNOFF_VERIFY_REAL_TIME_FACTOR", " 5 ",
		"STRIPE_SECRET_KEY", "sk_test_x", "GITHUB_BASE_BRANCH", "trunk", "AGENTVERSE_TEAM", "t",
		"SIGNOFF_HEARTBEAT_TIMEOUT", "5s"))
	if err != nil {
		t.Fatal(err)
	}
	if s.DataDir != "/d" || s.Authoring.RateLimit != 0 || !slices.Equal(s.Authoring.RepoAllowlist, []string{"acme/*", "local/*"}) ||
		!slices.Equal(s.Executor.PassEnv, []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "X"}) || s.Executor.Timeout != 90*time.Second ||
		!s.Executor.Stdin || !s.Browser.AllowNoSandbox || s.Browser.RealTimeFactor != 5 || s.Stripe.SecretKey != "sk_test_x" ||
		s.GitHub.BaseBranch != "trunk" || s.Chat.AgentverseTeam != "t" || s.HeartbeatTimeout != 5*time.Second {
		t.Fatalf("loaded: %+v", s)
	}
}

// A bad value names its variable and what it wants, keeps its default, and does not stop the
// other variables from being read.
func TestLoadRefusesBadValues(t *testing.T) {
	for name, bad := range map[string]string{
		"SIGNOFF_RATE_LIMIT":               "-1",
		"SIGNOFF_VERIFY_REAL_TIME_FACTOR":  "NaN",
		"SIGNOFF_EXECUTOR_TIMEOUT":         "25",
		"SIGNOFF_EXECUTOR_NETWORK":         "host",
		"SIGNOFF_EXECUTOR_STDIN":           "yes please",
		"SIGNOFF_ALLOW_NO_BROWSER_SANDBOX": "maybe",
		"SIGNOFF_HEARTBEAT_TIMEOUT":        "2s",
	} {
		s, err := Load(env(name, bad, "SIGNOFF_DATA_DIR", "/kept"))
		if err == nil || !strings.Contains(err.Error(), "$"+name+"=") || !strings.Contains(err.Error(), "want ") {
			t.Errorf("%s=%q: err %v", name, bad, err)
		}
		if s.DataDir != "/kept" {
			t.Errorf("%s=%q: the other variables were not read", name, bad)
		}
		d := Defaults()
		if name == "SIGNOFF_RATE_LIMIT" && s.Authoring.RateLimit != d.Authoring.RateLimit ||
			name == "SIGNOFF_VERIFY_REAL_TIME_FACTOR" && s.Browser.RealTimeFactor != d.Browser.RealTimeFactor ||
			name == "SIGNOFF_EXECUTOR_NETWORK" && s.Executor.Network != d.Executor.Network ||
			name == "SIGNOFF_HEARTBEAT_TIMEOUT" && s.HeartbeatTimeout != d.HeartbeatTimeout {
			t.Errorf("%s=%q: the bad value was kept: %+v", name, bad, s)
		}
	}
	_, err := Load(env("SIGNOFF_RATE_LIMIT", "x", "SIGNOFF_EXECUTOR_TIMEOUT", "y"))
	if err == nil || !strings.Contains(err.Error(), "SIGNOFF_RATE_LIMIT") || !strings.Contains(err.Error(), "SIGNOFF_EXECUTOR_TIMEOUT") {
		t.Errorf("two bad values: %v", err)
	}
}

// The README's configuration table and the struct list the same variables: a variable added
// to one and not the other fails here.
func TestReadmeTableMatchesSettings(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(raw), "\n## Configuration\n")
	if !ok {
		t.Fatal("README has no ## Configuration section")
	}
	table, _, _ = strings.Cut(table, "\n## ")
	name := regexp.MustCompile("`([A-Z][A-Z0-9_]+)(=[^`]*)?`")
	documented := map[string]bool{}
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " | ")
		for _, m := range name.FindAllStringSubmatch(first, -1) {
			documented[m[1]] = true
		}
	}
	read := map[string]bool{}
	for _, n := range Names() {
		if read[n] {
			t.Errorf("%s is read by two fields", n)
		}
		read[n] = true
		if !documented[n] {
			t.Errorf("%s is read but not in the README's configuration table", n)
		}
	}
	for n := range documented {
		if !read[n] {
			t.Errorf("the README's configuration table lists %s, which Settings does not read", n)
		}
	}
}
