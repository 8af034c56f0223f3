package workers_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/temporal/temporaltest"
	"github.com/signoff/signoff/workers"
)

func TestClassifiedKeepsAWrappedClassification(t *testing.T) {
	refused := capability.Refused(errors.New("the page left the preview's origin"))
	var app *temporal.ApplicationError
	if err := workers.Classified(fmt.Errorf("verify: %w", refused)); !errors.As(err, &app) || err.(*temporal.ApplicationError) == nil ||
		!app.NonRetryable() || app.Type() != activities.ErrTypeRefused || app.Message() != "verify: the page left the preview's origin" {
		t.Errorf("classified %T %v", err, err)
	}
	plain := errors.New("connection reset")
	if err := workers.Classified(fmt.Errorf("x: %w", plain)); errors.As(err, &app) {
		t.Errorf("a plain error became an application error: %v", err)
	}
	if err := workers.Classified(refused); !errors.As(err, &app) || app.Type() != activities.ErrTypeRefused ||
		!app.NonRetryable() || app.Message() != "the page left the preview's origin" {
		t.Errorf("a classified capability error at the top: %T %v", err, err)
	}
	for _, tc := range []struct {
		err error
		typ string
	}{
		{capability.NotConfigured("verifier"), activities.ErrTypeNotConfigured},
		{fmt.Errorf("capture: %w", capability.PaymentStateError(errors.New("canceled"))), activities.ErrTypePaymentState},
	} {
		if err := workers.Classified(tc.err); !errors.As(err, &app) || app.Type() != tc.typ || !app.NonRetryable() {
			t.Errorf("%v: %T %v, want a non-retryable %s", tc.err, err, err, tc.typ)
		}
	}
	top := temporal.NewNonRetryableApplicationError("refused", activities.ErrTypeRefused, nil)
	if err := workers.Classified(top); err != top {
		t.Errorf("an application error at the top changed: %v", err)
	}
}

// On a real server: an activity that wraps a refusal runs once, not until its retry policy
// gives up. Without the worker's classification it runs three times.
func TestWrappedRefusalIsNotRetried(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the embedded Temporal server")
	}
	srv := temporaltest.StartServer(t)
	c := temporaltest.Dial(t, srv)
	var runs atomic.Int32
	wrapped := func(ctx context.Context) error {
		runs.Add(1)
		return fmt.Errorf("preview: %w", capability.Refused(errors.New("repository not on the allowlist")))
	}
	wf := func(ctx workflow.Context) error {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
			RetryPolicy: &temporal.RetryPolicy{InitialInterval: 10 * time.Millisecond, MaximumAttempts: 3}})
		return workflow.ExecuteActivity(ctx, "Wrapped").Get(ctx, nil)
	}
	w := worker.New(c, "classify-test", workers.WorkerOptions())
	w.RegisterActivityWithOptions(wrapped, activity.RegisterOptions{Name: "Wrapped"})
	w.RegisterWorkflowWithOptions(wf, workflow.RegisterOptions{Name: "Classify"})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	run, err := c.ExecuteWorkflow(temporaltest.Context(t), client.StartWorkflowOptions{TaskQueue: "classify-test"}, "Classify")
	if err != nil {
		t.Fatal(err)
	}
	err = run.Get(temporaltest.Context(t), nil)
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != activities.ErrTypeRefused || !app.NonRetryable() {
		t.Errorf("workflow error %v, want the refusal, non-retryable", err)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("the refused activity ran %d times, want once", n)
	}
}
