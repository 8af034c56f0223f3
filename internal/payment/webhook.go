package payment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/stripe/stripe-go/v76"
	"github.com/stripe/stripe-go/v76/webhook"

	"github.com/signoff/signoff/contracts"
)

// EventKind is a Stripe event type Signoff acts on.
type EventKind string

// The events the handler passes on; every other type is acknowledged and ignored.
const (
	EventCheckoutCompleted EventKind = "checkout.session.completed"
	EventCheckoutExpired   EventKind = "checkout.session.expired"
	EventAuthorized        EventKind = "payment_intent.amount_capturable_updated"
	EventCaptured          EventKind = "payment_intent.succeeded"
	EventCanceled          EventKind = "payment_intent.canceled"
)

// Event is a verified Stripe event about one contract's payment.
type Event struct {
	ID                string // Stripe's event id (evt_...); Stripe may deliver an event twice
	Kind              EventKind
	ContractID        string
	ContractHash      string
	CheckoutSessionID string // checkout.session.* events
	PaymentIntentID   string // empty for an unpaid checkout
	AmountCapturable  int64
	Created           time.Time
}

// Webhook defaults.
const (
	DefaultWebhookTolerance = webhook.DefaultTolerance // 300 s, Stripe's own
	DefaultWebhookMaxBody   = 512 << 10
)

// WebhookConfig configures NewWebhookHandler.
type WebhookConfig struct {
	// Secret is the endpoint's signing secret (whsec_...).
	Secret string
	// OnEvent receives each verified event once. An error makes the handler answer 500, so
	// Stripe delivers the event again later.
	OnEvent func(ctx context.Context, ev Event) error
	// Tolerance is the oldest accepted signature timestamp; zero means 300 s.
	Tolerance time.Duration
	// MaxBodyBytes caps the request body; zero means 512 KiB.
	MaxBodyBytes int64
	// IgnoreAPIVersionMismatch accepts events rendered for an API version other than
	// stripe-go's (2023-10-16). Only ids and metadata are read, but leave it off unless the
	// Stripe endpoint cannot be pinned to 2023-10-16.
	IgnoreAPIVersionMismatch bool
	// Logger gets one line per refused or ignored delivery; nil discards.
	Logger *slog.Logger
}

// webhookHandler verifies Stripe-Signature before reading anything else from the body.
type webhookHandler struct {
	cfg  WebhookConfig
	log  *slog.Logger
	mu   sync.Mutex
	seen map[string]struct{} // event ids already handed to OnEvent
	ring []string            // insertion order, to bound seen
}

// seenLimit bounds the memory of delivered event ids.
const seenLimit = 4096

// NewWebhookHandler returns the http.Handler for Stripe's webhook endpoint.
func NewWebhookHandler(cfg WebhookConfig) (http.Handler, error) {
	if cfg.Secret == "" {
		return nil, errors.New("payment webhook: a signing secret is required")
	}
	if cfg.OnEvent == nil {
		return nil, errors.New("payment webhook: OnEvent is required")
	}
	if cfg.Tolerance == 0 {
		cfg.Tolerance = DefaultWebhookTolerance
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = DefaultWebhookMaxBody
	}
	h := &webhookHandler{cfg: cfg, log: cfg.Logger, seen: map[string]struct{}{}}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	return h, nil
}

func (h *webhookHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.cfg.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			h.log.Warn("payment webhook refused: body too large", "limit", h.cfg.MaxBodyBytes)
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "could not read request body", http.StatusBadRequest)
		return
	}
	if err := contracts.CheckJSON(body, "payment webhook", h.cfg.MaxBodyBytes, contracts.MaxJSONDepth); err != nil {
		h.log.Warn("payment webhook refused", "err", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ev, err := webhook.ConstructEventWithOptions(body, r.Header.Get("Stripe-Signature"), h.cfg.Secret,
		webhook.ConstructEventOptions{Tolerance: h.cfg.Tolerance, IgnoreAPIVersionMismatch: h.cfg.IgnoreAPIVersionMismatch})
	if err != nil {
		// The reason (bad signature, old timestamp, API version) is logged, not echoed.
		h.log.Warn("payment webhook refused", "err", err)
		http.Error(w, "invalid webhook signature or payload", http.StatusBadRequest)
		return
	}
	out, ok, err := decodeEvent(ev)
	if err != nil {
		h.log.Warn("payment webhook refused: undecodable object", "event", ev.ID, "type", ev.Type, "err", err)
		http.Error(w, "undecodable event object", http.StatusBadRequest)
		return
	}
	if !ok {
		h.log.Debug("payment webhook ignored", "event", ev.ID, "type", ev.Type)
		w.WriteHeader(http.StatusOK) // acknowledged so Stripe stops sending it
		return
	}
	if h.delivered(ev.ID) {
		w.WriteHeader(http.StatusOK)
		return
	}
	if err := h.cfg.OnEvent(r.Context(), out); err != nil {
		h.log.Error("payment webhook callback failed; Stripe will deliver it again", "event", ev.ID, "type", ev.Type, "err", err)
		http.Error(w, "event not processed", http.StatusInternalServerError)
		return
	}
	h.remember(ev.ID)
	w.WriteHeader(http.StatusOK)
}

func (h *webhookHandler) delivered(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.seen[id]
	return ok
}

func (h *webhookHandler) remember(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.seen[id]; ok {
		return
	}
	h.seen[id] = struct{}{}
	h.ring = append(h.ring, id)
	if len(h.ring) > seenLimit {
		delete(h.seen, h.ring[0])
		h.ring = h.ring[1:]
	}
}

// decodeEvent extracts the contract and payment ids; ok is false for an event type Signoff
// does not act on or one without Signoff's contract metadata (another integration's).
func decodeEvent(ev stripe.Event) (Event, bool, error) {
	out := Event{ID: ev.ID, Kind: EventKind(ev.Type), Created: time.Unix(ev.Created, 0).UTC()}
	if ev.Data == nil {
		return out, false, errors.New("event has no data")
	}
	switch out.Kind {
	case EventCheckoutCompleted, EventCheckoutExpired:
		var cs stripe.CheckoutSession
		if err := json.Unmarshal(ev.Data.Raw, &cs); err != nil {
			return out, false, fmt.Errorf("decode checkout session: %w", err)
		}
		out.CheckoutSessionID = cs.ID
		out.ContractID, out.ContractHash = cs.Metadata[MetaContractID], cs.Metadata[MetaContractHash]
		if cs.PaymentIntent != nil {
			out.PaymentIntentID = cs.PaymentIntent.ID
		}
	case EventAuthorized, EventCaptured, EventCanceled:
		var pi stripe.PaymentIntent
		if err := json.Unmarshal(ev.Data.Raw, &pi); err != nil {
			return out, false, fmt.Errorf("decode payment intent: %w", err)
		}
		out.PaymentIntentID = pi.ID
		out.AmountCapturable = pi.AmountCapturable
		out.ContractID, out.ContractHash = pi.Metadata[MetaContractID], pi.Metadata[MetaContractHash]
	default:
		return out, false, nil
	}
	return out, out.ContractHash != "", nil
}
