package contracts

// The states of a contract as its workflow, the index and the chat show them: the contract
// states, plus approved (waiting for the payment authorization) and awaiting_operator
// (verification paused for retry or abandon). They live here, on the ground floor, so the
// index and the chat read them without the workflow package.
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

// settledStates are the states a contract ends in: its payment was captured (and its PR merge
// eligible, until a push revokes that) or cancelled, or it never got one.
var settledStates = map[string]bool{
	StateMergeEligible:    true,
	StatePaymentCaptured:  true,
	StatePaymentCancelled: true,
	StateCancelled:        true,
	StateExpired:          true,
}

// Settled reports whether state is one a contract ends in: nothing moves a contract out of it.
func Settled(state string) bool { return settledStates[state] }
