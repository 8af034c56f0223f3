// Package capability is what Signoff's side effects are asked and answer, and how they say no:
// the request and result types that travel between the workflow and its activities, the
// interfaces each capability implements (executor, preview, verifier, payments, deliverable,
// proof store, index, notices), and plain errors that classify a refusal. It imports no
// Temporal SDK, so every capability in internal/ is usable without Temporal; the activities
// package adapts them and maps these errors to Temporal's in one place.
package capability

import (
	"github.com/signoff/signoff/contracts"
)

// ExecRequest asks the executor for one attempt's change.
type ExecRequest struct {
	ContractID   string                `json:"contract_id"`
	ContractHash string                `json:"contract_hash"`
	Attempt      int                   `json:"attempt"`
	Goal         string                `json:"goal"`
	Repo         contracts.Repo        `json:"repo"`
	Criteria     []contracts.Criterion `json:"criteria"`
	TestHooks    []contracts.TestHook  `json:"test_hooks"`
	// Feedback is empty on attempt 1; on a repair it names each failed criterion with its
	// observed and expected values.
	Feedback []contracts.Reason `json:"feedback,omitempty"`
	// FailedElements names the elements behind the failed checks in Feedback (what was cut
	// off or reached past the screen's edge), from the previous attempt's evidence.
	FailedElements []contracts.FailedElement `json:"failed_elements,omitempty"`
	// ParentSHA is the commit the attempt builds on: the base, or the previous attempt.
	ParentSHA string `json:"parent_sha"`
}

// ExecResult is the attempt's commit on branch signoff/<slug>.
type ExecResult struct {
	CommitSHA    string `json:"commit_sha"`
	Branch       string `json:"branch"`
	FilesChanged int    `json:"files_changed"`
	Insertions   int    `json:"insertions"`
	Deletions    int    `json:"deletions"`
	// Empty is true when the executor changed nothing; the attempt still counts.
	Empty bool `json:"empty"`
	// OutputDigest addresses the executor's output log in the proof store.
	OutputDigest string `json:"output_digest,omitempty"`
	DiffSummary  string `json:"diff_summary,omitempty"`
}

// PreviewRequest asks the execute queue to build and start the app at a commit.
type PreviewRequest struct {
	ContractID string          `json:"contract_id"`
	Attempt    int             `json:"attempt"`
	Repo       contracts.Repo  `json:"repo"`
	CommitSHA  string          `json:"commit_sha"`
	Stack      contracts.Stack `json:"stack"`
	// Try counts verifications of the same commit (re-verification restarts the preview).
	Try int `json:"try"`
}

// PreviewResult is a running preview and its build record.
type PreviewResult struct {
	PreviewID string                `json:"preview_id"`
	URL       string                `json:"url"`
	Build     contracts.BuildResult `json:"build"`
}

// VerifyRequest is everything the verifier may see: criteria, hash, expected SHA, preview URL.
type VerifyRequest struct {
	ContractID     string                `json:"contract_id"`
	ContractHash   string                `json:"contract_hash"`
	Attempt        int                   `json:"attempt"`
	Try            int                   `json:"try"`
	Criteria       []contracts.Criterion `json:"criteria"`
	EvidencePolicy []string              `json:"evidence_policy"`
	Verifier       contracts.VerifierRef `json:"verifier"`
	ExpectedSHA    string                `json:"expected_sha"`
	PreviewURL     string                `json:"preview_url"`
	// AllowedOrigins are the contract's allowed_origins: where besides the preview the page
	// may load subresources from.
	AllowedOrigins []string `json:"allowed_origins,omitempty"`
	// Variant, in a base check only, is a lazy variant to apply to every page (its evidence
	// names it and is never a verdict). VariantPart numbers the verifications of one variant.
	Variant     *contracts.Variant `json:"variant,omitempty"`
	VariantPart int                `json:"variant_part,omitempty"`
}

// VerifyResult carries the signed evidence (observed values and digests, never artifacts),
// where it is stored, and the proof store's check of every artifact digest.
type VerifyResult struct {
	Evidence         *contracts.Evidence `json:"evidence"`
	EvidenceDigest   string              `json:"evidence_digest"`
	ProofDir         string              `json:"proof_dir"`
	ArtifactProblems []string            `json:"artifact_problems"`
}

// GateRequest asks the runtime gate about errors during the verification window.
type GateRequest struct {
	ContractID string `json:"contract_id"`
	Attempt    int    `json:"attempt"`
	From       string `json:"from"`
	To         string `json:"to"`
}

// AuthorizeRequest starts a manual-capture authorization for the contract's price.
type AuthorizeRequest struct {
	ContractID   string          `json:"contract_id"`
	ContractHash string          `json:"contract_hash"`
	Goal         string          `json:"goal"`
	Price        contracts.Price `json:"price"`
}

// Payment states as the workflow sees them.
const (
	PaymentPending    = "pending"
	PaymentAuthorized = "authorized"
	PaymentCaptured   = "captured"
	PaymentCanceled   = "canceled"
	PaymentExpired    = "expired"
)

// PaymentState is an authorization as the payment provider knows it.
type PaymentState struct {
	Provider          string `json:"provider"`
	Local             bool   `json:"local"`
	CheckoutSessionID string `json:"checkout_session_id"`
	CheckoutURL       string `json:"checkout_url"`
	PaymentIntentID   string `json:"payment_intent_id"`
	State             string `json:"state"`
	AuthorizedAt      string `json:"authorized_at,omitempty"`
}

// PaymentAction captures or cancels an authorization.
type PaymentAction struct {
	ContractID      string `json:"contract_id"`
	ContractHash    string `json:"contract_hash"`
	PaymentIntentID string `json:"payment_intent_id"`
	SessionID       string `json:"checkout_session_id"`
	Reason          string `json:"reason,omitempty"`
}

// PublishRequest pushes an attempt's commit to the deliverable (a PR, or a branch on the
// local bare remote) from the control queue.
type PublishRequest struct {
	ContractID   string                `json:"contract_id"`
	ContractHash string                `json:"contract_hash"`
	Goal         string                `json:"goal"`
	Repo         contracts.Repo        `json:"repo"`
	Criteria     []contracts.Criterion `json:"criteria"`
	Branch       string                `json:"branch"`
	CommitSHA    string                `json:"commit_sha"`
	Attempt      int                   `json:"attempt"`
}

// RecordRequest writes the attempt's signed bundle and reports it on the deliverable.
type RecordRequest struct {
	Bundle contracts.Bundle `json:"bundle"`
	// Contract is written beside the bundle so the proof can be re-judged offline.
	Contract contracts.Contract `json:"contract"`
	// Final marks the last verdict of the contract; the commit status is set then.
	Final bool `json:"final"`
}

// RecordResult says where the bundle went.
type RecordResult struct {
	ProofDir     string `json:"proof_dir"`
	BundleDigest string `json:"bundle_digest"`
}

// HeadRequest asks the deliverable for the PR head.
type HeadRequest struct {
	ContractID string         `json:"contract_id"`
	Repo       contracts.Repo `json:"repo"`
	Branch     string         `json:"branch"`
}

// IndexEntry is one contract in the index that outlives workflow retention.
type IndexEntry struct {
	ContractID   string `json:"contract_id"`
	ContractHash string `json:"contract_hash"`
	WorkflowID   string `json:"workflow_id"`
	Repo         string `json:"repo"`
	Goal         string `json:"goal"`
	// Requester is who asked for the contract: chat shows an entry only to them.
	Requester string `json:"requester,omitempty"`
	State     string `json:"state"`
	Verdict   string `json:"verdict,omitempty"`
	Attempts  int    `json:"attempts"`
	ProofDir  string `json:"proof_dir,omitempty"`
	PR        string `json:"pr,omitempty"`
	UpdatedAt string `json:"updated_at"`
}

// Notice is a short progress message for the person who asked (chat, terminal).
type Notice struct {
	ContractID string `json:"contract_id"`
	Requester  string `json:"requester"`
	Channel    string `json:"channel"`
	Kind       string `json:"kind"`
	Text       string `json:"text"`
}

// LockRequest asks the per-repo lock workflow for the lock on behalf of a contract workflow.
type LockRequest struct {
	LockWorkflowID      string `json:"lock_workflow_id"`
	LockWorkflowType    string `json:"lock_workflow_type"`
	TaskQueue           string `json:"task_queue"`
	Signal              string `json:"signal"`
	RepoKey             string `json:"repo_key"`
	RequesterWorkflowID string `json:"requester_workflow_id"`
	// Update and UpdateID ask by update (Control.AcquireLock); the ID makes a retried ask the
	// same ask.
	Update   string `json:"update,omitempty"`
	UpdateID string `json:"update_id,omitempty"`
}

// LockRelease gives a repository's lock back (or gives up a place in its queue).
type LockRelease struct {
	LockWorkflowID      string `json:"lock_workflow_id"`
	Signal              string `json:"signal"`
	RequesterWorkflowID string `json:"requester_workflow_id"`
}
