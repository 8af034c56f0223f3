package activities

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
)

// Control holds the control queue's clients: the only queue that may hold the payment key,
// the GitHub write token and the agent seed. Every exported method is an activity under its
// own name (workers.RegisterControl registers the struct), so helpers stay unexported.
type Control struct {
	Payments  capability.Payments
	Deliverer capability.Deliverer
	Proofs    capability.ProofStore
	Index     capability.Index
	Notifier  capability.Notifier
	// BundleKey signs bundles; it is the control worker's own key, not the verifier's.
	BundleKey ed25519.PrivateKey
	// Temporal reaches the per-repo lock workflow.
	Temporal client.Client
	// Comment renders the PR comment from the bundle, with the same template set as the
	// proof page and the chat summary; nil leaves each deliverer its plain summary.
	Comment func(b contracts.Bundle, c contracts.Contract) string
}

// AuthorizePayment creates the checkout for the contract's fixed price.
func (c *Control) AuthorizePayment(ctx context.Context, req capability.AuthorizeRequest) (capability.PaymentState, error) {
	if c.Payments == nil {
		return capability.PaymentState{}, capability.NotConfigured("payment")
	}
	st, err := c.Payments.Authorize(ctx, req)
	if err != nil {
		return capability.PaymentState{}, fmt.Errorf("authorize payment for %s: %w", req.ContractID, err)
	}
	return st, nil
}

// PaymentStatus reads the authorization, for when no webhook arrives.
func (c *Control) PaymentStatus(ctx context.Context, contractHash, sessionID string) (capability.PaymentState, error) {
	if c.Payments == nil {
		return capability.PaymentState{}, capability.NotConfigured("payment")
	}
	return c.Payments.Status(ctx, contractHash, sessionID)
}

// CapturePayment captures on a satisfied verdict.
func (c *Control) CapturePayment(ctx context.Context, a capability.PaymentAction) (capability.PaymentState, error) {
	if c.Payments == nil {
		return capability.PaymentState{}, capability.NotConfigured("payment")
	}
	return c.Payments.Capture(ctx, a)
}

// CancelPayment cancels the authorization on every other ending.
func (c *Control) CancelPayment(ctx context.Context, a capability.PaymentAction) (capability.PaymentState, error) {
	if c.Payments == nil {
		return capability.PaymentState{}, capability.NotConfigured("payment")
	}
	return c.Payments.Cancel(ctx, a)
}

// Publish pushes the attempt's commit and opens or updates the PR.
func (c *Control) Publish(ctx context.Context, req capability.PublishRequest) (contracts.PRRef, error) {
	if c.Deliverer == nil {
		return contracts.PRRef{}, capability.NotConfigured("deliverable")
	}
	return c.Deliverer.Publish(ctx, req)
}

// RecordAttempt signs and stores the attempt's bundle, then reports it on the deliverable.
func (c *Control) RecordAttempt(ctx context.Context, req capability.RecordRequest) (capability.RecordResult, error) {
	if c.Proofs == nil || len(c.BundleKey) == 0 {
		return capability.RecordResult{}, capability.NotConfigured("proof store")
	}
	b := req.Bundle
	// The base screenshots a reviewer compares with the implementation's are covered by the
	// bundle's signature, as the attempt's are, when the base check left its evidence.
	if br, ok := c.Proofs.(capability.BaseRefs); ok && b.Base == nil {
		ref, err := br.BaseRef(ctx, b.ContractID, b.ContractHash, b.BaseSHA)
		if err != nil {
			return capability.RecordResult{}, fmt.Errorf("bind the base check: %w", err)
		}
		b.Base = ref
	}
	if err := b.Sign(c.BundleKey); err != nil {
		return capability.RecordResult{}, fmt.Errorf("sign bundle: %w", err)
	}
	res, err := c.Proofs.WriteBundle(ctx, req.Contract, b)
	if err != nil {
		return capability.RecordResult{}, fmt.Errorf("write bundle: %w", err)
	}
	if c.Deliverer != nil {
		comment := ""
		if c.Comment != nil {
			comment = c.Comment(b, req.Contract)
		}
		if _, err := c.Deliverer.Report(ctx, b, req.Final, comment); err != nil {
			return capability.RecordResult{}, fmt.Errorf("report on deliverable: %w", err)
		}
	}
	return res, nil
}

// RecordSettlement signs and stores how the contract ended, beside its attempts' bundles,
// and returns where.
func (c *Control) RecordSettlement(ctx context.Context, s contracts.Settlement) (string, error) {
	if c.Proofs == nil || len(c.BundleKey) == 0 {
		return "", capability.NotConfigured("proof store")
	}
	s.SchemaVersion = contracts.SettlementSchema
	if err := s.Sign(c.BundleKey); err != nil {
		return "", fmt.Errorf("sign settlement: %w", err)
	}
	path, err := c.Proofs.WriteSettlement(ctx, s)
	if err != nil {
		return "", fmt.Errorf("write settlement: %w", err)
	}
	return path, nil
}

// PRHead reads the deliverable's head commit.
func (c *Control) PRHead(ctx context.Context, req capability.HeadRequest) (string, error) {
	if c.Deliverer == nil {
		return "", capability.NotConfigured("deliverable")
	}
	return c.Deliverer.Head(ctx, req)
}

// UpdateIndex records the contract's state in the index.
func (c *Control) UpdateIndex(ctx context.Context, e capability.IndexEntry) error {
	if c.Index == nil {
		return nil
	}
	return c.Index.Put(e)
}

// Notify sends a progress message; a failed notice never fails the contract.
func (c *Control) Notify(ctx context.Context, n capability.Notice) error {
	if c.Notifier == nil {
		return nil
	}
	if err := c.Notifier.Notify(ctx, n); err != nil {
		activity.GetLogger(ctx).Warn("notice not delivered", "contract", n.ContractID, "error", err)
	}
	return nil
}

// RequestLock asks the per-repo lock workflow for the lock, starting it when needed. The
// lock workflow answers with a signal to the requester.
func (c *Control) RequestLock(ctx context.Context, req capability.LockRequest) error {
	if c.Temporal == nil {
		return capability.NotConfigured("temporal client")
	}
	_, err := c.Temporal.SignalWithStartWorkflow(ctx, req.LockWorkflowID, req.Signal, req.RequesterWorkflowID,
		client.StartWorkflowOptions{ID: req.LockWorkflowID, TaskQueue: req.TaskQueue}, req.LockWorkflowType, req.RepoKey)
	if err != nil {
		return fmt.Errorf("request lock %s: %w", req.LockWorkflowID, err)
	}
	return nil
}

// AcquireLock asks the per-repo lock workflow for the lock with an update, starting the lock
// workflow when none runs, and reports whether the requester holds it now. A free lock is
// granted in the answer, with no signal back and no workflow task on either side; a queued
// requester is told its turn by signal, as RequestLock's are. A lock workflow started before
// it took updates has no handler and rejects the update; the request then goes as
// RequestLock's does.
func (c *Control) AcquireLock(ctx context.Context, req capability.LockRequest) (bool, error) {
	if c.Temporal == nil {
		return false, capability.NotConfigured("temporal client")
	}
	start := c.Temporal.NewWithStartWorkflowOperation(client.StartWorkflowOptions{ID: req.LockWorkflowID, TaskQueue: req.TaskQueue,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING}, req.LockWorkflowType, req.RepoKey)
	h, err := c.Temporal.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{StartWorkflowOperation: start,
		UpdateOptions: client.UpdateWorkflowOptions{UpdateID: req.UpdateID, UpdateName: req.Update,
			Args: []any{req.RequesterWorkflowID}, WaitForStage: client.WorkflowUpdateStageCompleted}})
	var granted bool
	if err == nil {
		err = h.Get(ctx, &granted)
	}
	switch {
	case err == nil:
		return granted, nil
	case strings.Contains(err.Error(), "unknown update "+req.Update):
		return false, c.RequestLock(ctx, req)
	}
	return false, fmt.Errorf("acquire lock %s: %w", req.LockWorkflowID, err)
}

// ReleaseLock gives the lock back by signal. A lock workflow that has ended holds nothing to
// give back (its lease ran out, or it never granted this requester).
func (c *Control) ReleaseLock(ctx context.Context, rel capability.LockRelease) error {
	if c.Temporal == nil {
		return capability.NotConfigured("temporal client")
	}
	err := c.Temporal.SignalWorkflow(ctx, rel.LockWorkflowID, "", rel.Signal, rel.RequesterWorkflowID)
	var gone *serviceerror.NotFound
	if err != nil && !errors.As(err, &gone) {
		return fmt.Errorf("release lock %s: %w", rel.LockWorkflowID, err)
	}
	return nil
}
