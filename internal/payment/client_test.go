package payment_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v76"
	"github.com/stripe/stripe-go/v76/client"

	"github.com/signoff/signoff/internal/payment"
	"github.com/signoff/signoff/internal/payment/localstripe"
)

const testHash = "3f1c8e0d6a7b4c2e9f0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6a"

var (
	mockOnce sync.Once
	mock     *localstripe.StripeMock
	mockErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if mock != nil {
		_ = mock.Stop()
	}
	os.Exit(code)
}

// mockURL starts one stripe-mock for the package, or skips (-short) / fails with the setup
// command when it is not installed.
func mockURL(t *testing.T) string {
	t.Helper()
	path, err := localstripe.FindStripeMock("")
	if err != nil {
		if testing.Short() {
			t.Skipf("skipping in -short mode: %v", err)
		}
		t.Fatalf("these tests need stripe-mock: %v", err)
	}
	mockOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		mock, mockErr = localstripe.StartStripeMock(ctx, path, nil)
	})
	if mockErr != nil {
		t.Fatalf("start stripe-mock: %v", mockErr)
	}
	return mock.URL()
}

// recorder is the webhook callback: it keeps every event and wakes waiters.
type recorder struct {
	mu     sync.Mutex
	events []payment.Event
	notify chan struct{}
}

func newRecorder() *recorder { return &recorder{notify: make(chan struct{}, 1)} }

func (r *recorder) OnEvent(_ context.Context, ev payment.Event) error {
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
	select {
	case r.notify <- struct{}{}:
	default:
	}
	return nil
}

func (r *recorder) count(match func(payment.Event) bool) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, ev := range r.events {
		if match(ev) {
			n++
		}
	}
	return n
}

// waitFor blocks until an event matching kind and payment intent arrives, or fails.
func (r *recorder) waitFor(t *testing.T, kind payment.EventKind, pi string) payment.Event {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		r.mu.Lock()
		for _, ev := range r.events {
			if ev.Kind == kind && ev.PaymentIntentID == pi {
				r.mu.Unlock()
				return ev
			}
		}
		r.mu.Unlock()
		select {
		case <-r.notify:
		case <-deadline:
			t.Fatalf("no %s event for %s within 20s", kind, pi)
		}
	}
}

type env struct {
	srv  *localstripe.Server
	pc   *payment.Client
	rec  *recorder
	dir  string
	hook *httptest.Server
}

type envOpts struct {
	noWebhook bool                  // simulate lost webhooks: the double has nowhere to send them
	doubleNow func() time.Time      // the double's clock
	client    func(*payment.Config) // adjust the client config
}

func newEnv(t *testing.T, o envOpts) *env {
	t.Helper()
	e := &env{rec: newRecorder(), dir: t.TempDir()}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := localstripe.Start(ctx, localstripe.Config{DataDir: e.dir, StripeMockURL: mockURL(t), Now: o.doubleNow})
	if err != nil {
		t.Fatalf("start local Stripe test double: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	e.srv = srv
	if !o.noWebhook {
		h, err := payment.NewWebhookHandler(payment.WebhookConfig{Secret: srv.WebhookSecret(), OnEvent: e.rec.OnEvent})
		if err != nil {
			t.Fatal(err)
		}
		e.hook = httptest.NewServer(h)
		t.Cleanup(e.hook.Close)
		if err := srv.SetWebhookURL(e.hook.URL); err != nil {
			t.Fatal(err)
		}
	}
	cfg := payment.Config{APIKey: srv.APIKey(), BaseURL: srv.URL(), MaxNetworkRetries: stripe.Int64(0)}
	if o.client != nil {
		o.client(&cfg)
	}
	if e.pc, err = payment.New(cfg); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) request(contractID string) payment.AuthorizeRequest {
	return payment.AuthorizeRequest{
		ContractID: contractID, ContractHash: testHash, Amount: 1999, Currency: "usd",
		Description: "Verified change: dark mode toggle", SuccessURL: "http://127.0.0.1:9/paid?cs={CHECKOUT_SESSION_ID}",
		CancelURL: "http://127.0.0.1:9/cancel",
	}
}

// authorizeAndPay runs the checkout and completes it as the payer would.
func (e *env) authorizeAndPay(t *testing.T) (payment.Authorization, string) {
	t.Helper()
	a, err := e.pc.Authorize(context.Background(), e.request("ct-001"))
	if err != nil {
		t.Fatalf("Authorize: %v", err)
	}
	paid, err := localstripe.MarkPaid(context.Background(), a.CheckoutURL)
	if err != nil {
		t.Fatalf("MarkPaid: %v", err)
	}
	return a, paid.PaymentIntentID
}

func (e *env) stripe() *client.API {
	return client.New(e.srv.APIKey(), stripe.NewBackendsWithConfig(&stripe.BackendConfig{
		URL: stripe.String(e.srv.URL()), MaxNetworkRetries: stripe.Int64(0),
		LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull},
	}))
}

func wantKind(t *testing.T, err, kind error) *payment.Error {
	t.Helper()
	var pe *payment.Error
	if !errors.Is(err, kind) || !errors.As(err, &pe) || !payment.NonRetryable(err) {
		t.Fatalf("error = %v, want a non-retryable %v", err, kind)
	}
	return pe
}

func TestAuthorizePayCapture(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := context.Background()
	a, err := e.pc.Authorize(ctx, e.request("ct-001"))
	if err != nil {
		t.Fatalf("Authorize: %v", err)
	}
	if !strings.HasPrefix(a.CheckoutURL, e.srv.URL()+"/checkout/cs_") || a.PaymentIntentID != "" {
		t.Fatalf("authorization = %+v; want a local checkout link and no payment intent yet", a)
	}
	if d := time.Until(a.ExpiresAt); d < 23*time.Hour || d > 25*time.Hour {
		t.Fatalf("checkout expires in %s, want about 24h", d)
	}
	st, err := e.pc.Status(ctx, a.CheckoutSessionID)
	if err != nil || st.State != payment.StatePending || st.ContractHash != testHash || st.Amount != 1999 {
		t.Fatalf("Status before payment = %+v, %v; want pending 1999 with the hash", st, err)
	}

	paid, err := localstripe.MarkPaid(ctx, a.CheckoutURL)
	if err != nil {
		t.Fatalf("MarkPaid: %v", err)
	}
	pi := paid.PaymentIntentID
	ev := e.rec.waitFor(t, payment.EventAuthorized, pi)
	if ev.ContractID != "ct-001" || ev.ContractHash != testHash || ev.AmountCapturable != 1999 {
		t.Fatalf("authorized event = %+v", ev)
	}
	done := e.rec.waitFor(t, payment.EventCheckoutCompleted, pi)
	if done.CheckoutSessionID != a.CheckoutSessionID {
		t.Fatalf("checkout.session.completed for %s, want %s", done.CheckoutSessionID, a.CheckoutSessionID)
	}

	st, err = e.pc.Status(ctx, a.CheckoutSessionID)
	if err != nil || st.State != payment.StateAuthorized || st.PaymentIntentID != pi || st.AmountCapturable != 1999 {
		t.Fatalf("Status after payment = %+v, %v; want authorized, capturable 1999", st, err)
	}
	if time.Since(st.AuthorizedAt) > time.Minute || st.CaptureBefore.Sub(st.AuthorizedAt) != 7*24*time.Hour {
		t.Fatalf("authorized at %s, capture before %s; want now and +7 days", st.AuthorizedAt, st.CaptureBefore)
	}

	got, err := e.pc.Capture(ctx, testHash, pi)
	if err != nil {
		t.Fatalf("Capture: %v", err)
	}
	if got.State != payment.StateCaptured || got.AmountReceived != 1999 || got.AmountCapturable != 0 {
		t.Fatalf("after capture = %+v; want captured, received 1999", got)
	}
	e.rec.waitFor(t, payment.EventCaptured, pi)
	st, err = e.pc.Status(ctx, pi)
	if err != nil || st.State != payment.StateCaptured || st.StripeStatus != "succeeded" {
		t.Fatalf("Status by intent = %+v, %v", st, err)
	}
}

func TestAuthorizeIsIdempotentPerContract(t *testing.T) {
	e := newEnv(t, envOpts{noWebhook: true})
	ctx := context.Background()
	r := e.request("ct-002")
	a1, err := e.pc.Authorize(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	a2, err := e.pc.Authorize(ctx, r) // a retried activity
	if err != nil || a2.CheckoutSessionID != a1.CheckoutSessionID {
		t.Fatalf("retried Authorize = %+v, %v; want the same session %s", a2, err, a1.CheckoutSessionID)
	}
	r.Attempt = 1
	a3, err := e.pc.Authorize(ctx, r)
	if err != nil || a3.CheckoutSessionID == a1.CheckoutSessionID {
		t.Fatalf("Attempt 1 = %+v, %v; want a new session", a3, err)
	}
	r.Attempt = 0
	r.Amount = 2999 // same contract hash and action, different terms: Stripe refuses the key
	_, err = e.pc.Authorize(ctx, r)
	pe := wantKind(t, err, payment.ErrInvalidRequest)
	if pe.StripeType != string(stripe.ErrorTypeIdempotency) {
		t.Fatalf("stripe type = %q, want idempotency_error", pe.StripeType)
	}
}

func TestCancelThenCaptureIsRefused(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := context.Background()
	_, pi := e.authorizeAndPay(t)
	st, err := e.pc.Cancel(ctx, testHash, pi, payment.ReasonAbandoned)
	if err != nil || st.State != payment.StateCanceled || st.CancellationReason != "abandoned" || st.AmountCapturable != 0 {
		t.Fatalf("Cancel = %+v, %v; want canceled (abandoned)", st, err)
	}
	e.rec.waitFor(t, payment.EventCanceled, pi)
	if st, err := e.pc.Cancel(ctx, testHash, pi, payment.ReasonAbandoned); err != nil || st.State != payment.StateCanceled {
		t.Fatalf("second Cancel = %+v, %v; want canceled, no error", st, err)
	}
	_, err = e.pc.Capture(ctx, testHash, pi)
	pe := wantKind(t, err, payment.ErrUnexpectedState)
	if pe.Code != "payment_intent_unexpected_state" || pe.HTTPStatus != 400 || pe.Status != "canceled" || pe.Type() != "payment.unexpected_state" {
		t.Fatalf("capture-after-cancel error = %+v", pe)
	}
	if st, err := e.pc.Status(ctx, pi); err != nil || st.State != payment.StateCanceled || st.AmountReceived != 0 {
		t.Fatalf("after refused capture: %+v, %v", st, err)
	}
}

func TestCancelCapturedIsRefused(t *testing.T) {
	e := newEnv(t, envOpts{noWebhook: true})
	ctx := context.Background()
	_, pi := e.authorizeAndPay(t)
	if _, err := e.pc.Capture(ctx, testHash, pi); err != nil {
		t.Fatal(err)
	}
	_, err := e.pc.Cancel(ctx, testHash, pi, payment.ReasonAbandoned)
	wantKind(t, err, payment.ErrUnexpectedState)
}

func TestCancelUnpaidCheckoutExpiresIt(t *testing.T) {
	e := newEnv(t, envOpts{noWebhook: true})
	ctx := context.Background()
	a, err := e.pc.Authorize(ctx, e.request("ct-003"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := e.pc.Cancel(ctx, testHash, a.CheckoutSessionID, payment.ReasonAbandoned)
	if err != nil || st.State != payment.StateExpired {
		t.Fatalf("Cancel(unpaid checkout) = %+v, %v; want expired", st, err)
	}
	if _, err := localstripe.MarkPaid(ctx, a.CheckoutURL); err == nil {
		t.Fatal("an expired checkout could still be paid")
	}
	if st, err := e.pc.Cancel(ctx, testHash, a.CheckoutSessionID, payment.ReasonAbandoned); err != nil || st.State != payment.StateExpired {
		t.Fatalf("second Cancel = %+v, %v", st, err)
	}
}

func TestRetriedCaptureCapturesOnce(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := context.Background()
	_, pi := e.authorizeAndPay(t)
	e.rec.waitFor(t, payment.EventAuthorized, pi)

	// The same request twice under the key the Client derives, straight through stripe-go:
	// the double replays the first answer instead of capturing again.
	key := payment.IdempotencyKey(testHash, "capture", pi)
	capture := func() *stripe.PaymentIntent {
		p := &stripe.PaymentIntentCaptureParams{}
		p.SetIdempotencyKey(key)
		p.AddExpand("latest_charge")
		got, err := e.stripe().PaymentIntents.Capture(pi, p)
		if err != nil {
			t.Fatalf("capture with key %s: %v", key, err)
		}
		return got
	}
	first, second := capture(), capture()
	if first.Status != stripe.PaymentIntentStatusSucceeded || first.AmountReceived != 1999 {
		t.Fatalf("first capture: %s received %d", first.Status, first.AmountReceived)
	}
	if second.LastResponse.Header.Get("Idempotent-Replayed") != "true" || string(second.LastResponse.RawJSON) != string(first.LastResponse.RawJSON) {
		t.Fatal("second capture with the same key was not a replay of the first")
	}
	// The Client's own retry (an activity retried after a lost answer) reports success too.
	st, err := e.pc.Capture(ctx, testHash, pi)
	if err != nil || st.State != payment.StateCaptured || st.AmountReceived != 1999 {
		t.Fatalf("Client.Capture retry = %+v, %v", st, err)
	}
	// A capture under a different key proves the intent is captured exactly once.
	p := &stripe.PaymentIntentCaptureParams{}
	p.SetIdempotencyKey("some-other-key")
	_, err = e.stripe().PaymentIntents.Capture(pi, p)
	var se *stripe.Error
	if !errors.As(err, &se) || se.Code != stripe.ErrorCodePaymentIntentUnexpectedState {
		t.Fatalf("fresh capture of a captured intent: %v; want payment_intent_unexpected_state", err)
	}
	e.rec.waitFor(t, payment.EventCaptured, pi)
	if n := e.rec.count(func(ev payment.Event) bool { return ev.Kind == payment.EventCaptured && ev.PaymentIntentID == pi }); n != 1 {
		t.Fatalf("%d payment_intent.succeeded events, want 1", n)
	}
}

func TestUnknownIDIsNotFound(t *testing.T) {
	e := newEnv(t, envOpts{noWebhook: true})
	ctx := context.Background()
	_, err := e.pc.Status(ctx, "pi_doesnotexist000000000")
	pe := wantKind(t, err, payment.ErrNotFound)
	if pe.HTTPStatus != 404 || pe.Code != "resource_missing" {
		t.Fatalf("unknown intent error = %+v", pe)
	}
	_, err = e.pc.Capture(ctx, testHash, "pi_doesnotexist000000000")
	wantKind(t, err, payment.ErrNotFound)
	_, err = e.pc.Status(ctx, "cs_test_doesnotexist")
	wantKind(t, err, payment.ErrNotFound)
	_, err = e.pc.Status(ctx, "ch_wrongkind")
	wantKind(t, err, payment.ErrInvalidRequest)
}

func TestStripeMockValidationPassesThrough(t *testing.T) {
	e := newEnv(t, envOpts{noWebhook: true})
	_, err := e.stripe().CheckoutSessions.New(&stripe.CheckoutSessionParams{
		Mode:       stripe.String("payment"),
		SuccessURL: stripe.String("http://127.0.0.1:9/ok"),
		LineItems: []*stripe.CheckoutSessionLineItemParams{{Quantity: stripe.Int64(1),
			PriceData: &stripe.CheckoutSessionLineItemPriceDataParams{Currency: stripe.String("usd"), UnitAmount: stripe.Int64(100),
				ProductData: &stripe.CheckoutSessionLineItemPriceDataProductDataParams{Name: stripe.String("x")}}}},
		PaymentIntentData: &stripe.CheckoutSessionPaymentIntentDataParams{CaptureMethod: stripe.String("bogus")},
	})
	var se *stripe.Error
	if !errors.As(err, &se) || se.HTTPStatusCode != 400 || se.Type != stripe.ErrorTypeInvalidRequest ||
		!strings.Contains(se.Msg, "capture_method") || !strings.Contains(se.Msg, "not in enumeration") {
		t.Fatalf("bogus capture_method: %v; want stripe-mock's 400 validation error", err)
	}
	_, err = e.stripe().PaymentIntents.New(&stripe.PaymentIntentParams{Currency: stripe.String("usd")})
	if !errors.As(err, &se) || se.HTTPStatusCode != 400 || !strings.Contains(se.Msg, "amount") {
		t.Fatalf("intent without amount: %v; want stripe-mock's 400", err)
	}
	// Nothing was stored for the refused requests.
	b, err := os.ReadFile(filepath.Join(e.dir, localstripe.StateFileName))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Sessions map[string]json.RawMessage `json:"checkout_sessions"`
		Intents  map[string]json.RawMessage `json:"payment_intents"`
	}
	if err := json.Unmarshal(b, &st); err != nil || len(st.Sessions)+len(st.Intents) != 0 {
		t.Fatalf("state after refused requests: %v, %d sessions, %d intents; want none", err, len(st.Sessions), len(st.Intents))
	}
}

func TestPollFindsAuthorizationWhenWebhookLost(t *testing.T) {
	e := newEnv(t, envOpts{noWebhook: true})
	a, pi := e.authorizeAndPay(t)
	st, err := e.pc.Status(context.Background(), a.CheckoutSessionID)
	if err != nil || st.State != payment.StateAuthorized || st.PaymentIntentID != pi || st.ContractID != "ct-001" {
		t.Fatalf("polled Status = %+v, %v; want authorized %s for ct-001", st, err, pi)
	}
	if n := e.rec.count(func(payment.Event) bool { return true }); n != 0 {
		t.Fatalf("%d events delivered with no webhook configured", n)
	}
}

func TestCaptureNearExpiryIsRefused(t *testing.T) {
	var shift time.Duration // how far the client's clock is ahead
	e := newEnv(t, envOpts{noWebhook: true, client: func(c *payment.Config) {
		c.Now = func() time.Time { return time.Now().Add(shift) }
	}})
	ctx := context.Background()
	_, pi := e.authorizeAndPay(t)

	shift = 7*24*time.Hour - 6*time.Hour // 6 h before expiry, inside the 12 h margin
	_, err := e.pc.Capture(ctx, testHash, pi)
	pe := wantKind(t, err, payment.ErrAuthorizationExpiring)
	if time.Until(pe.CaptureBefore) < 7*24*time.Hour-time.Minute {
		t.Fatalf("reported capture_before %s", pe.CaptureBefore)
	}
	if st, err := e.pc.Status(ctx, pi); err != nil || st.State != payment.StateAuthorized || st.AmountCapturable != 1999 {
		t.Fatalf("refused capture changed the payment: %+v, %v", st, err)
	}
	shift = 6 * 24 * time.Hour // a day before expiry: allowed
	if st, err := e.pc.Capture(ctx, testHash, pi); err != nil || st.State != payment.StateCaptured {
		t.Fatalf("capture a day before expiry = %+v, %v", st, err)
	}
}

func TestExpiryMarginIsConfigurable(t *testing.T) {
	e := newEnv(t, envOpts{noWebhook: true, client: func(c *payment.Config) {
		c.ExpiryMargin = 36 * time.Hour
		c.Now = func() time.Time { return time.Now().Add(6 * 24 * time.Hour) }
	}})
	_, pi := e.authorizeAndPay(t)
	_, err := e.pc.Capture(context.Background(), testHash, pi)
	wantKind(t, err, payment.ErrAuthorizationExpiring)
}

func TestLapsedAuthorizationIsExpired(t *testing.T) {
	var mu sync.Mutex
	clock := time.Now()
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	e := newEnv(t, envOpts{noWebhook: true, doubleNow: now, client: func(c *payment.Config) { c.Now = now }})
	ctx := context.Background()
	_, pi := e.authorizeAndPay(t)
	mu.Lock()
	clock = clock.Add(7*24*time.Hour + time.Minute)
	mu.Unlock()
	st, err := e.pc.Status(ctx, pi)
	if err != nil || st.State != payment.StateExpired || st.CancellationReason != "automatic" {
		t.Fatalf("Status after 7 days = %+v, %v; want expired (automatic)", st, err)
	}
	_, err = e.pc.Capture(ctx, testHash, pi)
	wantKind(t, err, payment.ErrUnexpectedState)
}

func TestWrongContractIsRefused(t *testing.T) {
	e := newEnv(t, envOpts{noWebhook: true})
	ctx := context.Background()
	_, pi := e.authorizeAndPay(t)
	other := strings.Repeat("0", 64)
	_, err := e.pc.Capture(ctx, other, pi)
	wantKind(t, err, payment.ErrContractMismatch)
	_, err = e.pc.Cancel(ctx, other, pi, payment.ReasonAbandoned)
	wantKind(t, err, payment.ErrContractMismatch)
	if st, err := e.pc.Status(ctx, pi); err != nil || st.State != payment.StateAuthorized {
		t.Fatalf("refused calls changed the payment: %+v, %v", st, err)
	}
}

func TestInputValidation(t *testing.T) {
	if _, err := payment.New(payment.Config{}); !errors.Is(err, payment.ErrInvalidRequest) {
		t.Errorf("New without key: %v", err)
	}
	if _, err := payment.New(payment.Config{APIKey: "sk_test_1", BaseURL: "ftp://x"}); !errors.Is(err, payment.ErrInvalidRequest) {
		t.Errorf("New with ftp URL: %v", err)
	}
	// No request is made for bad input, so an unreachable base URL is fine here.
	pc, err := payment.New(payment.Config{APIKey: "sk_test_1", BaseURL: "http://127.0.0.1:9", MaxNetworkRetries: stripe.Int64(0)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	good := payment.AuthorizeRequest{ContractID: "c", ContractHash: testHash, Amount: 100, Currency: "usd", SuccessURL: "http://127.0.0.1:9/ok"}
	for name, mutate := range map[string]func(*payment.AuthorizeRequest){
		"no contract":     func(r *payment.AuthorizeRequest) { r.ContractID = " " },
		"zero amount":     func(r *payment.AuthorizeRequest) { r.Amount = 0 },
		"upper currency":  func(r *payment.AuthorizeRequest) { r.Currency = "USD" },
		"bad currency":    func(r *payment.AuthorizeRequest) { r.Currency = "u$d" },
		"no hash":         func(r *payment.AuthorizeRequest) { r.ContractHash = "" },
		"hash with space": func(r *payment.AuthorizeRequest) { r.ContractHash = "a b" },
		"no success URL":  func(r *payment.AuthorizeRequest) { r.SuccessURL = "" },
	} {
		r := good
		mutate(&r)
		if _, err := pc.Authorize(ctx, r); !errors.Is(err, payment.ErrInvalidRequest) {
			t.Errorf("%s: %v, want ErrInvalidRequest", name, err)
		}
	}
	if _, err := pc.Cancel(ctx, testHash, "pi_1", payment.CancelReason("because")); !errors.Is(err, payment.ErrInvalidRequest) {
		t.Errorf("unknown reason: %v", err)
	}
	if _, err := pc.Capture(ctx, testHash, "cs_test_1"); !errors.Is(err, payment.ErrInvalidRequest) {
		t.Errorf("capture of a session id: %v", err)
	}
	// A network failure is retryable: not a *payment.Error.
	if _, err := pc.Status(ctx, "pi_1"); err == nil || payment.NonRetryable(err) {
		t.Errorf("unreachable Stripe: %v; want a retryable error", err)
	}
}
