package payment_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v76"
	"github.com/stripe/stripe-go/v76/webhook"

	"github.com/signoff/signoff/contracts/contractstest"
	"github.com/signoff/signoff/internal/payment"
)

const hookSecret = "whsec_test_signoff_unit"

func eventJSON(t *testing.T, id, typ, apiVersion string, obj map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"id": id, "object": "event", "api_version": apiVersion, "created": time.Now().Unix(),
		"type": typ, "livemode": false, "data": map[string]any{"object": obj},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func intentObj() map[string]any {
	return map[string]any{"id": "pi_hook1", "object": "payment_intent", "status": "requires_capture",
		"amount": 1999, "amount_capturable": 1999, "currency": "usd",
		"metadata": map[string]string{"contract_id": "ct-hook", "contract_hash": testHash}}
}

func post(t *testing.T, h http.Handler, body []byte, sig string) int {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/webhooks/stripe", bytes.NewReader(body))
	if sig != "" {
		req.Header.Set("Stripe-Signature", sig)
	}
	rr := httptest.NewRecorder()
	h.ServeHTTP(rr, req)
	return rr.Code
}

func sign(body []byte, secret string, at time.Time) string {
	return webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: at}).Header
}

func newHandler(t *testing.T, rec *recorder) http.Handler {
	t.Helper()
	h, err := payment.NewWebhookHandler(payment.WebhookConfig{Secret: hookSecret, OnEvent: rec.OnEvent, MaxBodyBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestWebhookRejectsForgeries(t *testing.T) {
	rec := newRecorder()
	h := newHandler(t, rec)
	body := eventJSON(t, "evt_1", "payment_intent.amount_capturable_updated", stripe.APIVersion, intentObj())
	tampered := bytes.Replace(body, []byte(`"amount_capturable":1999`), []byte(`"amount_capturable":9999`), 1)
	if bytes.Equal(tampered, body) {
		t.Fatal("tampering did not change the body")
	}
	otherVersion := eventJSON(t, "evt_2", "payment_intent.amount_capturable_updated", "2026-08-26.dahlia", intentObj())
	cases := map[string]struct {
		body []byte
		sig  string
	}{
		"no signature":     {body, ""},
		"wrong secret":     {body, sign(body, "whsec_someone_else", time.Now())},
		"old timestamp":    {body, sign(body, hookSecret, time.Now().Add(-10*time.Minute))},
		"tampered body":    {tampered, sign(body, hookSecret, time.Now())},
		"garbage header":   {body, "t=abc,v1=zz"},
		"other APIversion": {otherVersion, sign(otherVersion, hookSecret, time.Now())},
	}
	for name, tc := range cases {
		if code := post(t, h, tc.body, tc.sig); code != http.StatusBadRequest {
			t.Errorf("%s: HTTP %d, want 400", name, code)
		}
	}
	if n := rec.count(func(payment.Event) bool { return true }); n != 0 {
		t.Fatalf("callback called %d times for refused deliveries", n)
	}
	// The same body, correctly signed, is accepted: the refusals above were for the forgery.
	if code := post(t, h, body, sign(body, hookSecret, time.Now())); code != http.StatusOK {
		t.Fatalf("valid delivery: HTTP %d", code)
	}
}

func TestWebhookValidEventCallsOnce(t *testing.T) {
	rec := newRecorder()
	h := newHandler(t, rec)
	body := eventJSON(t, "evt_ok", "payment_intent.amount_capturable_updated", stripe.APIVersion, intentObj())
	if code := post(t, h, body, sign(body, hookSecret, time.Now())); code != http.StatusOK {
		t.Fatalf("valid delivery: HTTP %d", code)
	}
	// Stripe may deliver the same event again; the callback still runs once.
	if code := post(t, h, body, sign(body, hookSecret, time.Now())); code != http.StatusOK {
		t.Fatalf("redelivery: HTTP %d", code)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.events) != 1 {
		t.Fatalf("callback called %d times, want 1", len(rec.events))
	}
	ev := rec.events[0]
	want := payment.Event{ID: "evt_ok", Kind: payment.EventAuthorized, ContractID: "ct-hook", ContractHash: testHash,
		PaymentIntentID: "pi_hook1", AmountCapturable: 1999, Created: ev.Created}
	if ev != want {
		t.Fatalf("event = %+v\nwant    %+v", ev, want)
	}
}

func TestWebhookCheckoutCompleted(t *testing.T) {
	rec := newRecorder()
	h := newHandler(t, rec)
	body := eventJSON(t, "evt_cs", "checkout.session.completed", stripe.APIVersion, map[string]any{
		"id": "cs_test_1", "object": "checkout.session", "payment_intent": "pi_hook1", "status": "complete",
		"metadata": map[string]string{"contract_id": "ct-hook", "contract_hash": testHash}})
	if code := post(t, h, body, sign(body, hookSecret, time.Now())); code != http.StatusOK {
		t.Fatalf("HTTP %d", code)
	}
	ev := rec.waitFor(t, payment.EventCheckoutCompleted, "pi_hook1")
	if ev.CheckoutSessionID != "cs_test_1" || ev.ContractID != "ct-hook" {
		t.Fatalf("event = %+v", ev)
	}
}

func TestWebhookIgnoresOtherEvents(t *testing.T) {
	rec := newRecorder()
	h := newHandler(t, rec)
	for _, body := range [][]byte{
		eventJSON(t, "evt_a", "customer.created", stripe.APIVersion, map[string]any{"id": "cus_1", "object": "customer"}),
		// An intent without Signoff's metadata belongs to some other integration.
		eventJSON(t, "evt_b", "payment_intent.succeeded", stripe.APIVersion, map[string]any{"id": "pi_2", "object": "payment_intent"}),
	} {
		if code := post(t, h, body, sign(body, hookSecret, time.Now())); code != http.StatusOK {
			t.Fatalf("HTTP %d, want 200 (acknowledged)", code)
		}
	}
	if n := rec.count(func(payment.Event) bool { return true }); n != 0 {
		t.Fatalf("callback called %d times for unrelated events", n)
	}
}

func TestWebhookLimitsAndMethods(t *testing.T) {
	rec := newRecorder()
	h := newHandler(t, rec)
	big := eventJSON(t, "evt_big", "payment_intent.succeeded", stripe.APIVersion, map[string]any{
		"id": "pi_big", "object": "payment_intent", "description": strings.Repeat("x", 70<<10),
		"metadata": map[string]string{"contract_hash": testHash}})
	if code := post(t, h, big, sign(big, hookSecret, time.Now())); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized body: HTTP %d, want 413", code)
	}
	rr := httptest.NewRecorder()
	h.ServeHTTP(rr, httptest.NewRequest(http.MethodGet, "/webhooks/stripe", nil))
	if rr.Code != http.StatusMethodNotAllowed {
		t.Fatalf("GET: HTTP %d, want 405", rr.Code)
	}
	if n := rec.count(func(payment.Event) bool { return true }); n != 0 {
		t.Fatalf("callback called %d times", n)
	}
}

func TestWebhookCallbackFailureAsksForRedelivery(t *testing.T) {
	calls := 0
	h, err := payment.NewWebhookHandler(payment.WebhookConfig{Secret: hookSecret, OnEvent: func(context.Context, payment.Event) error {
		calls++
		if calls == 1 {
			return errors.New("workflow not reachable")
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	body := eventJSON(t, "evt_retry", "payment_intent.canceled", stripe.APIVersion, intentObj())
	if code := post(t, h, body, sign(body, hookSecret, time.Now())); code != http.StatusInternalServerError {
		t.Fatalf("failed callback: HTTP %d, want 500", code)
	}
	if code := post(t, h, body, sign(body, hookSecret, time.Now())); code != http.StatusOK || calls != 2 {
		t.Fatalf("redelivery after failure: HTTP %d, %d calls; want 200 and 2", code, calls)
	}
}

func TestWebhookConfigRequired(t *testing.T) {
	if _, err := payment.NewWebhookHandler(payment.WebhookConfig{OnEvent: newRecorder().OnEvent}); err == nil {
		t.Error("handler without a secret")
	}
	if _, err := payment.NewWebhookHandler(payment.WebhookConfig{Secret: hookSecret}); err == nil {
		t.Error("handler without a callback")
	}
}

// A payment webhook that is a nesting bomb is refused with the limit named, signed or not.
func TestWebhookRefusesAJSONBomb(t *testing.T) {
	h := newHandler(t, newRecorder())
	body := contractstest.DepthBomb(60 << 10) // under the handler's 64 KiB cap
	req := httptest.NewRequest(http.MethodPost, "/webhooks/stripe", bytes.NewReader(body))
	req.Header.Set("Stripe-Signature", sign(body, hookSecret, time.Now()))
	rr := httptest.NewRecorder()
	h.ServeHTTP(rr, req)
	if rr.Code != http.StatusBadRequest || !strings.Contains(rr.Body.String(), "nesting deeper than the limit") {
		t.Fatalf("%d %s, want 400 naming the depth limit", rr.Code, rr.Body)
	}
}
