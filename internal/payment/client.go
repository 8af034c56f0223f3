// Package payment is Signoff's Stripe code: a manual-capture Checkout authorization for a
// contract, its capture when the contract is satisfied, its cancellation otherwise, a poll
// for its state, and the webhook receiver. Real Stripe and the local test double
// (payment/localstripe) go through the same code; only the base URL, the key and the webhook
// secret differ. Words used: authorize, capture, cancel authorization.
package payment

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v76"
	"github.com/stripe/stripe-go/v76/client"
)

// Metadata keys set on both the Checkout Session and its PaymentIntent.
const (
	MetaContractID   = "contract_id"
	MetaContractHash = "contract_hash"
)

// Defaults for Config.
const (
	// DefaultAuthorizationValidity: Stripe cancels an uncaptured card authorization after
	// about 7 days. Used only when Stripe does not report capture_before.
	DefaultAuthorizationValidity = 7 * 24 * time.Hour
	// DefaultExpiryMargin: a capture closer than this to the authorization's expiry is
	// refused, so the workflow cancels honestly instead of racing the expiry.
	DefaultExpiryMargin = 12 * time.Hour
)

// Config selects the Stripe endpoint. Real Stripe: APIKey only. Local test double:
// BaseURL, APIKey and WebhookSecret from localstripe.Server.
type Config struct {
	APIKey string
	// BaseURL replaces https://api.stripe.com; empty means real Stripe.
	BaseURL string
	// HTTPClient defaults to a client with a 30 s timeout.
	HTTPClient *http.Client
	// MaxNetworkRetries is stripe-go's own retry count (safe: every write carries an
	// idempotency key). Nil means 2.
	MaxNetworkRetries *int64
	// ExpiryMargin: see DefaultExpiryMargin. Zero means the default.
	ExpiryMargin time.Duration
	// AuthorizationValidity: see DefaultAuthorizationValidity. Zero means the default.
	AuthorizationValidity time.Duration
	// Now is the clock used for the expiry check; nil means time.Now.
	Now func() time.Time
}

// Client talks to Stripe (or the local double) through its own stripe-go backend; it
// touches no stripe-go globals, so several clients can coexist.
type Client struct {
	api      *client.API
	margin   time.Duration
	validity time.Duration
	now      func() time.Time
}

// New builds a Client.
func New(cfg Config) (*Client, error) {
	if cfg.APIKey == "" {
		return nil, invalidInput("configure", "a Stripe secret key is required")
	}
	if cfg.BaseURL != "" {
		u, err := url.Parse(cfg.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, invalidInput("configure", "base URL %q is not an http(s) URL", cfg.BaseURL)
		}
	}
	bc := &stripe.BackendConfig{
		HTTPClient:        cfg.HTTPClient,
		MaxNetworkRetries: cfg.MaxNetworkRetries,
		EnableTelemetry:   stripe.Bool(false),
		LeveledLogger:     &stripe.LeveledLogger{Level: stripe.LevelNull}, // errors are returned, not logged
	}
	if bc.HTTPClient == nil {
		bc.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if bc.MaxNetworkRetries == nil {
		bc.MaxNetworkRetries = stripe.Int64(2)
	}
	if cfg.BaseURL != "" {
		bc.URL = stripe.String(cfg.BaseURL)
	}
	c := &Client{
		api:      client.New(cfg.APIKey, stripe.NewBackendsWithConfig(bc)),
		margin:   cfg.ExpiryMargin,
		validity: cfg.AuthorizationValidity,
		now:      cfg.Now,
	}
	if c.margin == 0 {
		c.margin = DefaultExpiryMargin
	}
	if c.validity == 0 {
		c.validity = DefaultAuthorizationValidity
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c, nil
}

// IdempotencyKey is the key for one action on one contract: the same contract hash, action
// and ref always give the same key, so a retried activity repeats its request instead of
// making a second one (Stripe replays the first answer). ref names the object acted on (the
// PaymentIntent for capture/cancel), because Stripe refuses one key on two different
// requests; for authorize it is "" or the attempt number of a deliberate new checkout.
func IdempotencyKey(contractHash, action, ref string) string {
	k := "signoff:" + action + ":" + contractHash
	if ref != "" {
		k += ":" + ref
	}
	return k
}

// AuthorizeRequest asks the payer to authorize the contract's price.
type AuthorizeRequest struct {
	ContractID   string
	ContractHash string
	Amount       int64  // minor units (cents)
	Currency     string // ISO 4217, e.g. "usd"
	Description  string // shown on the checkout page; default "Signoff contract <id>"
	SuccessURL   string // where the payer returns; may contain {CHECKOUT_SESSION_ID}
	CancelURL    string // optional
	// Attempt > 0 starts a new checkout for the same contract (see IdempotencyKey).
	Attempt int
}

// Authorization is a created checkout: send the payer to CheckoutURL.
type Authorization struct {
	CheckoutSessionID string
	CheckoutURL       string
	// PaymentIntentID is empty until the payer completes the checkout (Stripe creates the
	// PaymentIntent then); Status and the webhook report it.
	PaymentIntentID string
	ExpiresAt       time.Time // when the unpaid checkout lapses
}

func (r AuthorizeRequest) validate() error {
	switch {
	case strings.TrimSpace(r.ContractID) == "":
		return invalidInput("authorize", "contract id is required")
	case len(r.ContractID) > 200:
		return invalidInput("authorize", "contract id is longer than 200 characters")
	case r.Amount <= 0:
		return invalidInput("authorize", "amount must be positive minor units, got %d", r.Amount)
	case len(r.Currency) != 3 || strings.ToLower(r.Currency) != r.Currency || strings.Trim(r.Currency, "abcdefghijklmnopqrstuvwxyz") != "":
		return invalidInput("authorize", "currency must be a lowercase 3-letter ISO code, got %q", r.Currency)
	case r.SuccessURL == "":
		return invalidInput("authorize", "success URL is required")
	case r.Attempt < 0:
		return invalidInput("authorize", "attempt must not be negative")
	}
	return validateHash("authorize", r.ContractHash)
}

// validateHash keeps the hash usable inside an idempotency key (Stripe: at most 255 characters).
func validateHash(op, h string) error {
	if h == "" {
		return invalidInput(op, "contract hash is required")
	}
	if len(h) > 128 || strings.ContainsAny(h, " \t\r\n") {
		return invalidInput(op, "contract hash %q is not a hash (at most 128 characters, no spaces)", h)
	}
	return nil
}

// Authorize creates a Checkout Session in payment mode whose PaymentIntent uses manual
// capture: the payer's card is authorized, and nothing is captured until Capture. The
// contract id and hash are in the metadata of both objects.
func (c *Client) Authorize(ctx context.Context, r AuthorizeRequest) (Authorization, error) {
	if err := r.validate(); err != nil {
		return Authorization{}, err
	}
	desc := r.Description
	if desc == "" {
		desc = "Signoff contract " + r.ContractID
	}
	meta := map[string]string{MetaContractID: r.ContractID, MetaContractHash: r.ContractHash}
	p := &stripe.CheckoutSessionParams{
		Mode:              stripe.String(string(stripe.CheckoutSessionModePayment)),
		ClientReferenceID: stripe.String(r.ContractID),
		SuccessURL:        stripe.String(r.SuccessURL),
		Metadata:          meta,
		LineItems: []*stripe.CheckoutSessionLineItemParams{{
			Quantity: stripe.Int64(1),
			PriceData: &stripe.CheckoutSessionLineItemPriceDataParams{
				Currency:    stripe.String(r.Currency),
				UnitAmount:  stripe.Int64(r.Amount),
				ProductData: &stripe.CheckoutSessionLineItemPriceDataProductDataParams{Name: stripe.String(desc)},
			},
		}},
		PaymentIntentData: &stripe.CheckoutSessionPaymentIntentDataParams{
			CaptureMethod: stripe.String(string(stripe.PaymentIntentCaptureMethodManual)),
			Description:   stripe.String(desc),
			Metadata:      meta,
		},
	}
	if r.CancelURL != "" {
		p.CancelURL = stripe.String(r.CancelURL)
	}
	p.Context = ctx
	ref := ""
	if r.Attempt > 0 {
		ref = strconv.Itoa(r.Attempt)
	}
	p.SetIdempotencyKey(IdempotencyKey(r.ContractHash, "authorize", ref))
	cs, err := c.api.CheckoutSessions.New(p)
	if err != nil {
		return Authorization{}, classify("authorize", r.ContractID, err)
	}
	a := Authorization{CheckoutSessionID: cs.ID, CheckoutURL: cs.URL}
	if cs.PaymentIntent != nil {
		a.PaymentIntentID = cs.PaymentIntent.ID
	}
	if cs.ExpiresAt > 0 {
		a.ExpiresAt = time.Unix(cs.ExpiresAt, 0).UTC()
	}
	return a, nil
}

// Status reads the payment state of a Checkout Session (cs_...) or PaymentIntent (pi_...).
// The workflow polls it when no webhook arrives.
func (c *Client) Status(ctx context.Context, id string) (PaymentStatus, error) {
	switch {
	case strings.HasPrefix(id, "cs_"):
		cs, err := c.getSession(ctx, "status", id)
		if err != nil {
			return PaymentStatus{}, err
		}
		return c.fromSession(cs), nil
	case strings.HasPrefix(id, "pi_"):
		pi, err := c.getIntent(ctx, "status", id)
		if err != nil {
			return PaymentStatus{}, err
		}
		return c.fromIntent(pi), nil
	}
	return PaymentStatus{}, invalidInput("status", "%q is neither a Checkout Session (cs_...) nor a PaymentIntent (pi_...) id", id)
}

// Capture captures the full authorized amount of paymentIntentID, which must belong to
// contractHash. A capture that already happened is reported as success without a second
// request; a PaymentIntent in another state gets Stripe's verdict (ErrUnexpectedState); an
// authorization within the expiry margin is refused with ErrAuthorizationExpiring.
func (c *Client) Capture(ctx context.Context, contractHash, paymentIntentID string) (PaymentStatus, error) {
	const op = "capture"
	if err := validateHash(op, contractHash); err != nil {
		return PaymentStatus{}, err
	}
	if !strings.HasPrefix(paymentIntentID, "pi_") {
		return PaymentStatus{}, invalidInput(op, "%q is not a PaymentIntent id (pi_...)", paymentIntentID)
	}
	pi, err := c.getIntent(ctx, op, paymentIntentID)
	if err != nil {
		return PaymentStatus{}, err
	}
	st := c.fromIntent(pi)
	if err := checkContract(op, st, contractHash); err != nil {
		return st, err
	}
	switch pi.Status {
	case stripe.PaymentIntentStatusSucceeded:
		return st, nil // captured earlier (e.g. the activity's previous try succeeded)
	case stripe.PaymentIntentStatusRequiresCapture:
		if deadline := st.CaptureBefore; !deadline.IsZero() && !c.now().Add(c.margin).Before(deadline) {
			return st, &Error{Kind: ErrAuthorizationExpiring, Op: op, ID: paymentIntentID, Status: string(pi.Status),
				CaptureBefore: deadline,
				Msg: fmt.Sprintf("authorization expires at %s, within the %s margin; cancel the authorization instead",
					deadline.Format(time.RFC3339), c.margin)}
		}
	}
	// Any other status is for Stripe to judge, so the error carries Stripe's own code.
	p := &stripe.PaymentIntentCaptureParams{}
	p.Context = ctx
	p.SetIdempotencyKey(IdempotencyKey(contractHash, op, paymentIntentID))
	p.AddExpand("latest_charge")
	pi, err = c.api.PaymentIntents.Capture(paymentIntentID, p)
	if err != nil {
		return st, classify(op, paymentIntentID, err)
	}
	return c.fromIntent(pi), nil
}

// CancelReason is Stripe's cancellation_reason for a PaymentIntent.
type CancelReason string

// Reasons Stripe accepts when canceling an authorization.
const (
	ReasonNone                CancelReason = ""
	ReasonAbandoned           CancelReason = "abandoned" // the contract was not satisfied or was dropped
	ReasonRequestedByCustomer CancelReason = "requested_by_customer"
	ReasonDuplicate           CancelReason = "duplicate"
	ReasonFraudulent          CancelReason = "fraudulent"
)

// Cancel cancels the authorization so the payer's hold is released. id may be a
// PaymentIntent (pi_...) or the Checkout Session (cs_...): an unpaid open session is expired
// so it can no longer be paid; a completed one has its PaymentIntent canceled. Canceling
// something already canceled or expired succeeds without a request; canceling a captured
// payment gets Stripe's refusal (ErrUnexpectedState).
func (c *Client) Cancel(ctx context.Context, contractHash, id string, reason CancelReason) (PaymentStatus, error) {
	const op = "cancel"
	if err := validateHash(op, contractHash); err != nil {
		return PaymentStatus{}, err
	}
	switch reason {
	case ReasonNone, ReasonAbandoned, ReasonRequestedByCustomer, ReasonDuplicate, ReasonFraudulent:
	default:
		return PaymentStatus{}, invalidInput(op, "unknown cancellation reason %q", reason)
	}
	var pi *stripe.PaymentIntent
	switch {
	case strings.HasPrefix(id, "cs_"):
		cs, err := c.getSession(ctx, op, id)
		if err != nil {
			return PaymentStatus{}, err
		}
		st := c.fromSession(cs)
		if err := checkContract(op, st, contractHash); err != nil {
			return st, err
		}
		if cs.PaymentIntent == nil {
			if cs.Status != stripe.CheckoutSessionStatusOpen {
				return st, nil // expired unpaid: nothing is held
			}
			p := &stripe.CheckoutSessionExpireParams{}
			p.Context = ctx
			p.SetIdempotencyKey(IdempotencyKey(contractHash, "expire-checkout", id))
			if _, err := c.api.CheckoutSessions.Expire(id, p); err != nil {
				return st, classify(op, id, err)
			}
			return c.Status(ctx, id)
		}
		pi = cs.PaymentIntent
	case strings.HasPrefix(id, "pi_"):
		var err error
		if pi, err = c.getIntent(ctx, op, id); err != nil {
			return PaymentStatus{}, err
		}
	default:
		return PaymentStatus{}, invalidInput(op, "%q is neither a Checkout Session (cs_...) nor a PaymentIntent (pi_...) id", id)
	}
	st := c.fromIntent(pi)
	if err := checkContract(op, st, contractHash); err != nil {
		return st, err
	}
	if pi.Status == stripe.PaymentIntentStatusCanceled {
		return st, nil
	}
	p := &stripe.PaymentIntentCancelParams{}
	if reason != ReasonNone {
		p.CancellationReason = stripe.String(string(reason))
	}
	p.Context = ctx
	p.SetIdempotencyKey(IdempotencyKey(contractHash, op, pi.ID))
	p.AddExpand("latest_charge")
	pi, err := c.api.PaymentIntents.Cancel(pi.ID, p)
	if err != nil {
		return st, classify(op, st.PaymentIntentID, err)
	}
	return c.fromIntent(pi), nil
}

func (c *Client) getSession(ctx context.Context, op, id string) (*stripe.CheckoutSession, error) {
	p := &stripe.CheckoutSessionParams{}
	p.Context = ctx
	p.AddExpand("payment_intent.latest_charge")
	cs, err := c.api.CheckoutSessions.Get(id, p)
	if err != nil {
		return nil, classify(op, id, err)
	}
	return cs, nil
}

func (c *Client) getIntent(ctx context.Context, op, id string) (*stripe.PaymentIntent, error) {
	p := &stripe.PaymentIntentParams{}
	p.Context = ctx
	p.AddExpand("latest_charge")
	pi, err := c.api.PaymentIntents.Get(id, p)
	if err != nil {
		return nil, classify(op, id, err)
	}
	return pi, nil
}

// checkContract refuses to act on a payment made for another contract.
func checkContract(op string, st PaymentStatus, contractHash string) error {
	if st.ContractHash != contractHash {
		id := st.PaymentIntentID
		if id == "" {
			id = st.CheckoutSessionID
		}
		return &Error{Kind: ErrContractMismatch, Op: op, ID: id, Status: st.StripeStatus,
			Msg: fmt.Sprintf("its metadata names contract hash %q, not %q", st.ContractHash, contractHash)}
	}
	return nil
}
