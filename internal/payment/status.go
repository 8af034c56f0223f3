package payment

import (
	"time"

	"github.com/stripe/stripe-go/v76"
)

// State is the payment's state as the workflow sees it.
type State string

const (
	// StatePending: checkout open or not yet completed; nothing is authorized.
	StatePending State = "pending"
	// StateAuthorized: the card is authorized (PaymentIntent requires_capture).
	StateAuthorized State = "authorized"
	// StateCaptured: the authorized amount was captured (PaymentIntent succeeded).
	StateCaptured State = "captured"
	// StateCanceled: the authorization was canceled.
	StateCanceled State = "canceled"
	// StateExpired: the checkout lapsed unpaid, or the authorization lapsed uncaptured and
	// Stripe canceled it (cancellation_reason "automatic").
	StateExpired State = "expired"
)

// PaymentStatus is a snapshot of one contract's payment.
type PaymentStatus struct {
	State             State
	CheckoutSessionID string // empty when read by PaymentIntent id
	PaymentIntentID   string // empty until the checkout is completed
	ContractID        string // from metadata
	ContractHash      string // from metadata
	Amount            int64  // minor units
	Currency          string
	AmountCapturable  int64
	AmountReceived    int64
	// AuthorizedAt is when the card was authorized (zero while pending).
	AuthorizedAt time.Time
	// CaptureBefore is when the authorization lapses: Stripe's capture_before when reported,
	// else AuthorizedAt plus the configured validity (zero while pending).
	CaptureBefore      time.Time
	CanceledAt         time.Time
	CancellationReason string
	// StripeStatus is the raw PaymentIntent status, or the session status before payment.
	StripeStatus string
}

func (c *Client) fromSession(cs *stripe.CheckoutSession) PaymentStatus {
	if cs.PaymentIntent != nil && cs.PaymentIntent.Status != "" {
		st := c.fromIntent(cs.PaymentIntent)
		st.CheckoutSessionID = cs.ID
		if st.ContractHash == "" { // fall back to the session's own copy
			st.ContractID, st.ContractHash = cs.Metadata[MetaContractID], cs.Metadata[MetaContractHash]
		}
		return st
	}
	st := PaymentStatus{
		State:             StatePending,
		CheckoutSessionID: cs.ID,
		ContractID:        cs.Metadata[MetaContractID],
		ContractHash:      cs.Metadata[MetaContractHash],
		Amount:            cs.AmountTotal,
		Currency:          string(cs.Currency),
		StripeStatus:      string(cs.Status),
	}
	if cs.PaymentIntent != nil {
		st.PaymentIntentID = cs.PaymentIntent.ID
	}
	if cs.Status == stripe.CheckoutSessionStatusExpired {
		st.State = StateExpired
	}
	return st
}

func (c *Client) fromIntent(pi *stripe.PaymentIntent) PaymentStatus {
	st := PaymentStatus{
		State:              StatePending,
		PaymentIntentID:    pi.ID,
		ContractID:         pi.Metadata[MetaContractID],
		ContractHash:       pi.Metadata[MetaContractHash],
		Amount:             pi.Amount,
		Currency:           string(pi.Currency),
		AmountCapturable:   pi.AmountCapturable,
		AmountReceived:     pi.AmountReceived,
		CancellationReason: string(pi.CancellationReason),
		StripeStatus:       string(pi.Status),
	}
	if pi.CanceledAt > 0 {
		st.CanceledAt = time.Unix(pi.CanceledAt, 0).UTC()
	}
	switch pi.Status {
	case stripe.PaymentIntentStatusRequiresCapture:
		st.State = StateAuthorized
	case stripe.PaymentIntentStatusSucceeded:
		st.State = StateCaptured
	case stripe.PaymentIntentStatusCanceled:
		st.State = StateCanceled
		if pi.CancellationReason == stripe.PaymentIntentCancellationReasonAutomatic {
			st.State = StateExpired
		}
	}
	if st.State == StatePending {
		return st
	}
	// The charge dates the authorization; the PaymentIntent's creation is the fallback (for a
	// Checkout payment Stripe creates it when the payer confirms, so the two are close).
	authorized := pi.Created
	var captureBefore int64
	if ch := pi.LatestCharge; ch != nil {
		if ch.Created > 0 {
			authorized = ch.Created
		}
		if d := ch.PaymentMethodDetails; d != nil && d.Card != nil {
			captureBefore = d.Card.CaptureBefore
		}
	}
	if authorized > 0 {
		st.AuthorizedAt = time.Unix(authorized, 0).UTC()
		st.CaptureBefore = st.AuthorizedAt.Add(c.validity)
	}
	if captureBefore > 0 {
		st.CaptureBefore = time.Unix(captureBefore, 0).UTC()
	}
	return st
}
