package workers

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/workflows"
)

// Queue names accepted by `signoff worker --queue`.
var Queues = map[string]string{"control": workflows.ControlQueue, "execute": workflows.ExecuteQueue, "verify": workflows.VerifyQueue}

// RegisterControl registers the workflows and the control activities. Workflow tasks run on
// the control queue.
func RegisterControl(r worker.Registry, c *activities.Control) {
	r.RegisterWorkflowWithOptions(workflows.ContractWorkflow, workflow.RegisterOptions{Name: workflows.ContractWorkflowName})
	r.RegisterWorkflowWithOptions(workflows.RepoLockWorkflow, workflow.RegisterOptions{Name: workflows.RepoLockWorkflowName})
	r.RegisterWorkflowWithOptions(workflows.DiscriminateWorkflow, workflow.RegisterOptions{Name: workflows.DiscriminateWorkflowName})
	for name, fn := range map[string]any{
		activities.AuthorizePaymentName: c.AuthorizePayment,
		activities.PaymentStatusName:    c.PaymentStatus,
		activities.CapturePaymentName:   c.CapturePayment,
		activities.CancelPaymentName:    c.CancelPayment,
		activities.PublishName:          c.Publish,
		activities.RecordAttemptName:    c.RecordAttempt,
		activities.RecordSettlementName: c.RecordSettlement,
		activities.PRHeadName:           c.PRHead,
		activities.UpdateIndexName:      c.UpdateIndex,
		activities.NotifyName:           c.Notify,
		activities.RequestLockName:      c.RequestLock,
	} {
		r.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
}

// RegisterExecute registers the execute activities.
func RegisterExecute(r worker.Registry, e *activities.Execute) {
	r.RegisterActivityWithOptions(e.RunExecutor, activity.RegisterOptions{Name: activities.RunExecutorName})
	r.RegisterActivityWithOptions(e.StartPreview, activity.RegisterOptions{Name: activities.StartPreviewName})
	r.RegisterActivityWithOptions(e.StopPreview, activity.RegisterOptions{Name: activities.StopPreviewName})
}

// RegisterVerify registers the verify activities.
func RegisterVerify(r worker.Registry, v *activities.Verify) {
	r.RegisterActivityWithOptions(v.Verify, activity.RegisterOptions{Name: activities.VerifyName})
	r.RegisterActivityWithOptions(v.RuntimeGate, activity.RegisterOptions{Name: activities.RuntimeGateName})
}

// Set is the activity structs of the queues one process runs; nil means not this process.
type Set struct {
	Control *activities.Control
	Execute *activities.Execute
	Verify  *activities.Verify
}

// Start runs a Temporal worker for each non-nil queue of the set and returns a stop function
// that stops them all.
func Start(c client.Client, s Set) (stop func(), err error) {
	var started []worker.Worker
	stop = func() {
		for _, w := range started {
			w.Stop()
		}
	}
	add := func(queue string, register func(worker.Registry)) error {
		w := worker.New(c, queue, worker.Options{})
		register(w)
		if err := w.Start(); err != nil {
			return fmt.Errorf("start %s worker: %w", queue, err)
		}
		started = append(started, w)
		return nil
	}
	if s.Control != nil {
		if err = add(workflows.ControlQueue, func(r worker.Registry) { RegisterControl(r, s.Control) }); err != nil {
			stop()
			return nil, err
		}
	}
	if s.Execute != nil {
		if err = add(workflows.ExecuteQueue, func(r worker.Registry) { RegisterExecute(r, s.Execute) }); err != nil {
			stop()
			return nil, err
		}
	}
	if s.Verify != nil {
		if err = add(workflows.VerifyQueue, func(r worker.Registry) { RegisterVerify(r, s.Verify) }); err != nil {
			stop()
			return nil, err
		}
	}
	if len(started) == 0 {
		return nil, errors.New("no queue to run")
	}
	return stop, nil
}

// Run starts the set and blocks until ctx ends.
func Run(ctx context.Context, c client.Client, s Set) error {
	stop, err := Start(c, s)
	if err != nil {
		return err
	}
	<-ctx.Done()
	stop()
	return nil
}
