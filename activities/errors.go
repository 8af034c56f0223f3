package activities

import (
	"errors"

	"go.temporal.io/sdk/temporal"

	"github.com/signoff/signoff/internal/capability"
)

// Application error types the workflow tells apart. All are non-retryable: retrying cannot
// change the answer.
const (
	ErrTypeNotConfigured = "NotConfigured"
	ErrTypePaymentState  = "PaymentState"
	ErrTypeRefused       = "Refused"
)

// classes pairs each capability sentinel with the application error type it becomes.
var classes = []struct {
	sentinel error
	typ      string
}{
	{capability.ErrNotConfigured, ErrTypeNotConfigured},
	{capability.ErrPaymentState, ErrTypePaymentState},
	{capability.ErrRefused, ErrTypeRefused},
}

// ApplicationError is the one place a capability's plain classified error (capability.Refused
// and the rest, however deeply wrapped) becomes the non-retryable Temporal error the workflow
// tells apart, with the whole wrapped message. An error that already is or wraps an
// application error, or has no class, is returned as it is.
func ApplicationError(err error) error {
	if err == nil {
		return nil
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return err
	}
	for _, c := range classes {
		if errors.Is(err, c.sentinel) {
			return temporal.NewNonRetryableApplicationError(err.Error(), c.typ, err)
		}
	}
	return err
}
