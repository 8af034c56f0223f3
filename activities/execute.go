package activities

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/signoff/signoff/internal/capability"
)

// Execute holds the execute queue's clients. It may hold a read-only clone token and nothing
// else: no payment key, no write token, no agent seed, no signing key. The repository's own
// code runs only here. Every exported method is an activity under its own name.
type Execute struct {
	Executor capability.Executor
	Previews capability.Previews
	// Allows, when set, is the execute queue's repository allowlist: a preview runs the
	// repository's own install and build scripts, so only allowed repositories are built.
	Allows func(owner, name string) bool
}

// RunExecutor runs the executor for one attempt.
func (e *Execute) RunExecutor(ctx context.Context, req capability.ExecRequest) (capability.ExecResult, error) {
	if e.Executor == nil {
		return capability.ExecResult{}, capability.NotConfigured("executor")
	}
	ctx, stop := heartbeatEvery(ctx, "executor running")
	defer stop()
	res, err := e.Executor.Run(ctx, req)
	if err != nil {
		return capability.ExecResult{}, fmt.Errorf("executor, attempt %d: %w", req.Attempt, err)
	}
	return res, nil
}

// StartPreview builds and starts the app at the attempt's commit.
func (e *Execute) StartPreview(ctx context.Context, req capability.PreviewRequest) (capability.PreviewResult, error) {
	if e.Previews == nil {
		return capability.PreviewResult{}, capability.NotConfigured("preview")
	}
	if e.Allows != nil && !e.Allows(req.Repo.Owner, req.Repo.Name) {
		return capability.PreviewResult{}, capability.Refused(fmt.Errorf("%s is not on the execute queue's repository allowlist", req.Repo.Key()))
	}
	ctx, stop := heartbeatEvery(ctx, "building preview")
	defer stop()
	res, err := e.Previews.Start(ctx, req)
	if err != nil {
		return capability.PreviewResult{}, fmt.Errorf("preview of %s: %w", req.CommitSHA, err)
	}
	return res, nil
}

// StopPreview stops a preview by the PID it recorded.
func (e *Execute) StopPreview(ctx context.Context, previewID string) error {
	if e.Previews == nil || previewID == "" {
		return nil
	}
	return e.Previews.Stop(ctx, previewID)
}

// heartbeatEvery records heartbeats while long work runs, so a dead worker is noticed within
// the heartbeat timeout instead of the start-to-close timeout. The context it returns carries
// the work's own progress (capability.Progress) to the heartbeat's details.
func heartbeatEvery(ctx context.Context, detail string) (context.Context, func()) {
	if !activity.IsActivity(ctx) {
		return ctx, func() {}
	}
	actx := ctx
	ctx = capability.WithProgress(ctx, func(d string) { activity.RecordHeartbeat(actx, d) })
	info := activity.GetInfo(ctx)
	every := info.HeartbeatTimeout / 3
	if every <= 0 {
		return ctx, func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(actx, detail)
			}
		}
	}()
	return ctx, func() { close(done) }
}
