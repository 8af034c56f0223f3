package activities

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"
)

// Application error types the workflow tells apart. All are non-retryable: retrying cannot
// change the answer.
const (
	ErrTypeNotConfigured = "NotConfigured"
	ErrTypePaymentState  = "PaymentState"
	ErrTypeRefused       = "Refused"
)

// ErrNotConfigured is returned by a capability that has no implementation in this process.
// In the product it ends the attempt as verification_error, never as a pass.
var ErrNotConfigured = errors.New("capability not configured")

// NotConfigured builds the typed error for a missing capability.
func NotConfigured(capability string) error {
	return temporal.NewNonRetryableApplicationError(
		fmt.Sprintf("%s is not configured on this worker", capability), ErrTypeNotConfigured, ErrNotConfigured)
}

// PaymentStateError is a payment action the provider refused for the authorization's state
// (capture after cancel, an expired authorization).
func PaymentStateError(cause error) error {
	return temporal.NewNonRetryableApplicationError(cause.Error(), ErrTypePaymentState, cause)
}

// Refused is a request outside policy (a repo not on the allowlist, a path escaping the job
// directory).
func Refused(cause error) error {
	return temporal.NewNonRetryableApplicationError(cause.Error(), ErrTypeRefused, cause)
}
