package contracts

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// A preview runs the app the way its team does, which often means a few variables (a site
// name, a feature flag, where the database is) and a database. Both are part of the terms:
// the requester approves them with the rest, and every attempt runs with the same ones.

// ServicePostgres is a PostgreSQL server the preview starts for the job, reachable only
// through a socket in the job's sandbox.
const ServicePostgres = "postgres"

// PostgresURLRef in a preview variable's value is replaced by the job's own PostgreSQL
// address (a postgresql:// URL to its socket). The preview also sets PostgresURLVar itself.
const (
	PostgresURLVar = "SIGNOFF_POSTGRES_URL"
	PostgresURLRef = "${" + PostgresURLVar + "}"
)

// Files in the app's folder that say how previews run it.
const (
	// PreviewEnvFile holds the non-secret values previews run with (KEY=value lines), as the
	// requester commits them; the survey proposes them as the contract's preview_env.
	PreviewEnvFile = ".signoff/preview.env"
	// PreviewSeedFile is SQL the preview runs on its throwaway PostgreSQL before the build.
	PreviewSeedFile = ".signoff/preview.sql"
)

// Limits of a preview environment.
const (
	MaxPreviewEnv      = 64
	MaxPreviewEnvValue = 4096
)

var envNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// reservedEnv are variables the preview sets itself: a declaration cannot move where the
// app listens, where its tools and caches are, or what it reports to the error tracker.
var reservedEnv = []string{"PATH", "HOME", "PORT", "HOSTNAME", "NODE_ENV", "TMPDIR", "PWD", "SHELL", "USER",
	"NEXT_TELEMETRY_DISABLED", "SENTRY_RELEASE", "SENTRY_ENVIRONMENT", "LD_PRELOAD", "LD_LIBRARY_PATH"}

var reservedEnvPrefixes = []string{"SIGNOFF_", "npm_", "NPM_", "YARN_", "COREPACK_", "PNPM_", "BUN_"}

// PreviewEnvProblem says why a variable cannot be part of a preview environment, "" when it can.
func PreviewEnvProblem(name, value string) string {
	switch {
	case !envNameRe.MatchString(name):
		return fmt.Sprintf("%q is not a variable name (letters, digits and _, at most 128)", name)
	case slices.Contains(reservedEnv, name):
		return fmt.Sprintf("%s is set by the preview itself", name)
	case len(value) > MaxPreviewEnvValue:
		return fmt.Sprintf("%s: the value is %d bytes, at most %d", name, len(value), MaxPreviewEnvValue)
	case strings.ContainsAny(value, "\x00\n\r"):
		return fmt.Sprintf("%s: the value holds a line break or NUL", name)
	}
	for _, p := range reservedEnvPrefixes {
		if strings.HasPrefix(name, p) {
			return fmt.Sprintf("%s: variables starting %s are set by the preview itself", name, p)
		}
	}
	return ""
}

// PreviewEnvWords are a preview environment as NAME=value words, sorted, with each
// reference to a service's address replaced (postgresURL "" leaves it as written).
func (s Stack) PreviewEnvWords(postgresURL string) []string {
	names := make([]string, 0, len(s.Env))
	for k := range s.Env {
		names = append(names, k)
	}
	slices.Sort(names)
	out := make([]string, 0, len(names))
	for _, k := range names {
		v := s.Env[k]
		if postgresURL != "" {
			v = strings.ReplaceAll(v, PostgresURLRef, postgresURL)
		}
		out = append(out, k+"="+v)
	}
	return out
}
