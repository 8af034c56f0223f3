// Package contractclient is the one client side of the contract workflow: how a contract is
// started (one workflow id policy, one set of start options), approved (the approve update,
// which answers at once), cancelled, read and watched, and how other signals reach it. The
// CLI, the chat, the prepared runs and the webhooks all go through it; none of them names a
// workflow id, a signal or a query itself.
package contractclient

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/workflows/contractapi"
)

// Temporal is the part of the Temporal client the contract client uses. client.Client
// implements it; tests may fake it.
type Temporal interface {
	ExecuteWorkflow(ctx context.Context, options client.StartWorkflowOptions, workflow interface{}, args ...interface{}) (client.WorkflowRun, error)
	UpdateWorkflow(ctx context.Context, options client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error)
	Signaler
	Querier
}

// Signaler is the part of the Temporal client that only signals: the webhooks and the PR head
// watcher hold no more.
type Signaler interface {
	SignalWorkflow(ctx context.Context, workflowID, runID, signalName string, arg interface{}) error
}

// Querier is the part of the Temporal client that only reads status (the local test
// checkout, web.CompleteTestCheckout, holds no more).
type Querier interface {
	QueryWorkflow(ctx context.Context, workflowID, runID, queryType string, args ...interface{}) (converter.EncodedValue, error)
}

// Client reaches contract workflows. Its signals are the embedded Signals' methods.
type Client struct {
	t Temporal
	Signals
}

// New wraps a Temporal client.
func New(t Temporal) *Client { return &Client{t: t, Signals: Signals{s: t}} }

// Signals sends a contract workflow's signals, one method per signal, so each takes the
// argument type its handler decodes. Holders of a Signaler only (the webhooks, the PR head
// watcher) use it through NewSignals.
type Signals struct{ s Signaler }

// NewSignals wraps the signalling part of a Temporal client.
func NewSignals(s Signaler) Signals { return Signals{s: s} }

func (s Signals) send(ctx context.Context, contractID, name string, arg any) error {
	return s.s.SignalWorkflow(ctx, contractapi.WorkflowID(contractID), "", name, arg)
}

// Cancel asks the workflow to cancel the contract.
func (s Signals) Cancel(ctx context.Context, contractID string, cancel contractapi.Cancel) error {
	return s.send(ctx, contractID, contractapi.SignalCancel, cancel)
}

// PaymentAuthorized tells the workflow the checkout completed; it confirms with the provider.
func (s Signals) PaymentAuthorized(ctx context.Context, contractID string, p contractapi.PaymentAuthorized) error {
	return s.send(ctx, contractID, contractapi.SignalPaymentAuthorized, p)
}

// PRHeadChanged reports a new head on the contract's PR.
func (s Signals) PRHeadChanged(ctx context.Context, contractID string, h contractapi.PRHeadChanged) error {
	return s.send(ctx, contractID, contractapi.SignalPRHeadChanged, h)
}

// Operator sends an operator's decision on a paused contract: SignalRetryVerification or
// SignalAbandon (the prepared runs name theirs in run.json); any other name is refused.
func (s Signals) Operator(ctx context.Context, contractID, signal string, op contractapi.Operator) error {
	switch signal {
	case contractapi.SignalRetryVerification, contractapi.SignalAbandon:
		return s.send(ctx, contractID, signal, op)
	}
	return fmt.Errorf("%q is not an operator's decision (%s or %s)", signal,
		contractapi.SignalRetryVerification, contractapi.SignalAbandon)
}

// StartOptions are the options of every start of a ContractWorkflow, set here only: one
// workflow per contract id, ever. An id that has a workflow in any state (running,
// completed, failed, cancelled, terminated) is refused with
// serviceerror.WorkflowExecutionAlreadyStarted; a settled contract is never run again
// under its own id, and a running one never gets a second start. A new quote is a new
// contract id.
func StartOptions(contractID string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                                       contractapi.WorkflowID(contractID),
		TaskQueue:                                contractapi.ControlQueue,
		WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy:                 enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
	}
}

// AlreadyStarted reports whether err is a start's refusal of a workflow id that has a
// workflow already (Start's of a contract id, in any state; the chat's quote and the keyed
// base check use it for theirs too).
func AlreadyStarted(err error) bool {
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	return errors.As(err, &started)
}

// Start starts the contract's workflow in state quoted. A contract id that has a workflow
// already fails with *serviceerror.WorkflowExecutionAlreadyStarted (see StartOptions).
func (c *Client) Start(ctx context.Context, in contractapi.ContractInput) (client.WorkflowRun, error) {
	return c.t.ExecuteWorkflow(ctx, StartOptions(in.Quote.Contract.ContractID), contractapi.ContractWorkflowName, in)
}

// ErrNotAnswered is an approval the workflow did not answer before ctx ended (no worker
// running the workflow, say). The update may still be taken later; read the status.
var ErrNotAnswered = errors.New("the workflow has not answered the approval yet")

// Approve asks the workflow to take an approval and returns its answer at once. A refusal
// is a *contractapi.ApprovalRefusal (errors.As), whatever refused it: the workflow (wrong hash,
// not the requester, already approved), or a workflow that has ended (expired, cancelled).
// An approval not answered within ctx is ErrNotAnswered (errors.Is).
func (c *Client) Approve(ctx context.Context, contractID string, a contractapi.Approve) (contractapi.ApproveResult, error) {
	var res contractapi.ApproveResult
	h, err := c.t.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: contractapi.WorkflowID(contractID), UpdateName: contractapi.UpdateApprove,
		Args: []interface{}{a}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = h.Get(ctx, &res)
	}
	if err == nil {
		return res, nil
	}
	if r := refusalOf(err); r != nil {
		return res, r
	}
	var timeout *client.WorkflowUpdateServiceTimeoutOrCanceledError
	if errors.As(err, &timeout) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return res, fmt.Errorf("approve %s: %w (%v)", contractID, ErrNotAnswered, err)
	}
	var nf *serviceerror.NotFound
	if !errors.As(err, &nf) {
		return res, fmt.Errorf("approve %s: %w", contractID, err)
	}
	// No running workflow: say why from its last status, when there is one.
	st, serr := c.Status(ctx, contractID)
	if serr != nil {
		return res, NotFound(contractID, err)
	}
	return res, closedRefusal(st)
}

// refusalOf reads the workflow's typed refusal out of an update's failure.
func refusalOf(err error) *contractapi.ApprovalRefusal {
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != contractapi.ApprovalRefusedError {
		return nil
	}
	r := &contractapi.ApprovalRefusal{}
	if app.Details(r) != nil || r.Code == "" {
		r.Reason = app.Message()
	}
	return r
}

// closedRefusal is the refusal of an approval sent to a contract whose workflow has ended.
func closedRefusal(st contractapi.Status) *contractapi.ApprovalRefusal {
	switch st.State {
	case contracts.StateExpired:
		return &contractapi.ApprovalRefusal{Code: contractapi.RefusedExpired, Reason: fmt.Sprintf("the quote of %s expired", st.ContractID)}
	case contracts.StateCancelled:
		if !hasEvent(st, "approved") {
			return &contractapi.ApprovalRefusal{Code: contractapi.RefusedCancelled, Reason: fmt.Sprintf("contract %s was cancelled", st.ContractID)}
		}
	}
	return &contractapi.ApprovalRefusal{Code: contractapi.RefusedAlreadyApproved,
		Reason: fmt.Sprintf("contract %s has ended (%s)", st.ContractID, st.State)}
}

func hasEvent(st contractapi.Status, typ string) bool {
	for _, e := range st.Timeline {
		if e.Type == typ {
			return true
		}
	}
	return false
}

// Status reads the contract's status. A workflow that has not run its first task yet
// answers with an empty status, which is an error here.
func (c *Client) Status(ctx context.Context, contractID string) (contractapi.Status, error) {
	return Status(ctx, c.t, contractID)
}

// Status is Client.Status for a holder of a Querier only.
func Status(ctx context.Context, q Querier, contractID string) (contractapi.Status, error) {
	v, err := q.QueryWorkflow(ctx, contractapi.WorkflowID(contractID), "", contractapi.QueryStatus)
	if err != nil {
		return contractapi.Status{}, err
	}
	var st contractapi.Status
	if err := v.Get(&st); err != nil {
		return contractapi.Status{}, fmt.Errorf("decode status of %s: %w", contractID, err)
	}
	if st.ContractID == "" {
		return st, fmt.Errorf("status of %s is empty", contractID)
	}
	return st, nil
}

// Watch reads the status every interval and hands each to seen, until seen returns true,
// the contract is final (seen has had the final status), the status cannot be read, or ctx
// ends. It returns the last status read.
func (c *Client) Watch(ctx context.Context, contractID string, every time.Duration, seen func(contractapi.Status) bool) (contractapi.Status, error) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		st, err := c.Status(ctx, contractID)
		if err != nil {
			return st, err
		}
		if seen(st) || st.Final {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-tick.C:
		}
	}
}

// NotFound words a missing workflow for people; other errors pass unchanged.
func NotFound(contractID string, err error) error {
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return fmt.Errorf("no contract %q (no workflow %s)", contractID, contractapi.WorkflowID(contractID))
	}
	return err
}

// PollerType is what a worker of queue polls the server for: workflow tasks on the control
// queue, which runs the workflows, and activity tasks on the execute and verify queues. A queue
// counts as served when the server lists a poller of this type on it.
func PollerType(queue string) enumspb.TaskQueueType {
	if queue == contractapi.ControlQueue {
		return enumspb.TASK_QUEUE_TYPE_WORKFLOW
	}
	return enumspb.TASK_QUEUE_TYPE_ACTIVITY
}
