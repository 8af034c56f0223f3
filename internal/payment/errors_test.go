package payment

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stripe/stripe-go/v76"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *stripe.Error
		want error // nil: retryable
	}{
		{"unexpected state", &stripe.Error{HTTPStatusCode: 400, Type: stripe.ErrorTypeInvalidRequest, Code: stripe.ErrorCodePaymentIntentUnexpectedState}, ErrUnexpectedState},
		{"missing", &stripe.Error{HTTPStatusCode: 404, Type: stripe.ErrorTypeInvalidRequest, Code: stripe.ErrorCodeResourceMissing}, ErrNotFound},
		{"validation", &stripe.Error{HTTPStatusCode: 400, Type: stripe.ErrorTypeInvalidRequest}, ErrInvalidRequest},
		{"bad key", &stripe.Error{HTTPStatusCode: 401, Type: stripe.ErrorTypeInvalidRequest}, ErrInvalidRequest},
		{"idempotency conflict", &stripe.Error{HTTPStatusCode: 400, Type: stripe.ErrorTypeIdempotency}, ErrInvalidRequest},
		{"declined", &stripe.Error{HTTPStatusCode: 402, Type: stripe.ErrorTypeCard}, ErrDeclined},
		{"key in use", &stripe.Error{HTTPStatusCode: 409, Type: stripe.ErrorTypeIdempotency, Code: stripe.ErrorCodeIdempotencyKeyInUse}, nil},
		{"rate limited", &stripe.Error{HTTPStatusCode: 429, Type: stripe.ErrorTypeInvalidRequest}, nil},
		{"outage", &stripe.Error{HTTPStatusCode: 503, Type: stripe.ErrorTypeAPI}, nil},
	} {
		err := classify("capture", "pi_1", fmt.Errorf("wrapped: %w", tc.in))
		if tc.want == nil {
			if NonRetryable(err) {
				t.Errorf("%s: %v is non-retryable, want retryable", tc.name, err)
			}
			if !errors.Is(err, tc.in) {
				t.Errorf("%s: cause lost: %v", tc.name, err)
			}
			continue
		}
		if !errors.Is(err, tc.want) || !NonRetryable(err) {
			t.Errorf("%s: %v, want non-retryable %v", tc.name, err, tc.want)
		}
	}
}

func TestIdempotencyKeyIsStable(t *testing.T) {
	a := IdempotencyKey("h", "capture", "pi_1")
	if a != IdempotencyKey("h", "capture", "pi_1") || a == IdempotencyKey("h", "cancel", "pi_1") ||
		a == IdempotencyKey("h2", "capture", "pi_1") || a == IdempotencyKey("h", "capture", "pi_2") {
		t.Fatalf("keys must depend on exactly hash, action and ref: %q", a)
	}
}
