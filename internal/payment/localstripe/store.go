package localstripe

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// StateFileName is the file in Config.DataDir holding the double's whole state.
const StateFileName = "localstripe-state.json"

// stateVersion guards against reading a file written by an incompatible double.
const stateVersion = 1

// state is everything the double remembers across restarts of `signoff dev`.
type state struct {
	Version       int    `json:"version"`
	Notice        string `json:"notice"`
	APIKey        string `json:"api_key"`
	WebhookSecret string `json:"webhook_secret"`
	LastAddr      string `json:"last_addr,omitempty"`

	Sessions    map[string]*sessionRec `json:"checkout_sessions"`
	Intents     map[string]*intentRec  `json:"payment_intents"`
	Charges     map[string]*chargeRec  `json:"charges"`
	Idempotency map[string]*idemRec    `json:"idempotency"`
}

func newState() *state {
	return &state{
		Version:     stateVersion,
		Notice:      noticeText,
		Sessions:    map[string]*sessionRec{},
		Intents:     map[string]*intentRec{},
		Charges:     map[string]*chargeRec{},
		Idempotency: map[string]*idemRec{},
	}
}

// sessionRec is a Checkout Session. Template is stripe-mock's JSON for the create request;
// the fields below overwrite its stateful parts when the session is rendered.
type sessionRec struct {
	ID                string            `json:"id"`
	Template          json.RawMessage   `json:"template"`
	Created           int64             `json:"created"`
	ExpiresAt         int64             `json:"expires_at"`
	Status            string            `json:"status"`         // open, complete, expired
	PaymentStatus     string            `json:"payment_status"` // unpaid, paid
	AmountTotal       int64             `json:"amount_total"`
	Currency          string            `json:"currency"`
	ProductName       string            `json:"product_name"`
	Metadata          map[string]string `json:"metadata"`
	ClientReferenceID string            `json:"client_reference_id,omitempty"`
	SuccessURL        string            `json:"success_url,omitempty"`
	CancelURL         string            `json:"cancel_url,omitempty"`
	CaptureMethod     string            `json:"capture_method"` // for the PaymentIntent made on completion
	IntentMetadata    map[string]string `json:"intent_metadata"`
	IntentDescription string            `json:"intent_description,omitempty"`
	PaymentIntentID   string            `json:"payment_intent,omitempty"`
}

// intentRec is a PaymentIntent.
type intentRec struct {
	ID                 string            `json:"id"`
	Template           json.RawMessage   `json:"template"`
	Created            int64             `json:"created"`
	Amount             int64             `json:"amount"`
	AmountCapturable   int64             `json:"amount_capturable"`
	AmountReceived     int64             `json:"amount_received"`
	Currency           string            `json:"currency"`
	CaptureMethod      string            `json:"capture_method"`
	Status             string            `json:"status"`
	Description        string            `json:"description,omitempty"`
	Metadata           map[string]string `json:"metadata"`
	PaymentMethod      string            `json:"payment_method,omitempty"`
	ClientSecret       string            `json:"client_secret"`
	CanceledAt         int64             `json:"canceled_at,omitempty"`
	CancellationReason string            `json:"cancellation_reason,omitempty"`
	LatestChargeID     string            `json:"latest_charge,omitempty"`
}

// chargeRec is the card charge behind an authorized PaymentIntent.
type chargeRec struct {
	ID              string            `json:"id"`
	Template        json.RawMessage   `json:"template"`
	Created         int64             `json:"created"`
	Amount          int64             `json:"amount"`
	AmountCaptured  int64             `json:"amount_captured"`
	Captured        bool              `json:"captured"`
	Currency        string            `json:"currency"`
	PaymentIntentID string            `json:"payment_intent"`
	PaymentMethod   string            `json:"payment_method"`
	CaptureBefore   int64             `json:"capture_before,omitempty"`
	Metadata        map[string]string `json:"metadata"`
}

// idemRec is a stored response for an idempotency key, replayed for a retry with the same
// parameters like Stripe does (Stripe keeps keys for at least 24 hours).
type idemRec struct {
	Created     int64           `json:"created"`
	Fingerprint string          `json:"fingerprint"`
	Status      int             `json:"status"`
	Body        json.RawMessage `json:"body"`
}

// loadState reads the state file, or returns a fresh state when there is none yet. A file
// that exists but cannot be read is an error: silently starting empty would lose payments.
func loadState(dir string) (*state, error) {
	b, err := os.ReadFile(filepath.Join(dir, StateFileName))
	if errors.Is(err, fs.ErrNotExist) {
		return newState(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("read local Stripe test double state: %w", err)
	}
	st := newState()
	if err := json.Unmarshal(b, st); err != nil {
		return nil, fmt.Errorf("parse local Stripe test double state %s: %w", filepath.Join(dir, StateFileName), err)
	}
	if st.Version != stateVersion {
		return nil, fmt.Errorf("local Stripe test double state %s has version %d, want %d",
			filepath.Join(dir, StateFileName), st.Version, stateVersion)
	}
	// Older files may lack a map; keep the invariant that all maps are non-nil.
	if st.Sessions == nil {
		st.Sessions = map[string]*sessionRec{}
	}
	if st.Intents == nil {
		st.Intents = map[string]*intentRec{}
	}
	if st.Charges == nil {
		st.Charges = map[string]*chargeRec{}
	}
	if st.Idempotency == nil {
		st.Idempotency = map[string]*idemRec{}
	}
	return st, nil
}

// saveState writes the state atomically: a temporary file in the same directory, fsync, then
// rename over the old file, so a crash leaves either the old or the new state, never half.
func saveState(dir string, st *state) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("encode local Stripe test double state: %w", err)
	}
	f, err := os.CreateTemp(dir, ".localstripe-state-*.tmp")
	if err != nil {
		return fmt.Errorf("write local Stripe test double state: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("write local Stripe test double state: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("write local Stripe test double state: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync local Stripe test double state: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close local Stripe test double state: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, StateFileName)); err != nil {
		return fmt.Errorf("replace local Stripe test double state: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // make the rename itself durable where the platform allows
		d.Close()
	}
	return nil
}
