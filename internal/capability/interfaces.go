package capability

import (
	"context"

	"github.com/signoff/signoff/contracts"
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

// Verifier drives a browser against a preview and returns signed evidence. It sees only the
// criteria, the contract hash, the expected SHA and the preview URL.
type Verifier interface {
	Verify(ctx context.Context, req VerifyRequest) (VerifyResult, error)
}

// Gate is the runtime gate beyond page errors (an error tracker when configured).
type Gate interface {
	Check(ctx context.Context, req GateRequest) (contracts.GateResult, error)
}

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
