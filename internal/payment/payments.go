package payment

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/policy"
)

// Provider names recorded in payment references (capability.PaymentState.Provider).
const (
	ProviderStripe = "stripe"
	// ProviderLocal is the local Stripe test double: stripe-go talks to it as to Stripe, and
	// no money moves.
	ProviderLocal = "stripe-local-test-double"
)

// Payments is the control queue's payment provider (capability.Payments) over Client: one
// code path for real Stripe and for the local test double. It adds nothing to the money
// rules of Client; it maps states and errors to what the workflow understands.
type Payments struct {
	Client *Client
	// Provider is ProviderStripe or ProviderLocal.
	Provider string
	// Local marks the local test double (PaymentState.Local): no money moves.
	Local bool
	// ReturnURL is where the payer lands after the checkout, paid or not.
	ReturnURL string
}

// Authorize creates (or, retried, returns again) the contract's manual-capture checkout.
func (p *Payments) Authorize(ctx context.Context, req capability.AuthorizeRequest) (capability.PaymentState, error) {
	a, err := p.Client.Authorize(ctx, AuthorizeRequest{
		ContractID:   req.ContractID,
		ContractHash: req.ContractHash,
		Amount:       req.Price.Amount,
		Currency:     strings.ToLower(req.Price.Currency),
		SuccessURL:   p.ReturnURL,
		CancelURL:    p.ReturnURL,
	})
	if err != nil {
		return capability.PaymentState{}, workflowError(err)
	}
	return capability.PaymentState{Provider: p.Provider, Local: p.Local, CheckoutSessionID: a.CheckoutSessionID,
		CheckoutURL: a.CheckoutURL, PaymentIntentID: a.PaymentIntentID, State: capability.PaymentPending}, nil
}

// Status reads the checkout (or PaymentIntent) and refuses one made for another contract.
func (p *Payments) Status(ctx context.Context, contractHash, sessionID string) (capability.PaymentState, error) {
	st, err := p.Client.Status(ctx, sessionID)
	if err != nil {
		return capability.PaymentState{}, workflowError(err)
	}
	if err := checkContract("status", st, contractHash); err != nil {
		return capability.PaymentState{}, workflowError(err)
	}
	return p.state(st, sessionID), nil
}

// Capture captures the authorization on a satisfied verdict. The PaymentIntent comes from
// the action, or from the checkout when the workflow never learnt it.
func (p *Payments) Capture(ctx context.Context, a capability.PaymentAction) (capability.PaymentState, error) {
	pi := a.PaymentIntentID
	if pi == "" {
		if a.SessionID == "" {
			return capability.PaymentState{}, capability.Refused(errors.New("capture: the action names no checkout and no PaymentIntent"))
		}
		st, err := p.Status(ctx, a.ContractHash, a.SessionID)
		if err != nil {
			return capability.PaymentState{}, err
		}
		if st.PaymentIntentID == "" {
			return st, capability.PaymentStateError(fmt.Errorf("capture: checkout %s was never completed, nothing is authorized", a.SessionID))
		}
		pi = st.PaymentIntentID
	}
	st, err := p.Client.Capture(ctx, a.ContractHash, pi)
	if err != nil {
		return capability.PaymentState{}, workflowError(err)
	}
	return p.state(st, a.SessionID), nil
}

// Cancel cancels the authorization (or expires a checkout never paid), so nothing is held.
func (p *Payments) Cancel(ctx context.Context, a capability.PaymentAction) (capability.PaymentState, error) {
	id := a.PaymentIntentID
	if id == "" {
		id = a.SessionID
	}
	if id == "" {
		return capability.PaymentState{}, capability.Refused(errors.New("cancel: the action names no checkout and no PaymentIntent"))
	}
	reason := ReasonAbandoned
	if strings.HasPrefix(a.Reason, policy.CancelledByPrefix) {
		reason = ReasonRequestedByCustomer
	}
	st, err := p.Client.Cancel(ctx, a.ContractHash, id, reason)
	if err != nil {
		return capability.PaymentState{}, workflowError(err)
	}
	return p.state(st, a.SessionID), nil
}

func (p *Payments) state(st PaymentStatus, sessionID string) capability.PaymentState {
	out := capability.PaymentState{Provider: p.Provider, Local: p.Local, CheckoutSessionID: st.CheckoutSessionID,
		PaymentIntentID: st.PaymentIntentID, State: workflowState(st.State)}
	if out.CheckoutSessionID == "" {
		out.CheckoutSessionID = sessionID // read by PaymentIntent id: keep the session the workflow knows
	}
	if !st.AuthorizedAt.IsZero() {
		out.AuthorizedAt = st.AuthorizedAt.UTC().Format(time.RFC3339)
	}
	return out
}

func workflowState(s State) string {
	switch s {
	case StateAuthorized:
		return capability.PaymentAuthorized
	case StateCaptured:
		return capability.PaymentCaptured
	case StateCanceled:
		return capability.PaymentCanceled
	case StateExpired:
		return capability.PaymentExpired
	}
	return capability.PaymentPending
}

// workflowError turns a typed payment failure into the workflow's non-retryable errors: a
// refusal because of the authorization's state (capture after cancel, an authorization about
// to expire, a declined card) is a PaymentStateError, so settle() cancels the authorization
// instead of retrying; a request that can never succeed (unknown id, another contract's
// payment, bad input) is Refused. Anything else (network, Stripe 409/429/5xx) stays
// retryable: every write carries an idempotency key.
func workflowError(err error) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	switch e.Kind {
	case ErrUnexpectedState, ErrAuthorizationExpiring, ErrDeclined:
		return capability.PaymentStateError(err)
	}
	return capability.Refused(err)
}

// Compile-time check: Payments is an capability.Payments.
var _ capability.Payments = (*Payments)(nil)
