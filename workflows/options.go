package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/workflows/contractapi"
)

// The queues' activity structs, nil: workflow code names an activity by method value
// (control.Publish), which the SDK reads as the method's name; the worker runs that method
// of the struct it registered. A renamed or removed activity then fails to compile here.
var (
	control *activities.Control
	execute *activities.Execute
	verify  *activities.Verify
)

// nonRetryable are error types retrying cannot change.
var nonRetryable = []string{activities.ErrTypeNotConfigured, activities.ErrTypePaymentState, activities.ErrTypeRefused}

// controlCtx: short calls to payment, deliverable, proof store and index; retried with
// backoff, since each is idempotent by key.
func controlCtx(ctx workflow.Context, t contractapi.Timeouts) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           contractapi.ControlQueue,
		StartToCloseTimeout: t.ControlActivity,
		RetryPolicy:         controlRetry(),
	})
}

// controlRetry: backoff from a second to a minute, eight tries, none for what retrying cannot
// change.
func controlRetry() *temporal.RetryPolicy {
	return &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
		MaximumInterval: time.Minute, MaximumAttempts: 8, NonRetryableErrorTypes: nonRetryable}
}

// controlLocalCtx: control activities of a few milliseconds (contractRun.controlQuick), run as
// local activities in the control worker's own workflow task (the workflow runs on the control
// queue), retried as controlCtx retries. Each was a round trip through the server's queues,
// three more history writes and a workflow task (BenchmarkContracts).
func controlLocalCtx(ctx workflow.Context, t contractapi.Timeouts) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: t.ControlActivity,
		RetryPolicy:         controlRetry(),
	})
}

// executeCtx: long work on the repo's code; heartbeats show the worker is alive, and one
// retry covers a worker lost mid-build (every job starts in a fresh directory).
func executeCtx(ctx workflow.Context, t contractapi.Timeouts, limit time.Duration) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           contractapi.ExecuteQueue,
		StartToCloseTimeout: limit,
		HeartbeatTimeout:    t.Heartbeat,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 2 * time.Second, BackoffCoefficient: 2,
			MaximumAttempts: 2, NonRetryableErrorTypes: nonRetryable},
	})
}

// verifyCtx: a browser run over every criterion; a lost worker is retried once.
func verifyCtx(ctx workflow.Context, t contractapi.Timeouts) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           contractapi.VerifyQueue,
		StartToCloseTimeout: 15 * time.Minute,
		HeartbeatTimeout:    t.Heartbeat,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 2 * time.Second, BackoffCoefficient: 2,
			MaximumAttempts: 2, NonRetryableErrorTypes: nonRetryable},
	})
}
