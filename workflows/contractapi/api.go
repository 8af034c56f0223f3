// Package contractapi is the contract workflows' API: the task queues, workflow ids, names
// of the workflows, signals, updates, queries and activities, and the types that cross the
// boundary (inputs, results, signal and update arguments, query answers). It imports no
// Temporal SDK and none of the activities, so the chat bridge, the CLI and the web pages
// can speak to a contract without depending on how it runs. Field names are JSON-stable:
// recorded histories in replays/ decode with them.
package contractapi

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
)

// Task queues. Each carries separate authority; a worker holds only its queue's secrets.
const (
	ControlQueue = "signoff-control"
	ExecuteQueue = "signoff-execute"
	VerifyQueue  = "signoff-verify"
)

// ChatQueue carries the chat's own durable work: the quote workflows and their activities,
// run by the process that hosts the chat bridge (it holds the agent key that signs replies).
const ChatQueue = "signoff-chat"

// Workflow type names.
const (
	ContractWorkflowName = "ContractWorkflow"
	RepoLockWorkflowName = "RepoLockWorkflow"
)

// Signals into a contract workflow. The chat bridge and the CLI reach the workflow only
// through these and the queries below.
const (
	SignalApprove           = "approve"
	SignalCancel            = "cancel"
	SignalPaymentAuthorized = "payment_authorized"
	SignalPRHeadChanged     = "pr_head_changed"
	SignalRetryVerification = "retry_verification"
	SignalAbandon           = "abandon"
)

// Updates of a contract workflow. UpdateApprove takes the same argument as SignalApprove
// (kept, so histories recorded with the signal replay) and answers at once: an
// ApproveResult, or an ApplicationError of type ApprovalRefusedError whose details are the
// ApprovalRefusal.
const (
	UpdateApprove = "approve_update"
)

// ApprovalRefusedError is the ApplicationError type of a refused approve update.
const ApprovalRefusedError = "ApprovalRefused"

// Codes of an ApprovalRefusal.
const (
	RefusedWrongHash       = "wrong_hash"       // not the quoted contract's hash (recorded in the timeline)
	RefusedNotRequester    = "not_requester"    // only the requester may approve (recorded once, then counted)
	RefusedExpired         = "expired"          // the quote is no longer open
	RefusedCancelled       = "cancelled"        // the contract was cancelled before approval
	RefusedAlreadyApproved = "already_approved" // a duplicate: the contract is past approval
)

// Queries out of a contract workflow.
const (
	QueryStatus = "status"
	QueryProof  = "proof"
)

// Signals between a contract workflow and its repo lock.
const (
	SignalLockRequest = "lock_request"
	SignalLockRelease = "lock_release"
	SignalLockGranted = "lock_granted"
)

// UpdateLockAcquire asks a repo lock for the lock on behalf of the contract workflow whose ID
// is its argument, and answers at once: true when that workflow now holds the lock; false
// when it waits in the queue, and SignalLockGranted will tell it its turn.
const UpdateLockAcquire = "lock_acquire"

// QueryLockState reads a repo lock's LockState (the Web UI's Queries tab shows it).
const QueryLockState = "lock_state"

// LockState is who holds a repository's lock and who waits for it, in order.
type LockState struct {
	Holder string   `json:"holder"`
	Queue  []string `json:"queue"`
}

// WorkflowID is the contract workflow's ID: one workflow per contract id.
func WorkflowID(contractID string) string { return "contract-" + contractID }

// LockWorkflowID is the lock workflow's ID for a repository key ("owner/name").
func LockWorkflowID(repoKey string) string { return "repo-lock-" + repoKey }

// QuoteWorkflowName turns one chat task message into a quote: survey, draft, base check and
// the contract workflow's start happen in its DraftQuote activity, then the answer is pushed
// to the requester with ChatSay. The message handler only starts it, so the reply to the chat
// message is immediate and the quote survives a restart of the process doing it.
const QuoteWorkflowName = "QuoteWorkflow"

// Activities of the quote workflow, on ChatQueue.
const (
	DraftQuoteActivity = "DraftQuote"
	ChatSayActivity    = "ChatSay"
)

// BaseCheckWorkflowName runs a contract's criteria on its base commit.
const BaseCheckWorkflowName = "DiscriminateWorkflow"

// Outcomes of a quote workflow.
const (
	QuoteOffered = "quoted"  // a contract workflow is waiting for approval
	QuoteRefused = "refused" // the request did not become a contract; the messages say why
	QuoteFailed  = "failed"  // drafting kept failing; the chat tells the requester to try again (ChatSay.Failed)
)

// ContractInput starts a contract workflow: the quote, who may approve it, and what the
// workflow trusts independently of the verifier.
type ContractInput struct {
	Quote    contracts.Quote `json:"quote"`
	Channel  string          `json:"channel"`
	Trust    Trust           `json:"trust"`
	Timeouts Timeouts        `json:"timeouts"`
	// ReverifyLimit bounds re-verifications of one commit before pausing for an operator.
	ReverifyLimit int `json:"reverify_limit"`
	// BaseCheck is the criteria's result on the base commit, checked before the quote was
	// offered; the workflow records it so the approver's view is part of the timeline. The
	// JSON name is the one recorded histories carry.
	BaseCheck *contracts.BaseCheck `json:"discrimination,omitempty"`
	// QuoteExpiresAt, when set, is when the quote stops being open: an approval must arrive
	// before it (and before Timeouts.Approval, whichever is sooner), or the contract expires.
	QuoteExpiresAt time.Time `json:"quote_expires_at,omitzero"`
}

// Trust is what the policy checks evidence against: the verifier's public key and the
// verifier digest this deployment runs.
type Trust struct {
	VerifierPublicKey []byte `json:"verifier_public_key"`
	VerifierDigest    string `json:"verifier_digest"`
}

// Timeouts bound every wait on a person or a provider. Zero means the default.
type Timeouts struct {
	Approval    time.Duration `json:"approval"`
	Payment     time.Duration `json:"payment"`
	PaymentPoll time.Duration `json:"payment_poll"`
	Operator    time.Duration `json:"operator"`
	// WatchPR keeps watching the PR head after a satisfied verdict; zero ends the workflow
	// once payment is settled.
	WatchPR time.Duration `json:"watch_pr"`
	// ControlActivity bounds one control activity (default 2 m) and Heartbeat the silence
	// after which a long activity's worker counts as lost (default 1 m). Tests that kill
	// workers shorten both.
	ControlActivity time.Duration `json:"control_activity"`
	Heartbeat       time.Duration `json:"heartbeat"`
}

// Defaults for zero timeouts.
const (
	DefaultApprovalTimeout = 72 * time.Hour
	DefaultPaymentTimeout  = 24 * time.Hour
	DefaultPaymentPoll     = 30 * time.Second
	DefaultOperatorTimeout = 24 * time.Hour
	DefaultReverifyLimit   = 1
)

// WithDefaults fills zero timeouts with the defaults.
func (t Timeouts) WithDefaults() Timeouts {
	if t.Approval <= 0 {
		t.Approval = DefaultApprovalTimeout
	}
	if t.Payment <= 0 {
		t.Payment = DefaultPaymentTimeout
	}
	if t.PaymentPoll <= 0 {
		t.PaymentPoll = DefaultPaymentPoll
	}
	if t.Operator <= 0 {
		t.Operator = DefaultOperatorTimeout
	}
	if t.ControlActivity <= 0 {
		t.ControlActivity = 2 * time.Minute
	}
	if t.Heartbeat <= 0 {
		t.Heartbeat = time.Minute
	}
	return t
}

// Approve is the approval signal: the hash the approver was shown, who, where, which message.
type Approve = contracts.Approval

// ApproveResult is the approve update's answer when the approval was taken.
type ApproveResult struct {
	State string `json:"state"`
}

// ApprovalRefusal is why an approval was refused.
type ApprovalRefusal struct {
	Code   string `json:"code"`
	Reason string `json:"reason"`
}

func (r *ApprovalRefusal) Error() string { return "approval refused: " + r.Reason }

// Cancel is the cancel signal.
type Cancel struct {
	By     string `json:"by"`
	Reason string `json:"reason"`
}

// PaymentAuthorized tells the workflow the checkout completed (a webhook, or the local CLI).
// The workflow confirms with the provider before it acts.
type PaymentAuthorized struct {
	SessionID       string `json:"checkout_session_id"`
	PaymentIntentID string `json:"payment_intent_id"`
	Source          string `json:"source"`
}

// PRHeadChanged reports a new head on the contract's PR.
type PRHeadChanged struct {
	SHA    string `json:"sha"`
	Source string `json:"source"`
}

// Operator is the retry_verification or abandon signal.
type Operator struct {
	By     string `json:"by"`
	Reason string `json:"reason"`
}

// AttemptRecord is one verification of one attempt's commit.
type AttemptRecord struct {
	Attempt        int                `json:"attempt"`
	Try            int                `json:"try"`
	CommitSHA      string             `json:"commit_sha"`
	Verdict        string             `json:"verdict"`
	Reasons        []contracts.Reason `json:"reasons"`
	EvidenceDigest string             `json:"evidence_digest,omitempty"`
	BundleDigest   string             `json:"bundle_digest,omitempty"`
	ProofDir       string             `json:"proof_dir,omitempty"`
	DiffSummary    string             `json:"diff_summary,omitempty"`
}

// Status is the status query's answer and the workflow's result.
type Status struct {
	ContractID   string `json:"contract_id"`
	ContractHash string `json:"contract_hash"`
	Goal         string `json:"goal"`
	Repo         string `json:"repo"`
	Requester    string `json:"requester"`
	// QuoteExpiresAt is when the quote stops being open for approval (zero: Timeouts.Approval
	// after it was quoted).
	QuoteExpiresAt time.Time               `json:"quote_expires_at,omitzero"`
	State          string                  `json:"state"`
	Phase          string                  `json:"phase"`
	Attempt        int                     `json:"attempt"`
	MaxAttempts    int                     `json:"max_attempts"`
	Executions     int                     `json:"executions"`
	Verdict        string                  `json:"verdict,omitempty"`
	Attempts       []AttemptRecord         `json:"attempts"`
	Payment        capability.PaymentState `json:"payment"`
	PR             contracts.PRRef         `json:"pr"`
	MergeEligible  bool                    `json:"merge_eligible"`
	Refusals       []string                `json:"refusals"`
	// StrangerRefusals counts approvals refused because the approver was not the requester.
	// Only the first is recorded in Refusals and the timeline; the rest are counted here, so
	// a stranger cannot grow another's signed timeline without bound.
	StrangerRefusals int               `json:"stranger_refusals,omitempty"`
	Timeline         []contracts.Event `json:"timeline"`
	Final            bool              `json:"final"`
}

// Proof is the proof query's answer: where the bundles are and what they say.
type Proof struct {
	ContractHash string          `json:"contract_hash"`
	Verdict      string          `json:"verdict,omitempty"`
	TimelineHead string          `json:"timeline_head"`
	Attempts     []AttemptRecord `json:"attempts"`
}

// BaseCheckInput asks for the base commit check of a contract before it is quoted.
type BaseCheckInput struct {
	Contract     contracts.Contract `json:"contract"`
	ContractHash string             `json:"contract_hash"`
	// Variants are lazy variants of the goal to run the criteria on as well (the
	// contract's self-test); a verify queue applies each to the served base.
	Variants []contracts.Variant `json:"variants,omitempty"`
}

// BaseCheckResult is the base commit's build and the verifier's signed evidence; the
// caller classifies each criterion as failing (the change must fix it) or a regression guard.
type BaseCheckResult struct {
	Build    contracts.BuildResult   `json:"build"`
	Verify   capability.VerifyResult `json:"verify"`
	Verified bool                    `json:"verified"`
	// Variants are the verifications of BaseCheckInput.Variants, in order: for each, the
	// criteria the base fails first, and the rest only when all of those passed.
	Variants []VariantRun `json:"variants,omitempty"`
}

// VariantRun is one lazy variant's verifications (one or two) or why none ran.
type VariantRun struct {
	Name   string                    `json:"name"`
	Verify []capability.VerifyResult `json:"verify,omitempty"`
	Error  string                    `json:"error,omitempty"`
}

// QuoteRequest is a task message as the chat bridge received it (the sender is verified).
type QuoteRequest struct {
	Requester string `json:"requester"`
	Session   string `json:"session"`
	MsgID     string `json:"msg_id"`
	Text      string `json:"text"`
}

// QuoteReply is what drafting produced: the contract quoted (when one was) and the messages
// to send, in order.
type QuoteReply struct {
	Outcome    string   `json:"outcome"`
	ContractID string   `json:"contract_id,omitempty"`
	Hash       string   `json:"contract_hash,omitempty"`
	Messages   []string `json:"messages"`
	// Delivered is false when the messages could not be pushed to the requester.
	Delivered bool `json:"delivered"`
}

// ChatSay pushes texts to a requester in a session. Key makes the message ids stable, so a
// retried push is shown once by a peer that dedupes by msg_id.
type ChatSay struct {
	To      string   `json:"to"`
	Session string   `json:"session"`
	Key     string   `json:"key"`
	Texts   []string `json:"texts"`
	// Failed: the quote could not be drafted, for reasons of Signoff's own. The chat says so
	// in its own words (Texts is empty then), so no internal error text reaches the requester.
	Failed bool `json:"failed,omitempty"`
}

// QuoteWorkflowID names the quote of one chat message: a message handed over twice (a
// resend, a restart) starts one workflow.
func QuoteWorkflowID(sender, session, msgID string) string {
	sum := sha256.Sum256([]byte(sender + "|" + session + "|" + msgID))
	return "quote-" + hex.EncodeToString(sum[:12])
}
