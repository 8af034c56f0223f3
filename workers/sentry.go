package workers

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/getsentry/sentry-go"

	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/sentrygate"
	"github.com/signoff/signoff/internal/settings"
)

// Environment variables of Sentry.
const (
	// EnvSentryAuthToken (with SENTRY_ORG and SENTRY_PROJECT, optionally SENTRY_URL) makes
	// Sentry the verify queue's runtime gate; a read-only token.
	EnvSentryAuthToken = "SENTRY_AUTH_TOKEN"
	// EnvSentryDSN reports Signoff's own errors to Sentry.
	EnvSentryDSN = "SENTRY_DSN"
)

// NewGate is the verify queue's runtime gate beyond page errors: Sentry when its auth token
// is set (SENTRY_AUTH_TOKEN, with SENTRY_ORG and SENTRY_PROJECT), else nil. A token without
// org and project is an error, not a silent pass. A nil result is a nil interface, never a
// nil *sentrygate.Gate inside one.
func NewGate(s settings.Sentry) (capability.Gate, error) {
	if s.AuthToken == "" {
		return nil, nil
	}
	g, err := sentrygate.New(sentrygate.Config{Token: s.AuthToken, Org: s.Org, Project: s.Project, BaseURL: s.URL})
	if err != nil {
		return nil, fmt.Errorf("%s is set but the Sentry gate cannot start: %w", EnvSentryAuthToken, err)
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
func StartSelfReporting(s settings.Sentry) (*SelfReport, error) {
	flush, err := sentrygate.InitSelfReporting(s.DSN, Release(), s.Environment)
	if err != nil {
		return &SelfReport{flush: func() {}}, err
	}
	return &SelfReport{flush: flush, on: s.DSN != ""}, nil
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
