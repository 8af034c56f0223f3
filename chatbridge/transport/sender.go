package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/signoff/signoff/chatbridge/chatproto"
	"github.com/signoff/signoff/chatbridge/envelope"
	"github.com/signoff/signoff/chatbridge/identity"
)

// Resolver maps an agent address to the URLs its envelopes are POSTed to, best first.
// almanac.APIResolver and almanac.Registry implement it.
type Resolver interface {
	Resolve(ctx context.Context, address string) ([]string, error)
}

// Static is a fixed address -> endpoint URLs map (configuration, tests).
type Static map[string][]string

// Resolve implements Resolver.
func (s Static) Resolve(_ context.Context, address string) ([]string, error) {
	if urls := s[address]; len(urls) > 0 {
		return append([]string(nil), urls...), nil
	}
	return nil, fmt.Errorf("transport: no endpoint configured for %s", address)
}

// FirstOf asks each resolver in turn and returns the first non-empty answer.
type FirstOf []Resolver

// Resolve implements Resolver.
func (f FirstOf) Resolve(ctx context.Context, address string) ([]string, error) {
	var errs []error
	for _, r := range f {
		urls, err := r.Resolve(ctx, address)
		if err == nil && len(urls) > 0 {
			return urls, nil
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		errs = append(errs, errors.New("no resolver configured"))
	}
	return nil, fmt.Errorf("transport: resolve %s: %w", address, errors.Join(errs...))
}

// Retry bounds delivery attempts; each attempt resolves again and tries every endpoint.
type Retry struct {
	Attempts int           // default 5
	Initial  time.Duration // first backoff, default 250ms, doubled each time
	Max      time.Duration // backoff cap, default 5s
}

func (r Retry) withDefaults() Retry {
	if r.Attempts <= 0 {
		r.Attempts = 5
	}
	if r.Initial <= 0 {
		r.Initial = 250 * time.Millisecond
	}
	if r.Max <= 0 {
		r.Max = 5 * time.Second
	}
	return r
}

// RejectedError means every endpoint answered with a client error (4xx other than 408/429):
// the peer refused this envelope and retrying it cannot help.
type RejectedError struct {
	Target string
	Status int
	Body   string
}

func (e *RejectedError) Error() string {
	return fmt.Sprintf("transport: %s rejected the envelope: HTTP %d %s", e.Target, e.Status, e.Body)
}

// Sender signs envelopes with its identity and delivers them like send_exchange_envelope:
// POST the envelope JSON to each resolved endpoint until one answers 200.
type Sender struct {
	Identity *identity.Identity
	Resolver Resolver
	// Client defaults to one with a 10 s timeout.
	Client *http.Client
	Retry  Retry
	// TTL sets expires = now + TTL (uagents' DEFAULT_ENVELOPE_TIMEOUT_SECONDS = 30).
	TTL time.Duration
	// Now is the clock; defaults to time.Now.
	Now func() time.Time
}

// Seal builds and signs an envelope for msg. protocolDigest may be "" (sent as null, as
// uagents does for proactive sends).
func (s *Sender) Seal(target, session string, msg chatproto.Message, protocolDigest string) (*envelope.Envelope, error) {
	payload, err := msg.MarshalPython()
	if err != nil {
		return nil, fmt.Errorf("transport: encode message: %w", err)
	}
	env, err := envelope.New(s.Identity.Address(), target, session, msg.SchemaDigest(), payload)
	if err != nil {
		return nil, err
	}
	if protocolDigest != "" {
		env.ProtocolDigest = &protocolDigest
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	ttl := s.TTL
	if ttl <= 0 {
		ttl = 30 * time.Second
	}
	exp := now().Add(ttl).Unix()
	env.Expires = &exp
	if err := env.Sign(s.Identity); err != nil {
		return nil, err
	}
	return env, nil
}

// Send seals msg and delivers it to target.
func (s *Sender) Send(ctx context.Context, target, session string, msg chatproto.Message, protocolDigest string) (*envelope.Envelope, error) {
	env, err := s.Seal(target, session, msg, protocolDigest)
	if err != nil {
		return nil, err
	}
	return env, s.Deliver(ctx, env)
}

// Deliver posts a sealed envelope, retrying with exponential backoff. It stops early on
// context cancellation or a *RejectedError.
func (s *Sender) Deliver(ctx context.Context, env *envelope.Envelope) error {
	body, err := env.Encode()
	if err != nil {
		return err
	}
	retry := s.Retry.withDefaults()
	backoff := retry.Initial
	var last error
	for attempt := 1; ; attempt++ {
		last = s.attempt(ctx, env.Target, body)
		var rejected *RejectedError
		if last == nil || errors.As(last, &rejected) || attempt >= retry.Attempts {
			break
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("transport: deliver to %s: %w (last error: %v)", env.Target, ctx.Err(), last)
		case <-t.C:
		}
		backoff = min(2*backoff, retry.Max)
	}
	if last != nil {
		return fmt.Errorf("transport: deliver to %s: %w", env.Target, last)
	}
	return nil
}

func (s *Sender) attempt(ctx context.Context, target string, body []byte) error {
	if s.Resolver == nil {
		return errors.New("no resolver")
	}
	urls, err := s.Resolver.Resolve(ctx, target)
	if err != nil {
		return err
	}
	if len(urls) == 0 {
		return fmt.Errorf("no endpoints for %s", target)
	}
	client := s.Client
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	var errs []error
	var rejected *RejectedError
	transient := false
	for _, u := range urls {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
		if err != nil {
			errs = append(errs, err)
			transient = true
			continue
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			errs = append(errs, err)
			transient = true
			continue
		}
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return nil
		}
		errs = append(errs, fmt.Errorf("%s: HTTP %d %s", u, resp.StatusCode, strings.TrimSpace(string(msg))))
		if resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusRequestTimeout && resp.StatusCode != http.StatusTooManyRequests {
			if rejected == nil {
				rejected = &RejectedError{Target: target, Status: resp.StatusCode, Body: strings.TrimSpace(string(msg))}
			}
		} else {
			transient = true
		}
	}
	if rejected != nil && !transient {
		return rejected
	}
	return errors.Join(errs...)
}
