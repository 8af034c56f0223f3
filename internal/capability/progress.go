package capability

import "context"

type progressKey struct{}

// WithProgress returns a context whose Progress calls report: the activities adapter puts a
// heartbeat there, so long work says where it is without importing Temporal.
func WithProgress(ctx context.Context, report func(detail string)) context.Context {
	return context.WithValue(ctx, progressKey{}, report)
}

// Progress reports how far long work got, when the caller asked to hear it.
func Progress(ctx context.Context, detail string) {
	if report, ok := ctx.Value(progressKey{}).(func(string)); ok && report != nil {
		report(detail)
	}
}
