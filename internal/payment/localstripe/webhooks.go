package localstripe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/stripe/stripe-go/v76"
	"github.com/stripe/stripe-go/v76/webhook"
)

// hookDelays are the waits before each delivery attempt. Stripe retries for days; a local
// double gives up after about 15 s, and Signoff's Status polling covers a lost event.
var hookDelays = []time.Duration{0, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}

// outEvent is a signed-on-send webhook event waiting for delivery.
type outEvent struct {
	id      string
	typ     string
	payload []byte
}

// emit records an event about obj (already rendered, so it is a snapshot of this moment). It
// is sent by flushEvents once the state that produced it is saved. Callers hold s.mu.
func (s *Server) emit(typ string, obj map[string]any) {
	id := "evt_" + randToken(24)
	b, err := json.Marshal(map[string]any{
		"id":               id,
		"object":           "event",
		"api_version":      stripe.APIVersion, // what stripe-go v76 expects; see webhook.ConstructEvent
		"created":          s.now().Unix(),
		"data":             map[string]any{"object": obj},
		"livemode":         false,
		"pending_webhooks": 1,
		"request":          map[string]any{"id": nil, "idempotency_key": nil},
		"type":             typ,
	})
	if err != nil {
		s.logf(slog.LevelError, "encode event", "type", typ, "err", err)
		return
	}
	s.outbox = append(s.outbox, outEvent{id: id, typ: typ, payload: b})
}

// flushEvents starts delivering the pending events in order. Callers hold s.mu.
func (s *Server) flushEvents() {
	evs := s.outbox
	s.outbox = nil
	if len(evs) == 0 {
		return
	}
	target, secret := s.webhookURL, s.st.WebhookSecret
	if target == "" {
		for _, ev := range evs {
			s.logf(slog.LevelInfo, "event not delivered: no webhook URL set", "event", ev.id, "type", ev.typ)
		}
		return
	}
	s.hookWG.Add(1)
	go func() {
		defer s.hookWG.Done()
		for _, ev := range evs {
			s.deliver(target, secret, ev)
		}
	}()
}

// deliver POSTs one event with a fresh Stripe-Signature per attempt, like Stripe does.
func (s *Server) deliver(target, secret string, ev outEvent) {
	for i, d := range hookDelays {
		select {
		case <-s.hookCtx.Done():
			s.logf(slog.LevelWarn, "event abandoned at shutdown", "event", ev.id, "type", ev.typ)
			return
		case <-time.After(d):
		}
		err := s.post(target, secret, ev)
		if err == nil {
			s.logf(slog.LevelInfo, "event delivered", "event", ev.id, "type", ev.typ, "attempt", i+1)
			return
		}
		s.logf(slog.LevelWarn, "event delivery failed", "event", ev.id, "type", ev.typ, "attempt", i+1, "err", err)
	}
	s.logf(slog.LevelWarn, "event given up; Status polling will still see the change", "event", ev.id, "type", ev.typ)
}

func (s *Server) post(target, secret string, ev outEvent) error {
	// Signatures use the wall clock even when the double's object clock is shifted in tests:
	// the receiver checks them against its own wall clock.
	signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: ev.payload, Secret: secret, Timestamp: time.Now()})
	req, err := http.NewRequestWithContext(s.hookCtx, http.MethodPost, target, bytes.NewReader(ev.payload))
	if err != nil {
		return fmt.Errorf("build webhook request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Stripe-Signature", signed.Header)
	req.Header.Set("User-Agent", "Signoff-localstripe/1 (local Stripe test double; no money moves)")
	resp, err := s.hooks.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("webhook endpoint answered HTTP %d", resp.StatusCode)
	}
	return nil
}
