package workers

import (
	"context"
	"errors"
	"runtime/debug"

	"github.com/getsentry/sentry-go"

	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/sentrygate"
)

// Environment variables of Sentry.
const (
	// EnvSentryAuthToken (with SENTRY_ORG and SENTRY_PROJECT, optionally SENTRY_URL) makes
	// Sentry the verify queue's runtime gate; a read-only token.
	EnvSentryAuthToken = "SENTRY_AUTH_TOKEN"
	// EnvSentryDSN reports Signoff's own errors to Sentry.
	EnvSentryDSN = "SENTRY_DSN"
)

// NewGate is the verify queue's runtime gate beyond page errors: Sentry when
// SENTRY_AUTH_TOKEN is set (with SENTRY_ORG and SENTRY_PROJECT), else nil. A nil result is a
// nil interface, never a nil *sentrygate.Gate inside one.
func NewGate(getenv func(string) string) (capability.Gate, error) {
	g, err := sentrygate.FromEnv(envOrNone(getenv))
	if err != nil {
		return nil, err
	}
	if g == nil {
		return nil, nil
	}
	return g, nil
}

// SelfReport sends Signoff's own errors to Sentry when SENTRY_DSN is set; otherwise every
// method does nothing.
type SelfReport struct {
	flush func()
	on    bool
}

// StartSelfReporting initialises Sentry for this process when SENTRY_DSN is set.
func StartSelfReporting(getenv func(string) string) (*SelfReport, error) {
	dsn := envOrNone(getenv)(EnvSentryDSN)
	flush, err := sentrygate.InitSelfReporting(dsn, Release())
	if err != nil {
		return &SelfReport{flush: func() {}}, err
	}
	return &SelfReport{flush: flush, on: dsn != ""}, nil
}

// Report sends err (nil is ignored).
func (r *SelfReport) Report(err error) {
	if r == nil || !r.on || err == nil || errors.Is(err, context.Canceled) {
		return
	}
	sentry.CaptureException(err)
}

// Close flushes queued reports; call it before the process exits.
func (r *SelfReport) Close() {
	if r != nil && r.flush != nil {
		r.flush()
	}
}

// Release names this build for error reports: signoff@<vcs revision>.
func Release() string {
	rev := "dev"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				rev = s.Value[:12]
			}
		}
	}
	return "signoff@" + rev
}
