package sentrygate

import (
	"fmt"
	"time"

	"github.com/getsentry/sentry-go"
)

// FlushTimeout bounds how long shutdown waits for queued reports.
const FlushTimeout = 2 * time.Second

// InitSelfReporting sends Signoff's own errors to Sentry when a DSN is set [SENTRY_DSN],
// tagged with Signoff's release and environment (SENTRY_ENVIRONMENT; "" is "signoff"). Call the returned flush before the process exits. Without a DSN it does
// nothing and flush is a no-op. The SDK's defaults send no personal data.
func InitSelfReporting(dsn, release, env string) (flush func(), err error) {
	if dsn == "" {
		return func() {}, nil
	}
	if env == "" {
		env = "signoff"
	}
	if err := sentry.Init(sentry.ClientOptions{Dsn: dsn, Release: release, Environment: env, AttachStacktrace: true}); err != nil {
		return func() {}, fmt.Errorf("sentry: init self-reporting: %w", err)
	}
	return func() { sentry.Flush(FlushTimeout) }, nil
}
