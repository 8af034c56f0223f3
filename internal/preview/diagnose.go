package preview

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/signoff/signoff/contracts"
)

// A failed step's log is read for the one line that says why and what the requester can do
// about it: "does not build (step deps failed)" and a log path on a server they cannot read
// leaves them nothing to act on.

// diagnosis is a kind of failure a log line shows, and the next step for it.
type diagnosis struct {
	re   *regexp.Regexp
	next string
}

// diagnoses are tried in order against every line; the first kind found anywhere wins, and
// its last matching line is the cause.
var diagnoses = []diagnosis{
	{regexp.MustCompile(`ERR_PNPM_OUTDATED_LOCKFILE|ERR_PNPM_FROZEN_LOCKFILE|YN0028|lockfile would have been modified|can only install packages when your package\.json and package-lock\.json.*are in sync|Your lockfile needs to be updated|lockfile had changes, but lockfile is frozen`),
		"the lockfile does not match package.json at this commit: run the install with your package manager and commit the lockfile it writes"},
	{regexp.MustCompile(`ERR_PNPM_IGNORED_BUILDS|ERR_PNPM_UNSUPPORTED_ENGINE|Unsupported engine|The engine "node" is incompatible|Usage Error: .*(configuration|setting)|ERR_PNPM_BAD_PM_VERSION`),
		"the package manager refuses this repository's settings: declare the release the team uses in package.json's packageManager (for example \"pnpm@9.15.9\") and commit it"},
	{regexp.MustCompile(`^psql:.*\bERROR:`),
		"the SQL in " + contracts.PreviewSeedFile + " fails on the preview's empty PostgreSQL: make it create the tables it fills, and commit it"},
	{regexp.MustCompile(`(?i)ECONNREFUSED (127\.0\.0\.1|::1|localhost)?:?5432|\.s\.PGSQL\.5432|connect to (the )?(postgres|database)|password authentication failed|database "[^"]+" does not exist`),
		"the app connects to a PostgreSQL the preview does not give it: point its variable at the preview's own in " + contracts.PreviewEnvFile + " (for example DATABASE_URL=" + contracts.PostgresURLRef + ") and commit it"},
	{regexp.MustCompile(`ENOTFOUND|EAI_AGAIN|getaddrinfo|ECONNREFUSED|ETIMEDOUT|fetch failed|Failed to fetch|self[- ]signed certificate|unable to get local issuer certificate`),
		"a step reached a host the preview cannot: installs reach the package registry only; vendor what a build downloads (a font, a binary) or make it optional"},
	{regexp.MustCompile(`(?i)(missing|required|not set|undefined).{0,40}\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b.{0,40}(is (missing|required|not set|undefined))|Invalid environment variables`),
		"the build reads an environment variable the preview does not set: give it a default for builds, or declare the non-secret value for previews"},
	{regexp.MustCompile(`Type error:|Failed to compile|Module not found|SyntaxError|Cannot find module|error TS\d+`),
		"the app does not compile at this commit: fix the error above and push, then quote again"},
	{regexp.MustCompile(`(?i)\d+ problems? \(\d+ errors?|✖ \d+ problems?|\berror\s+.*\s(no-|react|@next|@typescript-eslint)/?[\w-]+$`),
		"the repository's lint fails at this commit: fix it, or say in the goal that lint is part of the change"},
	{regexp.MustCompile(`JavaScript heap out of memory|ENOMEM|Killed`),
		"the step ran out of memory in the preview's limits"},
}

// genericCause finds a line that looks like an error when no kind matched.
var genericCause = regexp.MustCompile(`(?i)(error|err!|fail|fatal)`)

// maxDiagnosedLog is how much of a log's end is read.
const maxDiagnosedLog = 64 << 10

// Diagnose reads a failed step's log for the line that shows why and the next step for the
// requester. cause is "" when nothing in the log says; next always says something.
func Diagnose(step string, log []byte) (cause, next string) {
	if len(log) > maxDiagnosedLog {
		log = log[len(log)-maxDiagnosedLog:]
	}
	lines := bytes.Split(log, []byte("\n"))
	for _, d := range diagnoses {
		for i := len(lines) - 1; i >= 0; i-- {
			if l := cleanLine(lines[i]); l != "" && d.re.MatchString(l) {
				return l, d.next
			}
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if l := cleanLine(lines[i]); l != "" && genericCause.MatchString(l) {
			return l, fmt.Sprintf("run the %s step of the repository at this commit and fix what fails", step)
		}
	}
	return "", fmt.Sprintf("the %s step's log says no more; run it at this commit to see why", step)
}

var ansiRe = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)

// cleanLine is a log line as a sentence may quote it: no colour codes, at most 300 bytes.
func cleanLine(b []byte) string {
	l := strings.TrimSpace(ansiRe.ReplaceAllString(string(b), ""))
	l = strings.Trim(l, "➤│└┌ ")
	if len(l) > 300 {
		l = l[:300] + "…"
	}
	return l
}

// diagnoseFile diagnoses a step's log file.
func diagnoseFile(step, path string) (cause, next string) {
	return Diagnose(step, readTail(path))
}

// readTail is the end of a log file that diagnosis reads (nil when it cannot be read).
func readTail(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > maxDiagnosedLog {
		_, _ = f.Seek(fi.Size()-maxDiagnosedLog, io.SeekStart)
	}
	data, _ := io.ReadAll(io.LimitReader(f, maxDiagnosedLog))
	return data
}

// errorCounts read how many errors a check step's log reports, in the forms linters, type
// checkers and test runners print: a summary line first (its last match wins), else
// per-error lines counted.
var (
	errorSummaries = []*regexp.Regexp{
		regexp.MustCompile(`\d+ problems? \((\d+) errors?`),      // ESLint
		regexp.MustCompile(`Found (\d+) errors?\b`),              // tsc
		regexp.MustCompile(`Tests:\s+(\d+) failed`),              // Jest
		regexp.MustCompile(`Tests\s+(\d+) failed`),               // Vitest
		regexp.MustCompile(`^(?:#|ℹ)\s*fail (\d+)$`),             // node --test
		regexp.MustCompile(`^(\d+) failing$`),                    // Mocha
		regexp.MustCompile(`^(\d+) (?:tests? )?failed(?:,| |$)`), // Playwright
	}
	errorLine = regexp.MustCompile(`^\d+:\d+\s+(?:error\b|Error:)`) // ESLint stylish, next lint
)

// CountErrors is how many errors a check step's log reports, 0 when it does not say. The
// preview records it on a failed lint or test step, so a contract can allow the base's own
// failure and no more.
func CountErrors(log []byte) int {
	if len(log) > maxDiagnosedLog {
		log = log[len(log)-maxDiagnosedLog:]
	}
	summary, lines := 0, 0
	for _, raw := range bytes.Split(log, []byte("\n")) {
		l := cleanLine(raw)
		if l == "" {
			continue
		}
		for _, re := range errorSummaries {
			if m := re.FindStringSubmatch(l); m != nil {
				if n, err := strconv.Atoi(m[1]); err == nil && n < 1_000_000 {
					summary = n
				}
				break
			}
		}
		if errorLine.MatchString(l) {
			lines++
		}
	}
	if summary > 0 {
		return summary
	}
	return lines
}

func errorsWord(n int) string {
	switch n {
	case 0:
		return "errors it did not count"
	case 1:
		return "1 error"
	}
	return fmt.Sprintf("%d errors", n)
}
