package payment

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v76"
)

// Kinds of non-retryable failure. Every *Error wraps exactly one; test with errors.Is.
var (
	// ErrUnexpectedState: Stripe refused because the PaymentIntent is in the wrong state
	// (e.g. capture after cancel). Retrying cannot help.
	ErrUnexpectedState = errors.New("payment intent is in an unexpected state")
	// ErrAuthorizationExpiring: the authorization is too close to its expiry to capture
	// safely; cancel the authorization instead.
	ErrAuthorizationExpiring = errors.New("authorization is too close to expiry to capture")
	// ErrNotFound: no such Checkout Session or PaymentIntent.
	ErrNotFound = errors.New("payment object not found")
	// ErrContractMismatch: the payment object belongs to a different contract hash.
	ErrContractMismatch = errors.New("payment object belongs to a different contract")
	// ErrInvalidRequest: Stripe rejected the request (bad parameters, bad key, idempotency
	// key reused with different parameters), or the caller's input was invalid.
	ErrInvalidRequest = errors.New("invalid payment request")
	// ErrDeclined: the card was declined.
	ErrDeclined = errors.New("payment declined")
)

// Error is a failure that retrying will not fix; the workflow should decide instead (for
// Temporal: a non-retryable ApplicationError with Type() as its type).
type Error struct {
	Kind       error  // one of the Err* values above
	Op         string // authorize, status, capture, cancel
	ID         string // the Checkout Session or PaymentIntent involved
	Code       string // Stripe's error code, e.g. payment_intent_unexpected_state
	StripeType string // Stripe's error type, e.g. invalid_request_error
	HTTPStatus int
	RequestID  string
	Status     string // the PaymentIntent's status when known
	Msg        string
	// CaptureBefore is the authorization's expiry (ErrAuthorizationExpiring only).
	CaptureBefore time.Time
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "payment %s", e.Op)
	if e.ID != "" {
		fmt.Fprintf(&b, " %s", e.ID)
	}
	fmt.Fprintf(&b, ": %v", e.Kind)
	if e.Status != "" {
		fmt.Fprintf(&b, " (status %s)", e.Status)
	}
	if e.Code != "" {
		fmt.Fprintf(&b, " [stripe %s]", e.Code)
	}
	if e.Msg != "" {
		fmt.Fprintf(&b, ": %s", e.Msg)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Kind }

// Type is a stable name for the failure kind, e.g. "payment.unexpected_state".
func (e *Error) Type() string {
	switch e.Kind {
	case ErrUnexpectedState:
		return "payment.unexpected_state"
	case ErrAuthorizationExpiring:
		return "payment.authorization_expiring"
	case ErrNotFound:
		return "payment.not_found"
	case ErrContractMismatch:
		return "payment.contract_mismatch"
	case ErrDeclined:
		return "payment.declined"
	default:
		return "payment.invalid_request"
	}
}

// NonRetryable reports whether err is a *Error: retrying the same call cannot succeed. Any
// other error (network, timeout, Stripe 409/429/5xx) is worth retrying with the same
// idempotency key.
func NonRetryable(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// classify turns a stripe-go error into a *Error when retrying cannot help, or wraps it as a
// retryable error otherwise.
func classify(op, id string, err error) error {
	var se *stripe.Error
	if !errors.As(err, &se) {
		return fmt.Errorf("payment %s %s: %w", op, id, err)
	}
	e := &Error{Op: op, ID: id, Code: string(se.Code), StripeType: string(se.Type),
		HTTPStatus: se.HTTPStatusCode, RequestID: se.RequestID, Msg: se.Msg}
	if se.PaymentIntent != nil {
		e.Status = string(se.PaymentIntent.Status)
	}
	switch {
	case se.Code == stripe.ErrorCodePaymentIntentUnexpectedState:
		e.Kind = ErrUnexpectedState
	case se.HTTPStatusCode == http.StatusNotFound || se.Code == stripe.ErrorCodeResourceMissing:
		e.Kind = ErrNotFound
	case se.HTTPStatusCode == http.StatusConflict, se.HTTPStatusCode == http.StatusTooManyRequests,
		se.HTTPStatusCode >= 500, se.HTTPStatusCode == 0:
		return fmt.Errorf("payment %s %s: %w", op, id, err) // lock contention, rate limit, outage
	case se.HTTPStatusCode == http.StatusPaymentRequired || se.Type == stripe.ErrorTypeCard:
		e.Kind = ErrDeclined
	default:
		e.Kind = ErrInvalidRequest
	}
	return e
}

func invalidInput(op, format string, args ...any) error {
	return &Error{Kind: ErrInvalidRequest, Op: op, Msg: fmt.Sprintf(format, args...)}
}
