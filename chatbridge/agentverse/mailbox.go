package agentverse

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/signoff/signoff/chatbridge/envelope"
	"github.com/signoff/signoff/chatbridge/identity"
	"github.com/signoff/signoff/chatbridge/transport"
)

// AttestationToken is compute_attestation: "attr:" + base64(pubkey33 || u64be(valid_from) ||
// u64be(valid_to) || nonce32) + ":" + Identity.sign(payload). Sent as "Authorization: Agent
// <token>" to prove the caller is the agent itself.
func AttestationToken(id *identity.Identity, validFrom time.Time, validity time.Duration, nonce []byte) (string, error) {
	if len(nonce) != 32 {
		return "", errors.New("agentverse: attestation nonce must be 32 bytes")
	}
	from := validFrom.Unix()
	payload := append(id.PublicKey(), make([]byte, 16)...)
	binary.BigEndian.PutUint64(payload[33:], uint64(from))
	binary.BigEndian.PutUint64(payload[41:], uint64(from+int64(validity/time.Second)))
	payload = append(payload, nonce...)
	sig, err := id.Sign(payload)
	if err != nil {
		return "", err
	}
	return "attr:" + base64.StdEncoding.EncodeToString(payload) + ":" + sig, nil
}

// StoredEnvelope is one mailbox item.
type StoredEnvelope struct {
	UUID       string          `json:"uuid"`
	Envelope   json.RawMessage `json:"envelope"`
	ReceivedAt string          `json:"received_at"`
	ExpiresAt  string          `json:"expires_at"`
}

// Mailbox polls GET /v2/agents/{address}/mailbox with agent attestation, hands each verified
// envelope to Deliver and deletes it (DELETE .../mailbox/{uuid}). Replies go directly to the
// peer's endpoint, as in the reference.
type Mailbox struct {
	Client *Client
	// Deliver receives each envelope (chatbridge.Bridge.Deliver verifies and dispatches). An
	// error wrapping transport.ErrRetryLater keeps the item for the next poll; any other error
	// means the envelope is bad and it is deleted (the reference leaves such items in place
	// and re-reads them forever).
	Deliver func(ctx context.Context, env *envelope.Envelope) error
	// Interval between polls; default 1 s (MAILBOX_POLL_INTERVAL_SECONDS).
	Interval time.Duration
	// Limit per poll; default 100.
	Limit  int
	Logger *slog.Logger

	mu       sync.Mutex
	token    string
	tokenExp time.Time
}

// validity matches the reference: 1000 poll intervals, refreshed with < 10 s left.
const attestationValidity = 1000 * time.Second

func (m *Mailbox) log() *slog.Logger {
	if m.Logger != nil {
		return m.Logger
	}
	return slog.New(slog.DiscardHandler)
}

func (m *Mailbox) attestation() (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.Client.now()
	if m.token != "" && m.tokenExp.Sub(now) >= 10*time.Second {
		return m.token, nil
	}
	nonce := make([]byte, 32)
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("agentverse: nonce: %w", err)
	}
	tok, err := AttestationToken(m.Client.Identity, now, attestationValidity, nonce)
	if err != nil {
		return "", err
	}
	m.token, m.tokenExp = tok, time.Unix(now.Unix(), 0).Add(attestationValidity)
	return tok, nil
}

// Run polls until ctx ends. Transient errors are logged and retried on the next tick.
func (m *Mailbox) Run(ctx context.Context) error {
	interval := m.Interval
	if interval <= 0 {
		interval = time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := m.PollOnce(ctx); err != nil && ctx.Err() == nil {
			m.log().Warn("mailbox poll failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// PollOnce fetches one page and processes it; it returns how many envelopes were delivered.
func (m *Mailbox) PollOnce(ctx context.Context) (int, error) {
	tok, err := m.attestation()
	if err != nil {
		return 0, err
	}
	limit := m.Limit
	if limit <= 0 {
		limit = 100
	}
	path := AgentsPath + "/" + m.Client.Identity.Address() + "/mailbox?" + url.Values{"limit": {strconv.Itoa(limit)}, "offset": {"0"}}.Encode()
	status, body, err := m.Client.do(ctx, http.MethodGet, path, nil, map[string]string{"Authorization": "Agent " + tok}, false)
	if err != nil {
		return 0, err
	}
	if status == http.StatusNotFound {
		return 0, errors.New("agentverse: mailbox not found (register the agent with Mailbox first)")
	}
	if status != http.StatusOK {
		return 0, &APIError{Method: "GET", Path: path, Status: status, Detail: detail(body)}
	}
	var items []StoredEnvelope
	if err := json.Unmarshal(body, &items); err != nil {
		return 0, fmt.Errorf("agentverse: mailbox listing: %w", err)
	}
	delivered := 0
	for _, it := range items {
		env, err := envelope.Decode(it.Envelope)
		if err == nil {
			err = m.Deliver(ctx, env)
		}
		if errors.Is(err, transport.ErrRetryLater) {
			m.log().Info("mailbox item kept for later", "uuid", it.UUID)
			continue
		}
		if err != nil {
			m.log().Warn("dropping invalid mailbox item", "uuid", it.UUID, "err", err)
		} else {
			delivered++
		}
		if derr := m.delete(ctx, tok, it.UUID); derr != nil {
			m.log().Warn("mailbox delete failed", "uuid", it.UUID, "err", derr)
		}
	}
	return delivered, nil
}

func (m *Mailbox) delete(ctx context.Context, tok, uuid string) error {
	path := AgentsPath + "/" + m.Client.Identity.Address() + "/mailbox/" + url.PathEscape(uuid)
	_, _, err := m.Client.do(ctx, http.MethodDelete, path, nil, map[string]string{"Authorization": "Agent " + tok}, true)
	return err
}
