package github

import (
	"context"
	"strings"
	"testing"
)

// The token reaches git only through its environment (GIT_CONFIG_*), which other local
// users cannot read; argv, which ps shows to everyone, never holds it.
func TestPushKeepsTheTokenOutOfArgv(t *testing.T) {
	const tok = "ghp_secret_value_123"
	cmd := pushCommand(context.Background(), t.TempDir(), "https://github.com/", "octocat", "Hello-World", strings.Repeat("a", 40), "signoff/c-watchlist", tok)
	auth := basicAuth(tok)
	for _, a := range cmd.Args {
		if strings.Contains(a, tok) || strings.Contains(a, auth) {
			t.Fatalf("argv holds the token: %q", cmd.Args)
		}
	}
	env := strings.Join(cmd.Env, "\n")
	if !strings.Contains(env, "GIT_CONFIG_KEY_0=http.https://github.com/.extraHeader\nGIT_CONFIG_VALUE_0=Authorization: Basic "+auth) {
		t.Fatalf("env:\n%s", env)
	}
	if got := redact("fatal: header Authorization: Basic "+auth+" and "+tok, tok); strings.Contains(got, tok) || strings.Contains(got, auth) {
		t.Fatalf("redact left the token: %s", got)
	}
}
