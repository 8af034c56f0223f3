package e2e_test

// The payment path end to end: the real workflow on the embedded server, the process
// composition `signoff dev` uses (devstack), the local Stripe test double behind stripe-mock,
// its signed webhooks into /webhooks/stripe, the poll fallback, capture on satisfied and
// cancel on every other ending. The preview is static and the verifier scripted (as in
// TestContractOnEmbeddedServer), so each contract takes seconds.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/fixtures/runs"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/internal/payment"
	"github.com/signoff/signoff/internal/payment/localstripe"
	"github.com/signoff/signoff/internal/staticpreview"
	"github.com/signoff/signoff/policy/policytest"
	"github.com/signoff/signoff/temporal"
	"github.com/signoff/signoff/temporal/temporaltest"
	"github.com/signoff/signoff/web"
	"github.com/signoff/signoff/workers"
	"github.com/signoff/signoff/workers/devstack"
	"github.com/signoff/signoff/workflows/contractapi"
)

// Verifier behaviours for a contract.
const (
	verifyPass    = "pass"      // every criterion passes
	verifyFail    = "fail"      // the first criterion's observed value is wrong: not_satisfied
	verifyNoSHA   = "no-sha"    // the preview runs another commit than expected: verification_error
	h1ContractDir = "H1"        // the template run
	testPrice     = int64(1500) // H1's price
)

// variant is an H1 copy with its own contract id and expectations.
type variant struct {
	name, id, verify string
	expected         runs.Expected
}

// writeVariants writes each variant as a prepared run under a new runs dir.
func writeVariants(t *testing.T, vs ...variant) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(testRunsDir(), h1ContractDir)
	for _, v := range vs {
		d := filepath.Join(dir, v.name)
		if err := os.MkdirAll(filepath.Join(d, "patches"), 0o755); err != nil {
			t.Fatal(err)
		}
		var c map[string]any
		readJSON(t, filepath.Join(src, "contract.json"), &c)
		c["contract_id"] = v.id
		writeJSON(t, filepath.Join(d, "contract.json"), c)
		writeJSON(t, filepath.Join(d, "run.json"), runs.Spec{Run: v.name, Description: "H1 variant " + v.id, Expected: v.expected})
		patch, err := os.ReadFile(filepath.Join(src, "patches", "attempt-1.patch"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "patches", "attempt-1.patch"), patch, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// scriptedVerifiers verifies each contract as its variant says, reading the runtime SHA from
// the preview like the real verifier.
type scriptedVerifiers struct {
	mu    sync.Mutex
	by    map[string]*scriptedVerify
	modes map[string]string
}

func (s *scriptedVerifiers) Verify(ctx context.Context, req capability.VerifyRequest) (capability.VerifyResult, error) {
	s.mu.Lock()
	sv, mode := s.by[req.ContractID], s.modes[req.ContractID]
	s.mu.Unlock()
	if sv == nil {
		return capability.VerifyResult{}, fmt.Errorf("no scripted verifier for %s", req.ContractID)
	}
	res, err := sv.Verify(ctx, req)
	if err != nil || mode == verifyPass {
		return res, err
	}
	opts := policytest.Options{Attempt: req.Attempt, RuntimeSHA: res.Evidence.RuntimeSHA}
	switch mode {
	case verifyFail:
		checks, err := contracts.ChecksFor(sv.contract.Criteria[0])
		if err != nil {
			return res, err
		}
		opts.Override = map[string]map[string]any{sv.contract.Criteria[0].ID: {checks[0].Key: wrong(checks[0].Expected)}}
	case verifyNoSHA:
		opts.RuntimeSHA = "0000000000000000000000000000000000000000"
	}
	ev, err := policytest.Evidence(sv.contract, req.ExpectedSHA, opts)
	if err != nil {
		return res, err
	}
	return capability.VerifyResult{Evidence: ev, EvidenceDigest: "scripted"}, nil
}

// wrong is an observed value that differs from what a check expects.
func wrong(v any) any {
	switch x := v.(type) {
	case float64:
		return x + 1
	case bool:
		return !x
	case string:
		return x + "-not"
	}
	return "unexpected"
}

// servicesStack is `signoff dev`'s composition against the test server, with the static
// preview and the scripted verifiers.
type servicesStack struct {
	*devstack.Stack
	log *temporaltest.LogBuffer
}

func startServicesStack(t *testing.T, dial temporal.DialConfig, runsDir string, vs ...variant) *servicesStack {
	t.Helper()
	requireStripeMock(t)
	sv := &scriptedVerifiers{by: map[string]*scriptedVerify{}, modes: map[string]string{}}
	for _, v := range vs {
		r, err := runs.Load(runsDir, v.name)
		if err != nil {
			t.Fatal(err)
		}
		sv.by[v.id], sv.modes[v.id] = &scriptedVerify{contract: r.Contract}, v.verify
	}
	logs := &temporaltest.LogBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("stack log:\n%s", logs.String())
		}
	})
	dataDir := t.TempDir()
	st, err := devstack.Start(temporaltest.Context(t), devstack.Options{DataDir: dataDir, Dial: dial, RunsDir: runsDir,
		Allow: []string{"signoff-fixtures/*"}, Control: true, Execute: true, Verify: true, Log: logs,
		BuildExecute: func(cfg workers.Config) (*activities.Execute, error) {
			return &activities.Execute{Executor: workers.NewPreparedExecutor(cfg),
				Previews: &staticpreview.Previews{Remotes: workers.NewControlPlane(cfg).Deliverer.Remotes, JobsDir: filepath.Join(dataDir, "jobs", "static")}}, nil
		},
		BuildVerify: func(workers.Config) (*activities.Verify, func(), error) {
			return &activities.Verify{Verifier: sv}, func() {}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	if st.Services == nil || st.Services.LocalStripe == nil {
		t.Fatal("without STRIPE_SECRET_KEY the stack must run the local Stripe test double")
	}
	return &servicesStack{Stack: st, log: logs}
}

// noRedirect shows a redirect instead of following it.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// replay drives a variant through the stack, paying its checkout on the test double.
func (s *servicesStack) replay(t *testing.T, runsDir, name string, timeouts contractapi.Timeouts) contractapi.Status {
	t.Helper()
	r, err := runs.Load(runsDir, name)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, mismatches, err := r.Replay(ctx, runs.Env{Client: s.Client, Remotes: s.ControlPlane.Deliverer.Remotes, DataDir: s.Config.DataDir,
		Trust: testTrust(r.Contract), Timeouts: timeouts,
		Pay: func(ctx context.Context, id string) error {
			_, err := web.CompleteTestCheckout(ctx, s.Client, id)
			return err
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(mismatches) > 0 {
		t.Fatalf("%s: %v\nstatus %+v", name, mismatches, st)
	}
	return st
}

// intent reads the PaymentIntent through stripe-go, as the provider sees it.
func (s *servicesStack) intent(t *testing.T, st contractapi.Status) payment.PaymentStatus {
	t.Helper()
	pc, err := payment.New(payment.Config{APIKey: s.Services.LocalStripe.APIKey(), BaseURL: s.Services.LocalStripe.URL()})
	if err != nil {
		t.Fatal(err)
	}
	id := st.Payment.PaymentIntentID
	if id == "" {
		id = st.Payment.CheckoutSessionID
	}
	ps, err := pc.Status(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if ps.ContractID != st.ContractID || ps.ContractHash != st.ContractHash {
		t.Fatalf("the payment names contract %s/%s, not %s/%s", ps.ContractID, ps.ContractHash, st.ContractID, st.ContractHash)
	}
	return ps
}

func events(st contractapi.Status, typ string) []contracts.Event {
	var out []contracts.Event
	for _, e := range st.Timeline {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func TestStripeDoubleThroughTheWorkflow(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the embedded Temporal server: not in the unit tier")
	}
	srv := temporaltest.StartServer(t)
	captured := runs.Expected{Verdicts: []string{contracts.Satisfied}, FinalState: contracts.StateMergeEligible, Payment: capability.PaymentCaptured}
	vs := []variant{
		{name: "HW", id: "h1-stripe-webhook", verify: verifyPass, expected: captured},
		{name: "HP", id: "h1-stripe-poll", verify: verifyPass, expected: captured},
		{name: "HN", id: "h1-stripe-refused", verify: verifyFail, expected: runs.Expected{
			Verdicts:   []string{contracts.NotSatisfied, contracts.NotSatisfied, contracts.NotSatisfied},
			FinalState: contracts.StatePaymentCancelled, Payment: capability.PaymentCanceled}},
		{name: "HV", id: "h1-stripe-verror", verify: verifyNoSHA, expected: runs.Expected{
			Verdicts:   []string{contracts.VerificationError, contracts.VerificationError},
			FinalState: contracts.StatePaymentCancelled, Payment: capability.PaymentCanceled, Executions: 1}},
	}
	runsDir := writeVariants(t, vs...)
	s := startServicesStack(t, srv.DialConfig(), runsDir, vs...)

	t.Run("webhook authorizes, satisfied captures", func(t *testing.T) {
		// A poll interval far beyond the test: only the double's signed webhook can move it.
		slowPoll := fastTimeouts
		slowPoll.PaymentPoll = time.Hour
		started := time.Now()
		st := s.replay(t, runsDir, "HW", slowPoll)
		sigs := events(st, contracts.EventPaymentSignal)
		if len(sigs) == 0 || sigs[0].Data["source"] != "stripe-webhook" {
			t.Fatalf("no payment_signal from the webhook: %v", sigs)
		}
		if !st.Payment.Local || st.Payment.Provider != payment.ProviderLocal || !st.MergeEligible {
			t.Fatalf("status payment %+v eligible %v", st.Payment, st.MergeEligible)
		}
		ps := s.intent(t, st)
		if ps.State != payment.StateCaptured || ps.AmountReceived != testPrice || ps.AmountCapturable != 0 {
			t.Fatalf("provider says %+v", ps)
		}
		t.Logf("webhook path: satisfied and captured in %s", time.Since(started).Round(10*time.Millisecond))
	})

	t.Run("webhooks lost, the poll finds the authorization", func(t *testing.T) {
		if err := s.Services.LocalStripe.SetWebhookURL(""); err != nil {
			t.Fatal(err)
		}
		defer func() {
			_ = s.Services.LocalStripe.SetWebhookURL(strings.TrimRight(s.PublicURL, "/") + workers.StripeWebhookPath)
		}()
		started := time.Now()
		st := s.replay(t, runsDir, "HP", fastTimeouts)
		if sigs := events(st, contracts.EventPaymentSignal); len(sigs) != 0 {
			t.Fatalf("a signal arrived with webhooks off: %v", sigs)
		}
		if ps := s.intent(t, st); ps.State != payment.StateCaptured || ps.AmountReceived != testPrice {
			t.Fatalf("provider says %+v", ps)
		}
		t.Logf("poll path: satisfied and captured in %s", time.Since(started).Round(10*time.Millisecond))
	})

	t.Run("not_satisfied cancels the authorization", func(t *testing.T) {
		st := s.replay(t, runsDir, "HN", fastTimeouts)
		ps := s.intent(t, st)
		if ps.State != payment.StateCanceled || ps.AmountReceived != 0 || ps.CancellationReason != "abandoned" {
			t.Fatalf("provider says %+v", ps)
		}
	})

	t.Run("verification_error cancels the authorization", func(t *testing.T) {
		st := s.replay(t, runsDir, "HV", fastTimeouts)
		if ps := s.intent(t, st); ps.State != payment.StateCanceled || ps.AmountReceived != 0 {
			t.Fatalf("provider says %+v", ps)
		}
	})

	// The loopback listener's checkout link leads to the double's checkout page.
	resp, err := noRedirect.Get(s.LoopbackURL + "/checkout/cs_test_x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != 303 || !strings.HasPrefix(loc, s.Services.LocalStripe.URL()+"/checkout/cs_test_x") {
		t.Fatalf("loopback checkout: HTTP %d to %q", resp.StatusCode, loc)
	}
	if !bytes.Contains([]byte(s.log.String()), []byte("no money moves")) {
		t.Fatal("the stack's log never says that no money moves")
	}
}

// TestAuthorizationNearExpiryEndsHonestly: a satisfied contract whose authorization is
// within the expiry margin is never captured; the workflow cancels it and says so.
func TestAuthorizationNearExpiryEndsHonestly(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the embedded Temporal server: not in the unit tier")
	}
	srv := temporaltest.StartServer(t)
	c := temporaltest.Dial(t, srv)
	v := variant{name: "HX", id: "h1-stripe-expiring", verify: verifyPass, expected: runs.Expected{
		Verdicts: []string{contracts.Satisfied}, FinalState: contracts.StatePaymentCancelled, Payment: capability.PaymentCanceled}}
	runsDir := writeVariants(t, v)
	r, err := runs.Load(runsDir, v.name)
	if err != nil {
		t.Fatal(err)
	}
	// The same services the product opens, with a margin longer than any card authorization
	// lives: every capture is "too close to expiry".
	w := startWiring(t, c, &scriptedVerify{contract: r.Contract}, wiringOptions{RunsDir: runsDir, Services: workers.ServiceOptions{
		PaymentConfig: func(pc *payment.Config) { pc.ExpiryMargin = 8 * 24 * time.Hour }}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, mismatches, err := r.Replay(ctx, w.Env(r.Contract))
	if err != nil {
		t.Fatal(err)
	}
	if len(mismatches) > 0 {
		t.Fatalf("%v\nstatus %+v", mismatches, st)
	}
	refused := events(st, contracts.EventCaptureRefused)
	if len(refused) != 1 || !strings.Contains(refused[0].Data["error"], "expir") {
		t.Fatalf("capture_refused events %v", refused)
	}
	if cancelled := events(st, "payment_cancelled"); len(cancelled) != 1 || cancelled[0].Data["reason"] != "capture refused" {
		t.Fatalf("payment_cancelled events %v", cancelled)
	}
	ps, err := w.Services.Payments.Client.Status(context.Background(), st.Payment.PaymentIntentID)
	if err != nil || ps.State != payment.StateCanceled || ps.AmountReceived != 0 {
		t.Fatalf("provider says %+v, %v", ps, err)
	}
}

// doubleState is what the local Stripe test double keeps under the data dir: its
// PaymentIntents and their charges, by id.
type doubleState struct {
	Intents map[string]struct {
		Status           string            `json:"status"`
		CaptureMethod    string            `json:"capture_method"`
		Amount           int64             `json:"amount"`
		AmountCapturable int64             `json:"amount_capturable"`
		AmountReceived   int64             `json:"amount_received"`
		Metadata         map[string]string `json:"metadata"`
	} `json:"payment_intents"`
	Charges map[string]struct {
		PaymentIntentID string `json:"payment_intent"`
		Captured        bool   `json:"captured"`
		AmountCaptured  int64  `json:"amount_captured"`
	} `json:"charges"`
}

// readDouble reads the double's state from the data dir (the double may live in another
// process; it saves its state on every change).
func readDouble(t *testing.T, dataDir string) doubleState {
	t.Helper()
	var st doubleState
	readJSON(t, filepath.Join(datadir.Paths(dataDir).Stripe, localstripe.StateFileName), &st)
	return st
}

// paymentOnDouble describes a contract's PaymentIntents and charges on the double, to
// compare before and after.
func paymentOnDouble(t *testing.T, dataDir, contractID string) string {
	t.Helper()
	st := readDouble(t, dataDir)
	var out []string
	for id, pi := range st.Intents {
		if pi.Metadata[payment.MetaContractID] != contractID {
			continue
		}
		out = append(out, fmt.Sprintf("%s %s received %d capturable %d", id, pi.Status, pi.AmountReceived, pi.AmountCapturable))
		for chID, ch := range st.Charges {
			if ch.PaymentIntentID == id {
				out = append(out, fmt.Sprintf("%s captured %v %d", chID, ch.Captured, ch.AmountCaptured))
			}
		}
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

// assertCapturedOnce checks the local Stripe test double's record of a contract's payment:
// one PaymentIntent, authorized for manual capture (held at checkout, not charged), then
// captured for the price and nothing left to capture, with one charge captured for the price.
// The double refuses a second capture, so this is the provider's own word that the price
// was taken once.
func assertCapturedOnce(t *testing.T, dataDir, contractID string, price int64) {
	t.Helper()
	st := readDouble(t, dataDir)
	found := 0
	for id, pi := range st.Intents {
		if pi.Metadata[payment.MetaContractID] != contractID {
			continue
		}
		found++
		if pi.CaptureMethod != "manual" || pi.Status != "succeeded" || pi.Amount != price || pi.AmountReceived != price || pi.AmountCapturable != 0 {
			t.Fatalf("%s: %s capture, status %s, received %d of %d, %d still capturable", id, pi.CaptureMethod, pi.Status,
				pi.AmountReceived, pi.Amount, pi.AmountCapturable)
		}
		charges := 0
		for chID, ch := range st.Charges {
			if ch.PaymentIntentID != id {
				continue
			}
			charges++
			if !ch.Captured || ch.AmountCaptured != price {
				t.Fatalf("%s's charge %s: captured %v, %d of %d", id, chID, ch.Captured, ch.AmountCaptured, price)
			}
		}
		if charges != 1 {
			t.Fatalf("%s has %d charges on the local Stripe test double, want 1", id, charges)
		}
	}
	if found != 1 {
		t.Fatalf("%d PaymentIntents for %s on the local Stripe test double, want 1", found, contractID)
	}
}
