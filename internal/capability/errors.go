package capability

import (
	"errors"
	"fmt"
)

// Sentinels that classify why a capability said no. Each is final: retrying cannot change
// the answer. Match them with errors.Is; the activities package turns them into
// non-retryable Temporal errors of the matching type, however deeply they are wrapped.
var (
	// ErrNotConfigured: the capability has no implementation in this process. It is never
	// retried; inside an attempt the workflow ends the attempt as verification_error, never as
	// a pass, and elsewhere it records the failure as an error event.
	ErrNotConfigured = errors.New("capability not configured")
	// ErrPaymentState: the provider refused a payment action for the authorization's state
	// (capture after cancel, an expired authorization).
	ErrPaymentState = errors.New("payment state refuses the action")
	// ErrRefused: a request outside policy (a repository not on the allowlist, a path
	// escaping the job folder, evidence that is not this verifier's).
	ErrRefused = errors.New("refused")
)

// classified is an error with a final class: its message is the cause's own, so wrapping it
// changes nothing a user reads.
type classified struct {
	class error
	cause error
}

func (e *classified) Error() string { return e.cause.Error() }

// Unwrap gives both the class (for errors.Is) and the cause (for errors.As on it).
func (e *classified) Unwrap() []error { return []error{e.class, e.cause} }

// NotConfigured says a capability is missing on this worker.
func NotConfigured(capability string) error {
	return &classified{class: ErrNotConfigured, cause: fmt.Errorf("%s is not configured on this worker", capability)}
}

// PaymentStateError is a payment action the provider refused for the authorization's state.
func PaymentStateError(cause error) error {
	return &classified{class: ErrPaymentState, cause: cause}
}

// Refused is a request outside policy.
func Refused(cause error) error {
	return &classified{class: ErrRefused, cause: cause}
}
