// Package ledger is the local payment ledger: an authorize / capture / cancel state machine
// kept in a JSON file, idempotent by contract hash and action. It is labelled everywhere as
// local: no money moves. It stands in for a payment provider when none is configured, with the
// same rules a provider enforces (no capture after cancel, no second capture).
package ledger

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/activities/jsonfile"
)

// Label is shown wherever the ledger's state is shown.
const Label = "local ledger: no money moves"

// Provider is the provider name recorded in payment references.
const Provider = "local-ledger"

// ErrUnexpectedState is a transition the state machine refuses.
var ErrUnexpectedState = errors.New("payment is not in a state that allows this")

// ErrUnknown is a session or payment the ledger has never seen.
var ErrUnknown = errors.New("no such payment")

// Entry is one authorization.
type Entry struct {
	ContractID      string         `json:"contract_id"`
	ContractHash    string         `json:"contract_hash"`
	SessionID       string         `json:"checkout_session_id"`
	PaymentIntentID string         `json:"payment_intent_id"`
	Amount          int64          `json:"amount"`
	Currency        string         `json:"currency"`
	State           string         `json:"state"`
	CreatedAt       time.Time      `json:"created_at"`
	AuthorizedAt    time.Time      `json:"authorized_at,omitempty"`
	Captures        int            `json:"captures"`
	Keys            map[string]int `json:"idempotency_keys"` // key -> times applied
	Note            string         `json:"note"`
}

// Ledger is a file-backed ledger. Every operation locks the file, so the CLI and a running
// `signoff dev` can share it.
type Ledger struct {
	path string
	// CheckoutBase is where the local checkout page is served, e.g. http://127.0.0.1:8480.
	CheckoutBase string
	now          func() time.Time
}

// Open returns a ledger stored at path (created on first write).
func Open(path, checkoutBase string) *Ledger {
	return &Ledger{path: path, CheckoutBase: checkoutBase, now: time.Now}
}

type file struct {
	Label   string            `json:"label"`
	Entries map[string]*Entry `json:"entries"` // by session id
}

// update runs fn on the ledger's contents under an exclusive lock and writes them back.
func (l *Ledger) update(fn func(f *file) error) error {
	return jsonfile.Update(l.path, func(f *file) (bool, error) {
		f.Label = Label
		if f.Entries == nil {
			f.Entries = map[string]*Entry{}
		}
		return true, fn(f)
	})
}

func sessionID(hash string) string { return "cs_local_" + hash[:24] }
func intentID(hash string) string  { return "pi_local_" + hash[:24] }

func (l *Ledger) state(e *Entry) activities.PaymentState {
	ps := activities.PaymentState{Provider: Provider, Local: true, CheckoutSessionID: e.SessionID,
		CheckoutURL: l.CheckoutBase + "/checkout/" + e.SessionID, PaymentIntentID: e.PaymentIntentID, State: e.State}
	if !e.AuthorizedAt.IsZero() {
		ps.AuthorizedAt = e.AuthorizedAt.UTC().Format(time.RFC3339)
	}
	return ps
}

// Authorize opens (or returns the existing) checkout for the contract hash.
func (l *Ledger) Authorize(ctx context.Context, req activities.AuthorizeRequest) (activities.PaymentState, error) {
	if len(req.ContractHash) < 24 {
		return activities.PaymentState{}, activities.Refused(fmt.Errorf("contract hash %q is too short", req.ContractHash))
	}
	var out activities.PaymentState
	err := l.update(func(f *file) error {
		id := sessionID(req.ContractHash)
		e, ok := f.Entries[id]
		if !ok {
			e = &Entry{ContractID: req.ContractID, ContractHash: req.ContractHash, SessionID: id, PaymentIntentID: intentID(req.ContractHash),
				Amount: req.Price.Amount, Currency: req.Price.Currency, State: activities.PaymentPending, CreatedAt: l.now().UTC(),
				Keys: map[string]int{}, Note: Label}
			f.Entries[id] = e
		}
		e.Keys[req.ContractHash+":authorize"]++
		out = l.state(e)
		return nil
	})
	return out, err
}

// MarkAuthorized is the local checkout completing: the card is authorized, nothing is charged.
func (l *Ledger) MarkAuthorized(idOrContract string) (activities.PaymentState, error) {
	var out activities.PaymentState
	err := l.update(func(f *file) error {
		e := find(f, idOrContract)
		if e == nil {
			return fmt.Errorf("%w: %s", ErrUnknown, idOrContract)
		}
		switch e.State {
		case activities.PaymentPending:
			e.State = activities.PaymentAuthorized
			e.AuthorizedAt = l.now().UTC()
		case activities.PaymentAuthorized:
		default:
			return fmt.Errorf("%w: %s is %s", ErrUnexpectedState, e.SessionID, e.State)
		}
		out = l.state(e)
		return nil
	})
	return out, err
}

func find(f *file, id string) *Entry {
	if e, ok := f.Entries[id]; ok {
		return e
	}
	for _, e := range f.Entries {
		if e.PaymentIntentID == id || e.ContractID == id || e.ContractHash == id {
			return e
		}
	}
	return nil
}

// Status reads an authorization.
func (l *Ledger) Status(ctx context.Context, contractHash, session string) (activities.PaymentState, error) {
	var out activities.PaymentState
	err := l.update(func(f *file) error {
		e := find(f, session)
		if e == nil || e.ContractHash != contractHash {
			return activities.Refused(fmt.Errorf("%w: %s for contract %s", ErrUnknown, session, contractHash))
		}
		out = l.state(e)
		return nil
	})
	return out, err
}

// Capture takes the authorized amount. Repeating it with the same contract hash is a no-op
// that returns the captured state, so a retried activity captures once.
func (l *Ledger) Capture(ctx context.Context, a activities.PaymentAction) (activities.PaymentState, error) {
	return l.transition(a, "capture", activities.PaymentCaptured, activities.PaymentAuthorized)
}

// Cancel releases the authorization (or closes a checkout never paid). Idempotent likewise.
func (l *Ledger) Cancel(ctx context.Context, a activities.PaymentAction) (activities.PaymentState, error) {
	return l.transition(a, "cancel", activities.PaymentCanceled, activities.PaymentAuthorized, activities.PaymentPending)
}

func (l *Ledger) transition(a activities.PaymentAction, action, to string, from ...string) (activities.PaymentState, error) {
	var out activities.PaymentState
	err := l.update(func(f *file) error {
		e := find(f, a.SessionID)
		if e == nil {
			e = find(f, a.PaymentIntentID)
		}
		if e == nil || e.ContractHash != a.ContractHash {
			return activities.Refused(fmt.Errorf("%w: %s / %s", ErrUnknown, a.SessionID, a.PaymentIntentID))
		}
		key := a.ContractHash + ":" + action
		if e.State == to && e.Keys[key] > 0 {
			out = l.state(e) // a retry of an applied action
			return nil
		}
		allowed := false
		for _, s := range from {
			allowed = allowed || e.State == s
		}
		if !allowed {
			return activities.PaymentStateError(fmt.Errorf("%w: cannot %s a payment that is %s (%s)", ErrUnexpectedState, action, e.State, Label))
		}
		e.State = to
		e.Keys[key]++
		if to == activities.PaymentCaptured {
			e.Captures++
		}
		out = l.state(e)
		return nil
	})
	return out, err
}

// Entries lists every authorization, oldest first.
func (l *Ledger) Entries() ([]Entry, error) {
	var out []Entry
	err := l.update(func(f *file) error {
		for _, e := range f.Entries {
			out = append(out, *e)
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, err
}
