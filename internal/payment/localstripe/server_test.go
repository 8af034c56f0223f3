package localstripe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v76"
	"github.com/stripe/stripe-go/v76/client"
	"github.com/stripe/stripe-go/v76/webhook"
)

var (
	mockOnce sync.Once
	mockErr  error
	shared   *StripeMock
)

func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		_ = shared.Stop()
	}
	os.Exit(code)
}

// stripeMockPath finds stripe-mock or skips (-short) / fails with the setup command.
func stripeMockPath(t *testing.T) string {
	t.Helper()
	p, err := FindStripeMock("")
	if err != nil {
		if testing.Short() {
			t.Skipf("skipping in -short mode: %v", err)
		}
		t.Fatalf("these tests need stripe-mock: %v", err)
	}
	return p
}

// sharedMockURL starts one stripe-mock for the whole package.
func sharedMockURL(t *testing.T) string {
	t.Helper()
	path := stripeMockPath(t)
	mockOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		shared, mockErr = StartStripeMock(ctx, path, nil)
	})
	if mockErr != nil {
		t.Fatalf("start stripe-mock: %v", mockErr)
	}
	return shared.URL()
}

// syncBuffer collects log output from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startDouble(t *testing.T, cfg Config) *Server {
	t.Helper()
	if cfg.StripeMockURL == "" && cfg.StripeMockPath == "" {
		cfg.StripeMockURL = sharedMockURL(t)
	}
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Start(ctx, cfg)
	if err != nil {
		t.Fatalf("start double: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close double: %v", err)
		}
	})
	return s
}

func stripeClient(s *Server) *client.API {
	return client.New(s.APIKey(), stripe.NewBackendsWithConfig(&stripe.BackendConfig{
		URL:               stripe.String(s.URL()),
		MaxNetworkRetries: stripe.Int64(0),
		LeveledLogger:     &stripe.LeveledLogger{Level: stripe.LevelNull},
	}))
}

func newManualSession(t *testing.T, sc *client.API, amount int64) *stripe.CheckoutSession {
	t.Helper()
	cs, err := sc.CheckoutSessions.New(&stripe.CheckoutSessionParams{
		Mode:       stripe.String("payment"),
		SuccessURL: stripe.String("http://127.0.0.1:9/done?cs={CHECKOUT_SESSION_ID}"),
		Metadata:   map[string]string{"contract_id": "c-1", "contract_hash": "h1"},
		LineItems: []*stripe.CheckoutSessionLineItemParams{{
			Quantity: stripe.Int64(1),
			PriceData: &stripe.CheckoutSessionLineItemPriceDataParams{
				Currency: stripe.String("usd"), UnitAmount: stripe.Int64(amount),
				ProductData: &stripe.CheckoutSessionLineItemPriceDataProductDataParams{Name: stripe.String("Contract c-1")},
			},
		}},
		PaymentIntentData: &stripe.CheckoutSessionPaymentIntentDataParams{
			CaptureMethod: stripe.String("manual"),
			Metadata:      map[string]string{"contract_id": "c-1", "contract_hash": "h1"},
		},
	})
	if err != nil {
		t.Fatalf("create checkout session: %v", err)
	}
	return cs
}

func TestCheckoutSessionCarriesStateNotFixture(t *testing.T) {
	s := startDouble(t, Config{})
	sc := stripeClient(s)
	cs := newManualSession(t, sc, 2500)
	if cs.AmountTotal != 2500 || cs.Currency != "usd" || cs.Metadata["contract_hash"] != "h1" {
		t.Fatalf("session amount/currency/metadata = %d/%s/%v, want 2500/usd/h1", cs.AmountTotal, cs.Currency, cs.Metadata)
	}
	if cs.Status != stripe.CheckoutSessionStatusOpen || cs.PaymentIntent != nil {
		t.Fatalf("new session status=%s payment_intent=%v, want open and none", cs.Status, cs.PaymentIntent)
	}
	if want := s.URL() + "/checkout/" + cs.ID; cs.URL != want {
		t.Fatalf("session url = %q, want %q", cs.URL, want)
	}
	paid, err := MarkPaid(context.Background(), cs.URL)
	if err != nil {
		t.Fatalf("MarkPaid: %v", err)
	}
	if !paid.NewlyAuthorized || paid.PaymentIntentID == "" {
		t.Fatalf("MarkPaid = %+v, want a new authorization", paid)
	}
	again, err := MarkPaid(context.Background(), cs.URL)
	if err != nil || again.NewlyAuthorized || again.PaymentIntentID != paid.PaymentIntentID {
		t.Fatalf("second MarkPaid = %+v, %v; want the same intent, not newly authorized", again, err)
	}
	p := &stripe.CheckoutSessionParams{}
	p.AddExpand("payment_intent.latest_charge")
	got, err := sc.CheckoutSessions.Get(cs.ID, p)
	if err != nil {
		t.Fatalf("get session: %v", err)
	}
	pi := got.PaymentIntent
	if got.Status != stripe.CheckoutSessionStatusComplete || pi == nil || pi.Status != stripe.PaymentIntentStatusRequiresCapture {
		t.Fatalf("after payment: session %s, intent %+v; want complete + requires_capture", got.Status, pi)
	}
	if pi.AmountCapturable != 2500 || pi.Metadata["contract_hash"] != "h1" || pi.LatestCharge == nil {
		t.Fatalf("intent capturable=%d metadata=%v charge=%v", pi.AmountCapturable, pi.Metadata, pi.LatestCharge)
	}
	cb := pi.LatestCharge.PaymentMethodDetails.Card.CaptureBefore
	if d := time.Until(time.Unix(cb, 0)); d < 7*24*time.Hour-time.Minute || d > 7*24*time.Hour+time.Minute {
		t.Fatalf("capture_before is %s away, want about 7 days", d)
	}
	if len(pi.LatestCharge.Refunds.Data) != 0 {
		t.Fatalf("charge lists %d returned-funds entries from the fixture, want none", len(pi.LatestCharge.Refunds.Data))
	}
}

func TestIdempotentReplayAndConflict(t *testing.T) {
	s := startDouble(t, Config{})
	sc := stripeClient(s)
	mk := func(amount int64) (*stripe.PaymentIntent, error) {
		p := &stripe.PaymentIntentParams{Amount: stripe.Int64(amount), Currency: stripe.String("usd"),
			CaptureMethod: stripe.String("manual"), PaymentMethod: stripe.String("pm_card_visa"), Confirm: stripe.Bool(true)}
		p.SetIdempotencyKey("test-key-1")
		return sc.PaymentIntents.New(p)
	}
	a, err := mk(700)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	b, err := mk(700)
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if a.ID != b.ID || b.LastResponse.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay gave %s (replayed=%q), want %s replayed", b.ID, b.LastResponse.Header.Get("Idempotent-Replayed"), a.ID)
	}
	_, err = mk(800)
	var se *stripe.Error
	if !errors.As(err, &se) || se.Type != stripe.ErrorTypeIdempotency || se.HTTPStatusCode != 400 {
		t.Fatalf("same key, different params: %v; want 400 idempotency_error", err)
	}
	if a.Status != stripe.PaymentIntentStatusRequiresCapture || a.AmountCapturable != 700 {
		t.Fatalf("confirmed manual intent: status %s capturable %d", a.Status, a.AmountCapturable)
	}
}

func TestStateSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	s := startDouble(t, Config{DataDir: dir})
	sc := stripeClient(s)
	cs := newManualSession(t, sc, 1200)
	paid, err := MarkPaid(context.Background(), cs.URL)
	if err != nil {
		t.Fatalf("MarkPaid: %v", err)
	}
	key, secret, url := s.APIKey(), s.WebhookSecret(), s.URL()
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	fi, err := os.Stat(filepath.Join(dir, StateFileName))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state file: %v mode %v, want 0600", err, fi.Mode().Perm())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".localstripe-state-*")); len(left) != 0 {
		t.Fatalf("temporary files left behind: %v", left)
	}

	s2 := startDouble(t, Config{DataDir: dir})
	if s2.APIKey() != key || s2.WebhookSecret() != secret {
		t.Fatalf("key/secret changed across restart")
	}
	if s2.URL() != url {
		t.Logf("address changed across restart (%s -> %s); the old one was taken", url, s2.URL())
	}
	pi, err := stripeClient(s2).PaymentIntents.Get(paid.PaymentIntentID, nil)
	if err != nil || pi.Status != stripe.PaymentIntentStatusRequiresCapture || pi.Amount != 1200 {
		t.Fatalf("after restart: %v %+v; want requires_capture 1200", err, pi)
	}
}

func TestCorruptStateIsRefusedAndKept(t *testing.T) {
	dir := t.TempDir()
	garbage := []byte("{not json")
	if err := os.WriteFile(filepath.Join(dir, StateFileName), garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Start(context.Background(), Config{DataDir: dir, StripeMockURL: "http://127.0.0.1:9"})
	if err == nil {
		t.Fatal("Start accepted a corrupt state file")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, StateFileName)); !bytes.Equal(b, garbage) {
		t.Fatal("corrupt state file was overwritten")
	}
}

func TestChildStripeMockStoppedByPID(t *testing.T) {
	s := startDouble(t, Config{StripeMockPath: stripeMockPath(t)})
	pid := s.StripeMockPID()
	if pid <= 0 {
		t.Fatalf("no child pid")
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("child %d not running: %v", pid, err)
	}
	if _, err := stripeClient(s).PaymentIntents.Get("pi_unknown", nil); err == nil {
		t.Fatal("unknown intent found")
	}
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("child %d still exists after Close (kill 0: %v)", pid, err)
	}
}

func TestAuthAndUnmodelledRoutes(t *testing.T) {
	s := startDouble(t, Config{})
	do := func(method, path, key string) (int, string) {
		req, _ := http.NewRequest(method, s.URL()+path, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := do("GET", "/v1/payment_intents/pi_x", "sk_test_wrong_key_123456"); code != 401 || !strings.Contains(body, "Invalid API Key") || strings.Contains(body, "wrong_key") {
		t.Fatalf("wrong key: %d %s", code, body)
	}
	if code, body := do("GET", "/v1/payment_intents/pi_x", ""); code != 401 || !strings.Contains(body, "authenticate") {
		t.Fatalf("no key (stripe-mock's own 401 expected): %d %s", code, body)
	}
	if code, body := do("GET", "/v1/customers/cus_1", s.APIKey()); code != 404 || !strings.Contains(body, "does not model") {
		t.Fatalf("unmodelled endpoint: %d %s", code, body)
	}
}

func TestCheckoutPageAndCrossSitePost(t *testing.T) {
	s := startDouble(t, Config{})
	cs := newManualSession(t, stripeClient(s), 1999)
	resp, err := http.Get(cs.URL)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"USD 19.99", "c-1", "Authorize (test: no money moves)", "no money moves", "test double"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("checkout page lacks %q", want)
		}
	}
	req, _ := http.NewRequest("POST", cs.URL, nil)
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-site post: HTTP %d, want 403", resp.StatusCode)
	}
	got, err := stripeClient(s).CheckoutSessions.Get(cs.ID, nil)
	if err != nil || got.Status != stripe.CheckoutSessionStatusOpen {
		t.Fatalf("after refused post: %v status %s, want open", err, got.Status)
	}
	// A browser form post redirects to the success URL with the session id filled in.
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ = http.NewRequest("POST", cs.URL, nil)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err = noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || !strings.HasSuffix(loc, "cs="+cs.ID) {
		t.Fatalf("form post: HTTP %d Location %q", resp.StatusCode, loc)
	}
	resp, err = http.Get(s.URL() + "/checkout/cs_test_nothere")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown checkout page: HTTP %d", resp.StatusCode)
	}
}

func TestEveryLogLineSaysTestDouble(t *testing.T) {
	var buf syncBuffer
	s := startDouble(t, Config{Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	cs := newManualSession(t, stripeClient(s), 100)
	if _, err := MarkPaid(context.Background(), cs.URL); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) < 3 {
		t.Fatalf("expected several log lines, got %q", buf.String())
	}
	for _, l := range lines {
		if !strings.Contains(l, "no money moves") {
			t.Errorf("log line not labelled: %s", l)
		}
	}
}

func TestLoopbackOnly(t *testing.T) {
	base := Config{DataDir: t.TempDir(), StripeMockURL: "http://127.0.0.1:9"}
	c := base
	c.Addr = "0.0.0.0:0"
	if _, err := Start(context.Background(), c); err == nil {
		t.Error("Start accepted a non-loopback listen address")
	}
	c = base
	c.WebhookURL = "http://192.0.2.1/hook"
	if _, err := Start(context.Background(), c); err == nil {
		t.Error("Start accepted a non-loopback webhook URL")
	}
	c = base
	c.StripeMockURL = "http://192.0.2.1:12111"
	if _, err := Start(context.Background(), c); err == nil {
		t.Error("Start accepted a non-loopback stripe-mock")
	}
	c = base
	c.APIKey = "sk_live_123"
	if _, err := Start(context.Background(), c); err == nil {
		t.Error("Start accepted a live key")
	}
	if _, err := MarkPaid(context.Background(), "https://checkout.stripe.com/c/pay/cs_test_1"); err == nil {
		t.Error("MarkPaid accepted a real Stripe checkout link")
	}
}

func TestFormatAmount(t *testing.T) {
	for _, tc := range []struct {
		minor int64
		cur   string
		want  string
	}{{1999, "usd", "USD 19.99"}, {5, "eur", "EUR 0.05"}, {500, "jpy", "JPY 500"}, {1234, "kwd", "KWD 1.234"}} {
		if got := FormatAmount(tc.minor, tc.cur); got != tc.want {
			t.Errorf("FormatAmount(%d, %s) = %q, want %q", tc.minor, tc.cur, got, tc.want)
		}
	}
}

func TestStateFileIsJSON(t *testing.T) {
	dir := t.TempDir()
	s := startDouble(t, Config{DataDir: dir})
	newManualSession(t, stripeClient(s), 100)
	b, err := os.ReadFile(filepath.Join(dir, StateFileName))
	if err != nil {
		t.Fatal(err)
	}
	var st state
	if err := json.Unmarshal(b, &st); err != nil || len(st.Sessions) != 1 || !strings.Contains(st.Notice, "no money moves") {
		t.Fatalf("state file: %v, %d sessions, notice %q", err, len(st.Sessions), st.Notice)
	}
}

func TestWebhookDeliveryRetriesAndIsSigned(t *testing.T) {
	type delivery struct {
		body []byte
		sig  string
	}
	got := make(chan delivery, 8)
	attempts := 0
	var mu sync.Mutex
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		attempts++
		first := attempts == 1
		mu.Unlock()
		if first {
			w.WriteHeader(http.StatusServiceUnavailable) // the receiver is briefly down
			return
		}
		got <- delivery{b, r.Header.Get("Stripe-Signature")}
	}))
	defer hook.Close()
	s := startDouble(t, Config{WebhookURL: hook.URL})
	cs := newManualSession(t, stripeClient(s), 300)
	if _, err := MarkPaid(context.Background(), cs.URL); err != nil {
		t.Fatal(err)
	}
	types := map[string]bool{}
	for len(types) < 2 {
		select {
		case d := <-got:
			ev, err := webhook.ConstructEvent(d.body, d.sig, s.WebhookSecret())
			if err != nil {
				t.Fatalf("delivered event does not verify: %v", err)
			}
			if ev.APIVersion != stripe.APIVersion {
				t.Fatalf("api_version %q, want %q", ev.APIVersion, stripe.APIVersion)
			}
			types[string(ev.Type)] = true
		case <-time.After(20 * time.Second):
			t.Fatalf("events delivered: %v; want checkout.session.completed and payment_intent.amount_capturable_updated", types)
		}
	}
	if !types["checkout.session.completed"] || !types["payment_intent.amount_capturable_updated"] {
		t.Fatalf("event types %v", types)
	}
}

func TestOpenSessionLapses(t *testing.T) {
	var mu sync.Mutex
	clock := time.Now()
	s := startDouble(t, Config{Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }})
	cs := newManualSession(t, stripeClient(s), 300)
	mu.Lock()
	clock = clock.Add(25 * time.Hour)
	mu.Unlock()
	if _, err := MarkPaid(context.Background(), cs.URL); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("paying a lapsed checkout: %v; want refused as expired", err)
	}
	got, err := stripeClient(s).CheckoutSessions.Get(cs.ID, nil)
	if err != nil || got.Status != stripe.CheckoutSessionStatusExpired || got.PaymentIntent != nil || got.URL != "" {
		t.Fatalf("lapsed session: %v %+v; want expired, no intent, no url", err, got)
	}
}
