package activities

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
)

// Executor makes one attempt's change with a black-box coding CLI (or stored patches) in a
// fresh job directory, on branch signoff/<slug>, and commits what changed.
type Executor interface {
	Run(ctx context.Context, req ExecRequest) (ExecResult, error)
}

// Previews builds the app at a commit and serves it for the verifier.
type Previews interface {
	Start(ctx context.Context, req PreviewRequest) (PreviewResult, error)
	Stop(ctx context.Context, previewID string) error
}

// Execute holds the execute queue's clients. It may hold a read-only clone token and nothing
// else: no payment key, no write token, no agent seed, no signing key. The repository's own
// code runs only here. Every exported method is an activity under its own name.
type Execute struct {
	Executor Executor
	Previews Previews
	// Allows, when set, is the execute queue's repository allowlist: a preview runs the
	// repository's own install and build scripts, so only allowed repositories are built.
	Allows func(owner, name string) bool
}

// RunExecutor runs the executor for one attempt.
func (e *Execute) RunExecutor(ctx context.Context, req ExecRequest) (ExecResult, error) {
	if e.Executor == nil {
		return ExecResult{}, NotConfigured("executor")
	}
	stop := heartbeatEvery(ctx, "executor running")
	defer stop()
	res, err := e.Executor.Run(ctx, req)
	if err != nil {
		return ExecResult{}, fmt.Errorf("executor, attempt %d: %w", req.Attempt, err)
	}
	return res, nil
}

// StartPreview builds and starts the app at the attempt's commit.
func (e *Execute) StartPreview(ctx context.Context, req PreviewRequest) (PreviewResult, error) {
	if e.Previews == nil {
		return PreviewResult{}, NotConfigured("preview")
	}
	if e.Allows != nil && !e.Allows(req.Repo.Owner, req.Repo.Name) {
		return PreviewResult{}, Refused(fmt.Errorf("%s is not on the execute queue's repository allowlist", req.Repo.Key()))
	}
	stop := heartbeatEvery(ctx, "building preview")
	defer stop()
	res, err := e.Previews.Start(ctx, req)
	if err != nil {
		return PreviewResult{}, fmt.Errorf("preview of %s: %w", req.CommitSHA, err)
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
// the heartbeat timeout instead of the start-to-close timeout.
func heartbeatEvery(ctx context.Context, detail string) func() {
	if !activity.IsActivity(ctx) {
		return func() {}
	}
	info := activity.GetInfo(ctx)
	every := info.HeartbeatTimeout / 3
	if every <= 0 {
		return func() {}
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
				activity.RecordHeartbeat(ctx, detail)
			}
		}
	}()
	return func() { close(done) }
}
