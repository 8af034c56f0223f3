package activities

import (
	"context"
	"crypto/ed25519"
	"fmt"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"

	"github.com/signoff/signoff/contracts"
)

// Payments authorizes, captures and cancels with manual capture. Implementations must be
// idempotent by contract hash and action, so a retried activity never double-captures.
type Payments interface {
	Authorize(ctx context.Context, req AuthorizeRequest) (PaymentState, error)
	Status(ctx context.Context, contractHash, sessionID string) (PaymentState, error)
	Capture(ctx context.Context, a PaymentAction) (PaymentState, error)
	Cancel(ctx context.Context, a PaymentAction) (PaymentState, error)
}

// Deliverer publishes commits: a GitHub PR when configured, a local bare remote otherwise.
type Deliverer interface {
	Publish(ctx context.Context, req PublishRequest) (contracts.PRRef, error)
	// Report posts the proof comment (comment, when not empty, is its body: the shared
	// template's rendering) and sets the commit status on the final verdict.
	Report(ctx context.Context, b contracts.Bundle, final bool, comment string) (contracts.PRRef, error)
	Head(ctx context.Context, req HeadRequest) (string, error)
}

// ProofStore keeps bundles and artifacts, addressed by contract and attempt: in the control
// worker's proof folder, and in the artifact store the workers share.
type ProofStore interface {
	WriteBundle(ctx context.Context, c contracts.Contract, b contracts.Bundle) (RecordResult, error)
	WriteSettlement(ctx context.Context, s contracts.Settlement) (string, error)
}

// BaseRefs is a proof store that can bind a contract's base check to its bundles: the
// evidence the verifier left in the contract's base folder for this contract hash and base
// commit, or nil when there is none.
type BaseRefs interface {
	BaseRef(ctx context.Context, contractID, contractHash, baseSHA string) (*contracts.BaseRef, error)
}

// Index is the contract index that outlives workflow retention.
type Index interface {
	Put(e IndexEntry) error
}

// Notifier sends short progress messages to the requester.
type Notifier interface {
	Notify(ctx context.Context, n Notice) error
}

// Control holds the control queue's clients: the only queue that may hold the payment key,
// the GitHub write token and the agent seed. Every exported method is an activity under its
// own name (workers.RegisterControl registers the struct), so helpers stay unexported.
type Control struct {
	Payments  Payments
	Deliverer Deliverer
	Proofs    ProofStore
	Index     Index
	Notifier  Notifier
	// BundleKey signs bundles; it is the control worker's own key, not the verifier's.
	BundleKey ed25519.PrivateKey
	// Temporal reaches the per-repo lock workflow.
	Temporal client.Client
	// Comment renders the PR comment from the bundle, with the same template set as the
	// proof page and the chat summary; nil leaves each deliverer its plain summary.
	Comment func(b contracts.Bundle, c contracts.Contract) string
}

// AuthorizePayment creates the checkout for the contract's fixed price.
func (c *Control) AuthorizePayment(ctx context.Context, req AuthorizeRequest) (PaymentState, error) {
	if c.Payments == nil {
		return PaymentState{}, NotConfigured("payment")
	}
	st, err := c.Payments.Authorize(ctx, req)
	if err != nil {
		return PaymentState{}, fmt.Errorf("authorize payment for %s: %w", req.ContractID, err)
	}
	return st, nil
}

// PaymentStatus reads the authorization, for when no webhook arrives.
func (c *Control) PaymentStatus(ctx context.Context, contractHash, sessionID string) (PaymentState, error) {
	if c.Payments == nil {
		return PaymentState{}, NotConfigured("payment")
	}
	return c.Payments.Status(ctx, contractHash, sessionID)
}

// CapturePayment captures on a satisfied verdict.
func (c *Control) CapturePayment(ctx context.Context, a PaymentAction) (PaymentState, error) {
	if c.Payments == nil {
		return PaymentState{}, NotConfigured("payment")
	}
	return c.Payments.Capture(ctx, a)
}

// CancelPayment cancels the authorization on every other ending.
func (c *Control) CancelPayment(ctx context.Context, a PaymentAction) (PaymentState, error) {
	if c.Payments == nil {
		return PaymentState{}, NotConfigured("payment")
	}
	return c.Payments.Cancel(ctx, a)
}

// Publish pushes the attempt's commit and opens or updates the PR.
func (c *Control) Publish(ctx context.Context, req PublishRequest) (contracts.PRRef, error) {
	if c.Deliverer == nil {
		return contracts.PRRef{}, NotConfigured("deliverable")
	}
	return c.Deliverer.Publish(ctx, req)
}

// RecordAttempt signs and stores the attempt's bundle, then reports it on the deliverable.
func (c *Control) RecordAttempt(ctx context.Context, req RecordRequest) (RecordResult, error) {
	if c.Proofs == nil || len(c.BundleKey) == 0 {
		return RecordResult{}, NotConfigured("proof store")
	}
	b := req.Bundle
	// The base screenshots a reviewer compares with the implementation's are covered by the
	// bundle's signature, as the attempt's are, when the base check left its evidence.
	if br, ok := c.Proofs.(BaseRefs); ok && b.Base == nil {
		ref, err := br.BaseRef(ctx, b.ContractID, b.ContractHash, b.BaseSHA)
		if err != nil {
			return RecordResult{}, fmt.Errorf("bind the base check: %w", err)
		}
		b.Base = ref
	}
	if err := b.Sign(c.BundleKey); err != nil {
		return RecordResult{}, fmt.Errorf("sign bundle: %w", err)
	}
	res, err := c.Proofs.WriteBundle(ctx, req.Contract, b)
	if err != nil {
		return RecordResult{}, fmt.Errorf("write bundle: %w", err)
	}
	if c.Deliverer != nil {
		comment := ""
		if c.Comment != nil {
			comment = c.Comment(b, req.Contract)
		}
		if _, err := c.Deliverer.Report(ctx, b, req.Final, comment); err != nil {
			return RecordResult{}, fmt.Errorf("report on deliverable: %w", err)
		}
	}
	return res, nil
}

// RecordSettlement signs and stores how the contract ended, beside its attempts' bundles,
// and returns where.
func (c *Control) RecordSettlement(ctx context.Context, s contracts.Settlement) (string, error) {
	if c.Proofs == nil || len(c.BundleKey) == 0 {
		return "", NotConfigured("proof store")
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
func (c *Control) PRHead(ctx context.Context, req HeadRequest) (string, error) {
	if c.Deliverer == nil {
		return "", NotConfigured("deliverable")
	}
	return c.Deliverer.Head(ctx, req)
}

// UpdateIndex records the contract's state in the index.
func (c *Control) UpdateIndex(ctx context.Context, e IndexEntry) error {
	if c.Index == nil {
		return nil
	}
	return c.Index.Put(e)
}

// Notify sends a progress message; a failed notice never fails the contract.
func (c *Control) Notify(ctx context.Context, n Notice) error {
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
func (c *Control) RequestLock(ctx context.Context, req LockRequest) error {
	if c.Temporal == nil {
		return NotConfigured("temporal client")
	}
	_, err := c.Temporal.SignalWithStartWorkflow(ctx, req.LockWorkflowID, req.Signal, req.RequesterWorkflowID,
		client.StartWorkflowOptions{ID: req.LockWorkflowID, TaskQueue: req.TaskQueue}, req.LockWorkflowType, req.RepoKey)
	if err != nil {
		return fmt.Errorf("request lock %s: %w", req.LockWorkflowID, err)
	}
	return nil
}
