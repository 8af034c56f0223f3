// Package workflows holds Signoff's Temporal workflows: one ContractWorkflow per completion
// contract, and a RepoLockWorkflow per repository so only one contract works on a repo at a
// time. Workflow code decides (the verdict policy runs here, it is deterministic); every side
// effect is an activity on the queue that holds its authority.
package workflows

// Task queues. Each carries separate authority; a worker holds only its queue's secrets.
const (
	ControlQueue = "signoff-control"
	ExecuteQueue = "signoff-execute"
	VerifyQueue  = "signoff-verify"
)

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

// Contract states (DESIGN section 1), plus approved (waiting for the payment authorization)
// and awaiting_operator (verification paused for retry or abandon).
const (
	StateQuoted            = "quoted"
	StateApproved          = "approved"
	StateAuthorized        = "authorized"
	StateBuilding          = "building"
	StateVerifying         = "verifying"
	StateRepairing         = "repairing"
	StateAwaitingOperator  = "awaiting_operator"
	StateSatisfied         = "satisfied"
	StateNotSatisfied      = "not_satisfied"
	StateVerificationError = "verification_error"
	StateMergeEligible     = "merge_eligible"
	StatePaymentCaptured   = "payment_captured"
	StatePaymentCancelled  = "payment_cancelled"
	StateCancelled         = "cancelled"
	StateExpired           = "expired"
)

// WorkflowID is the contract workflow's ID: one workflow per contract id.
func WorkflowID(contractID string) string { return "contract-" + contractID }

// LockWorkflowID is the lock workflow's ID for a repository key ("owner/name").
func LockWorkflowID(repoKey string) string { return "repo-lock-" + repoKey }
