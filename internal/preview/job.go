package preview

import (
	"errors"
	"fmt"
	"time"

	"github.com/signoff/signoff/contracts"
)

// Step is one timed part of preparing a preview.
type Step struct {
	Name     string        `json:"name"`
	Command  string        `json:"command,omitempty"`
	Status   string        `json:"status"`
	ExitCode int           `json:"exit_code"`
	TimedOut bool          `json:"timed_out,omitempty"`
	Duration time.Duration `json:"duration_ns"`
	Log      string        `json:"log,omitempty"`
	Detail   string        `json:"detail,omitempty"`
	// Cause is the line of a failed step's log that shows why, and Next what the requester
	// can do about it (Diagnose).
	Cause string `json:"cause,omitempty"`
	Next  string `json:"next,omitempty"`
	// Errors is how many errors a failed check step's log counted (CountErrors), and
	// Preexisting that the build went on past it (Options.Preexisting, Options.BaseCheck).
	Errors      int  `json:"errors,omitempty"`
	Preexisting bool `json:"preexisting,omitempty"`
}

// BuildResult is the outcome of checkout, install, build, lint and test.
type BuildResult struct {
	Passed bool   `json:"passed"`
	Steps  []Step `json:"steps"`
	// DirtyFiles lists `git status --porcelain` lines after the build: a
	// build that rewrites tracked files serves code that is not the commit.
	DirtyFiles []string `json:"dirty_files,omitempty"`
}

// Job is a prepared (and, if the build passed, running) preview.
type Job struct {
	// ServicePID and ServiceTicks identify the job's database server (its sandbox's leader)
	// for Stop after a restart, like PID and StartTicks for the app.
	ServicePID   int    `json:"service_pid,omitempty"`
	ServiceTicks uint64 `json:"service_start_ticks,omitempty"`
	// env is the preview environment with the services' addresses; postgresURL the
	// database's, when it runs.
	env         []string
	postgresURL string

	ID   string `json:"id"`
	Slot string `json:"slot,omitempty"`
	// Dir is the work tree that was built.
	Dir string `json:"dir"`
	// AppDir is the folder of the commit that was built ("" for the root).
	AppDir string `json:"app_dir,omitempty"`
	// PackageManager installed, built and started it (npm, pnpm, yarn, bun).
	PackageManager string `json:"package_manager,omitempty"`
	// PackageManagerVersion is the release the contract asked for ("" the pinned one), and
	// PackageManagerRan what ran, by name and version ("pnpm 9.15.9").
	PackageManagerVersion string `json:"package_manager_version,omitempty"`
	PackageManagerRan     string `json:"package_manager_ran,omitempty"`
	// Release and Environment are the app's SENTRY_RELEASE and SENTRY_ENVIRONMENT.
	Release     string `json:"release,omitempty"`
	Environment string `json:"environment,omitempty"`
	// RequestedSHA is the commit asked for; SHA is `git rev-parse HEAD` of
	// the built directory and is what the app was told to serve.
	RequestedSHA string `json:"requested_sha"`
	SHA          string `json:"sha"`
	// URL is Signoff's proxy in front of the app: it answers /__verification with SHA and
	// passes everything else through. AppURL is the app itself (the sandbox's forward).
	URL        string `json:"url,omitempty"`
	AppURL     string `json:"app_url,omitempty"`
	Port       int    `json:"port,omitempty"`
	PID        int    `json:"pid,omitempty"`
	StartTicks uint64 `json:"start_ticks,omitempty"`
	// RuntimeSHA is what /__verification (through the proxy) served when the app came up
	// ("" if it served none: the app claiming another commit, or not answering). The verifier
	// checks it again itself.
	RuntimeSHA string      `json:"runtime_sha,omitempty"`
	Build      BuildResult `json:"build"`
	// ReusedBuild is the job whose build this one started its app from (a re-verification
	// of the same commit in the same slot), or "".
	ReusedBuild string `json:"reused_build,omitempty"`
	Start       Step   `json:"start"`
	Isolation   string `json:"isolation"`
}

// sentryEnv is the error tracker's view of this build: empty when no release was given.
func (j *Job) sentryEnv() []string {
	var env []string
	if j.Release != "" {
		env = append(env, "SENTRY_RELEASE="+j.Release)
	}
	if j.Environment != "" {
		env = append(env, "SENTRY_ENVIRONMENT="+j.Environment)
	}
	return env
}

// InputError reports a bad argument or configuration; retrying cannot help.
type InputError struct {
	Field, Reason string
}

func (e *InputError) Error() string { return "preview: " + e.Field + ": " + e.Reason }

// BuildFailedError means the repository's own install, build, lint or test
// step failed: the attempt is not satisfied. The Job is still returned.
type BuildFailedError struct {
	Step        string
	ExitCode    int
	TimedOut    bool
	Log         string
	Cause, Next string
}

func (e *BuildFailedError) Error() string {
	if e.TimedOut {
		return fmt.Sprintf("preview: %s timed out (log %s)", e.Step, e.Log)
	}
	msg := fmt.Sprintf("preview: %s failed with exit code %d", e.Step, e.ExitCode)
	if e.Cause != "" {
		msg += ": " + e.Cause
	}
	if e.Next != "" {
		msg += "; " + e.Next
	}
	return msg + " (log " + e.Log + ")"
}

// StartError means the built app did not answer on /__verification in time
// or exited: the preview is down.
type StartError struct {
	Reason string
	Log    string
}

func (e *StartError) Error() string {
	return fmt.Sprintf("preview: app did not start: %s (log %s)", e.Reason, e.Log)
}

// ErrSlotBusy is returned when a slot still holds a preview that was not stopped.
var ErrSlotBusy = errors.New("preview: slot is busy")

// Step status values.
const (
	StatusPassed  = "passed"
	StatusFailed  = "failed"
	StatusSkipped = "skipped"
)

// Result is the build as evidence records it: the steps that ran (skipped ones left out),
// how the code was isolated and which package manager release ran.
func (j *Job) Result() contracts.BuildResult {
	b := j.Build
	out := contracts.BuildResult{Passed: b.Passed, Steps: []contracts.BuildStep{}, Sandbox: j.Isolation, PackageManager: j.PackageManagerRan, ReusedBuild: j.ReusedBuild}
	for _, s := range b.Steps {
		if s.Status == StatusSkipped {
			continue
		}
		out.Steps = append(out.Steps, contracts.BuildStep{Name: s.Name, Passed: s.Status == StatusPassed,
			DurationMS: s.Duration.Milliseconds(), Log: s.Log, Cause: s.Cause, Next: s.Next, Errors: s.Errors, Preexisting: s.Preexisting})
	}
	return out
}
