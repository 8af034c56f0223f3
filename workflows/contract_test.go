package workflows_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/contracts/contractstest"
	"github.com/signoff/signoff/policy/policytest"
	"github.com/signoff/signoff/workflows"
)

// verifyScript is what the fake verifier reports for one verification.
type verifyScript string

const (
	pass        verifyScript = "pass"
	overflow    verifyScript = "overflow"     // honest not_satisfied
	missingSHA  verifyScript = "missing-sha"  // verification_error
	staleBuild  verifyScript = "stale-build"  // verification_error
	buildFailed verifyScript = "build-failed" // not_satisfied without evidence
)

// fakes implements every activity with scripted results and counts the side effects the
// tests assert on. Activities run on other goroutines, hence the mutex.
type fakes struct {
	t        *testing.T
	contract contracts.Contract
	env      *testsuite.TestWorkflowEnvironment

	mu          sync.Mutex
	script      []verifyScript // consumed one per verification
	emptyOn     map[int]bool   // attempts whose executor changes nothing
	executions  int
	verifies    int
	captures    int
	cancels     int
	authorized  bool
	indexed     []string // states written to the index, in order
	payState    string
	feedbacks   [][]contracts.Reason
	releases    int
	bundles     []contracts.Bundle
	settlements []contracts.Settlement
	captureHook func()
}

func (f *fakes) AuthorizePayment(ctx context.Context, r activities.AuthorizeRequest) (activities.PaymentState, error) {
	return activities.PaymentState{Provider: "ledger", Local: true, CheckoutSessionID: "cs_" + r.ContractID,
		CheckoutURL: "http://127.0.0.1/checkout", State: activities.PaymentPending}, nil
}

func (f *fakes) PaymentStatus(ctx context.Context, hash, session string) (activities.PaymentState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := activities.PaymentPending
	if f.authorized {
		st = activities.PaymentAuthorized
	}
	return activities.PaymentState{Provider: "ledger", Local: true, CheckoutSessionID: session, PaymentIntentID: "pi_1", State: st}, nil
}

func (f *fakes) CapturePayment(ctx context.Context, a activities.PaymentAction) (activities.PaymentState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.payState == activities.PaymentCanceled {
		return activities.PaymentState{}, errors.New("capture after cancel")
	}
	f.captures++
	f.payState = activities.PaymentCaptured
	if f.captureHook != nil {
		f.captureHook()
	}
	return activities.PaymentState{Provider: "ledger", PaymentIntentID: a.PaymentIntentID, State: activities.PaymentCaptured}, nil
}

func (f *fakes) CancelPayment(ctx context.Context, a activities.PaymentAction) (activities.PaymentState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.payState == activities.PaymentCaptured {
		return activities.PaymentState{}, errors.New("cancel after capture")
	}
	f.cancels++
	f.payState = activities.PaymentCanceled
	return activities.PaymentState{Provider: "ledger", PaymentIntentID: a.PaymentIntentID, State: activities.PaymentCanceled}, nil
}

func (f *fakes) Publish(ctx context.Context, r activities.PublishRequest) (contracts.PRRef, error) {
	return contracts.PRRef{Branch: r.Branch, URL: "local://" + r.Branch}, nil
}

func (f *fakes) RecordAttempt(ctx context.Context, r activities.RecordRequest) (activities.RecordResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bundles = append(f.bundles, r.Bundle)
	return activities.RecordResult{ProofDir: fmt.Sprintf("/proofs/attempt-%d", r.Bundle.Attempt), BundleDigest: fmt.Sprintf("digest-%d-%d", r.Bundle.Attempt, r.Bundle.Try)}, nil
}

func (f *fakes) RecordSettlement(ctx context.Context, s contracts.Settlement) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.settlements = append(f.settlements, s)
	return "/proofs/settlement.json", nil
}

func (f *fakes) PRHead(ctx context.Context, r activities.HeadRequest) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return commitFor(f.executions), nil
}

func (f *fakes) UpdateIndex(ctx context.Context, e activities.IndexEntry) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.indexed = append(f.indexed, e.State)
	return nil
}
func (f *fakes) Notify(ctx context.Context, n activities.Notice) error { return nil }

func (f *fakes) RequestLock(ctx context.Context, r activities.LockRequest) error {
	// Grant at once, as an idle lock workflow would.
	f.env.SignalWorkflow(workflows.SignalLockGranted, r.LockWorkflowID)
	return nil
}

func commitFor(attempt int) string { return fmt.Sprintf("%040d", attempt) }

func (f *fakes) RunExecutor(ctx context.Context, r activities.ExecRequest) (activities.ExecResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.executions++
	f.feedbacks = append(f.feedbacks, r.Feedback)
	if f.emptyOn[r.Attempt] {
		return activities.ExecResult{Empty: true, CommitSHA: r.ParentSHA, Branch: "signoff/w1"}, nil
	}
	return activities.ExecResult{CommitSHA: commitFor(r.Attempt), Branch: "signoff/w1", FilesChanged: 1, Insertions: 3, DiffSummary: "1 file, +3"}, nil
}

func (f *fakes) next() verifyScript {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.script) == 0 {
		f.t.Errorf("verification %d was not scripted", f.verifies+1)
		return pass
	}
	s := f.script[0]
	f.script = f.script[1:]
	f.verifies++
	return s
}

func (f *fakes) peek() verifyScript {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.script) == 0 {
		return pass
	}
	return f.script[0]
}

func (f *fakes) StartPreview(ctx context.Context, r activities.PreviewRequest) (activities.PreviewResult, error) {
	if f.peek() == buildFailed {
		f.next()
		return activities.PreviewResult{PreviewID: "p", Build: contracts.BuildResult{Passed: false,
			Steps: []contracts.BuildStep{{Name: "build", Passed: false}}}}, nil
	}
	return activities.PreviewResult{PreviewID: "p", URL: "http://127.0.0.1:1", Build: contracts.BuildResult{Passed: true}}, nil
}

func (f *fakes) StopPreview(ctx context.Context, id string) error { return nil }

func (f *fakes) Verify(ctx context.Context, r activities.VerifyRequest) (activities.VerifyResult, error) {
	o := policytest.Options{Attempt: r.Attempt}
	switch f.next() {
	case overflow:
		o.Override = map[string]map[string]any{"mobile-no-overflow": {"390x844/scroll_width": 927.0}}
	case missingSHA:
		o.RuntimeSHA = ""
		ev, err := policytest.Evidence(f.contract, r.ExpectedSHA, o)
		if err != nil {
			return activities.VerifyResult{}, err
		}
		ev.RuntimeSHA = ""
		if err := ev.Sign(policytest.VerifierKey); err != nil {
			return activities.VerifyResult{}, err
		}
		return activities.VerifyResult{Evidence: ev, EvidenceDigest: "e"}, nil
	case staleBuild:
		o.RuntimeSHA = f.contract.Repo.BaseCommitSHA
	}
	ev, err := policytest.Evidence(f.contract, r.ExpectedSHA, o)
	if err != nil {
		return activities.VerifyResult{}, err
	}
	return activities.VerifyResult{Evidence: ev, EvidenceDigest: "e", ProofDir: "/proofs"}, nil
}

func (f *fakes) RuntimeGate(ctx context.Context, r activities.GateRequest) (contracts.GateResult, error) {
	return contracts.GateResult{Source: "page-errors", Errors: []string{}}, nil
}

type harness struct {
	*fakes
	env   *testsuite.TestWorkflowEnvironment
	input workflows.ContractInput
}

func newHarness(t *testing.T, script ...verifyScript) *harness {
	t.Helper()
	c, err := contracts.Load(contractstest.ReadW1(t), contracts.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q, err := contracts.NewQuote(*c, "alice")
	if err != nil {
		t.Fatal(err)
	}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	f := &fakes{t: t, contract: *c, env: env, script: script, emptyOn: map[int]bool{}}
	register := func(fn any, name string) {
		env.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
	register(f.AuthorizePayment, activities.AuthorizePaymentName)
	register(f.PaymentStatus, activities.PaymentStatusName)
	register(f.CapturePayment, activities.CapturePaymentName)
	register(f.CancelPayment, activities.CancelPaymentName)
	register(f.Publish, activities.PublishName)
	register(f.RecordAttempt, activities.RecordAttemptName)
	register(f.RecordSettlement, activities.RecordSettlementName)
	register(f.PRHead, activities.PRHeadName)
	register(f.UpdateIndex, activities.UpdateIndexName)
	register(f.Notify, activities.NotifyName)
	register(f.RequestLock, activities.RequestLockName)
	register(f.RunExecutor, activities.RunExecutorName)
	register(f.StartPreview, activities.StartPreviewName)
	register(f.StopPreview, activities.StopPreviewName)
	register(f.Verify, activities.VerifyName)
	register(f.RuntimeGate, activities.RuntimeGateName)
	env.OnSignalExternalWorkflow(mock.Anything, workflows.LockWorkflowID("signoff-fixtures/finance"), "", workflows.SignalLockRelease, mock.Anything).
		Return(func(_, _, _, _ string, _ any) error {
			f.mu.Lock()
			f.releases++
			f.mu.Unlock()
			return nil
		})
	in := workflows.ContractInput{Quote: q, Channel: "test",
		Trust:    workflows.Trust{VerifierPublicKey: policytest.VerifierPublicKey(), VerifierDigest: c.Verifier.Digest},
		Timeouts: workflows.Timeouts{Approval: time.Hour, Payment: time.Hour, PaymentPoll: time.Minute, Operator: time.Hour}}
	return &harness{fakes: f, env: env, input: in}
}

// approveAndPay schedules the approval by the requester and the payment authorization.
func (h *harness) approveAndPay() {
	h.env.RegisterDelayedCallback(func() {
		h.env.SignalWorkflow(workflows.SignalApprove, workflows.Approve{Hash: h.input.Quote.Hash, Approver: "alice", Channel: "test", MessageID: "m1"})
	}, time.Second)
	h.env.RegisterDelayedCallback(func() {
		h.mu.Lock()
		h.authorized = true
		h.mu.Unlock()
		h.env.SignalWorkflow(workflows.SignalPaymentAuthorized, workflows.PaymentAuthorized{SessionID: "cs", Source: "test"})
	}, 2*time.Second)
}

func (h *harness) run(t *testing.T) workflows.Status {
	t.Helper()
	h.env.ExecuteWorkflow(workflows.ContractWorkflow, h.input)
	if !h.env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	if err := h.env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow error: %v", err)
	}
	var st workflows.Status
	if err := h.env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	if _, err := contracts.VerifyChain(st.Timeline); err != nil {
		t.Fatalf("timeline: %v", err)
	}
	return st
}

func verdicts(st workflows.Status) string {
	var out []string
	for _, a := range st.Attempts {
		out = append(out, a.Verdict)
	}
	return strings.Join(out, ",")
}

func hasEvent(st workflows.Status, typ string) bool {
	for _, e := range st.Timeline {
		if e.Type == typ {
			return true
		}
	}
	return false
}

func (h *harness) assertPayment(t *testing.T, captures, cancels int) {
	t.Helper()
	if h.captures != captures || h.cancels != cancels {
		t.Fatalf("captures %d cancels %d, want %d and %d", h.captures, h.cancels, captures, cancels)
	}
}

func (h *harness) assertLockReleased(t *testing.T) {
	t.Helper()
	if h.releases != 1 {
		t.Fatalf("lock released %d times, want 1", h.releases)
	}
}

func TestSatisfiedFirstAttempt(t *testing.T) {
	h := newHarness(t, pass)
	h.approveAndPay()
	st := h.run(t)
	if verdicts(st) != "satisfied" || st.State != workflows.StateMergeEligible || !st.MergeEligible || st.Executions != 1 {
		t.Fatalf("state %s verdicts %s executions %d eligible %v", st.State, verdicts(st), st.Executions, st.MergeEligible)
	}
	h.assertPayment(t, 1, 0)
	h.assertLockReleased(t)
	if len(h.bundles) != 1 || h.bundles[0].Verdict != contracts.Satisfied || h.bundles[0].TimelineHead == "" {
		t.Fatalf("bundles %+v", h.bundles)
	}
}

func TestNotSatisfiedThenSatisfied(t *testing.T) {
	h := newHarness(t, overflow, pass)
	h.approveAndPay()
	st := h.run(t)
	if verdicts(st) != "not_satisfied,satisfied" || st.Executions != 2 {
		t.Fatalf("verdicts %s executions %d", verdicts(st), st.Executions)
	}
	h.assertPayment(t, 1, 0)
	h.assertLockReleased(t)
	// The repair got structured feedback naming the failed criterion with observed values.
	fb := h.feedbacks[1]
	if len(fb) == 0 || fb[0].Criterion != "mobile-no-overflow" || !strings.Contains(fb[0].Message, "scrollWidth = 927") {
		t.Fatalf("feedback %+v", fb)
	}
	if len(h.feedbacks[0]) != 0 {
		t.Fatalf("attempt 1 had feedback %+v", h.feedbacks[0])
	}
}

func TestThreeNotSatisfiedIsFinalRefusal(t *testing.T) {
	h := newHarness(t, overflow, overflow, overflow)
	h.approveAndPay()
	st := h.run(t)
	if verdicts(st) != "not_satisfied,not_satisfied,not_satisfied" || st.Verdict != contracts.NotSatisfied {
		t.Fatalf("verdicts %s", verdicts(st))
	}
	if st.Executions != 3 || h.executions != 3 {
		t.Fatalf("executions %d/%d, want at most max_attempts = 3", st.Executions, h.executions)
	}
	if st.State != workflows.StatePaymentCancelled || st.MergeEligible {
		t.Fatalf("state %s", st.State)
	}
	h.assertPayment(t, 0, 1)
	h.assertLockReleased(t)
}

func TestBuildFailureIsNotSatisfied(t *testing.T) {
	h := newHarness(t, buildFailed, pass)
	h.approveAndPay()
	st := h.run(t)
	if verdicts(st) != "not_satisfied,satisfied" || st.Attempts[0].Reasons[0].Code != "build_failed" {
		t.Fatalf("verdicts %s %+v", verdicts(st), st.Attempts)
	}
	h.assertPayment(t, 1, 0)
}

func TestVerificationErrorReverifyPauseRetry(t *testing.T) {
	h := newHarness(t, missingSHA, staleBuild, pass)
	h.approveAndPay()
	h.env.RegisterDelayedCallback(func() {
		var st workflows.Status
		v, err := h.env.QueryWorkflow(workflows.QueryStatus)
		if err != nil || v.Get(&st) != nil || st.State != workflows.StateAwaitingOperator {
			t.Errorf("before retry: state %s err %v", st.State, err)
		}
		h.env.SignalWorkflow(workflows.SignalRetryVerification, workflows.Operator{By: "ops"})
	}, 10*time.Minute)
	st := h.run(t)
	if verdicts(st) != "verification_error,verification_error,satisfied" {
		t.Fatalf("verdicts %s", verdicts(st))
	}
	if h.executions != 1 {
		t.Fatalf("verification_error re-ran the executor: %d executions", h.executions)
	}
	if !hasEvent(st, "reverify") || !hasEvent(st, "paused_for_operator") || !hasEvent(st, "retry_verification") {
		t.Fatal("timeline lacks reverify / pause / retry")
	}
	codes := []string{st.Attempts[0].Reasons[0].Code, st.Attempts[1].Reasons[0].Code}
	if codes[0] != "runtime_sha_missing" || codes[1] != "runtime_sha_mismatch" {
		t.Fatalf("reason codes %v", codes)
	}
	h.assertPayment(t, 1, 0)
	h.assertLockReleased(t)
}

func TestAbandonCancelsAuthorization(t *testing.T) {
	h := newHarness(t, missingSHA, missingSHA)
	h.approveAndPay()
	h.env.RegisterDelayedCallback(func() {
		h.env.SignalWorkflow(workflows.SignalAbandon, workflows.Operator{By: "ops", Reason: "preview host down"})
	}, 10*time.Minute)
	st := h.run(t)
	if st.Verdict != contracts.VerificationError || st.State != workflows.StatePaymentCancelled || h.executions != 1 {
		t.Fatalf("verdict %s state %s executions %d", st.Verdict, st.State, h.executions)
	}
	if !hasEvent(st, "abandoned") {
		t.Fatal("no abandoned event")
	}
	h.assertPayment(t, 0, 1)
	h.assertLockReleased(t)
}

func TestOperatorDeadlineAbandons(t *testing.T) {
	h := newHarness(t, missingSHA, missingSHA)
	h.approveAndPay()
	st := h.run(t)
	if st.Verdict != contracts.VerificationError || !hasEvent(st, "operator_deadline") {
		t.Fatalf("verdict %s", st.Verdict)
	}
	h.assertPayment(t, 0, 1)
}

func TestWrongHashAndApproverRefused(t *testing.T) {
	h := newHarness(t, pass)
	h.env.RegisterDelayedCallback(func() {
		h.env.SignalWorkflow(workflows.SignalApprove, workflows.Approve{Hash: strings.Repeat("a", 64), Approver: "alice", MessageID: "m0"})
	}, time.Second)
	h.env.RegisterDelayedCallback(func() {
		h.env.SignalWorkflow(workflows.SignalApprove, workflows.Approve{Hash: h.input.Quote.Hash, Approver: "mallory", MessageID: "m1"})
	}, 2*time.Second)
	h.env.RegisterDelayedCallback(func() {
		v, err := h.env.QueryWorkflow(workflows.QueryStatus)
		var st workflows.Status
		if err != nil || v.Get(&st) != nil {
			t.Errorf("query: %v", err)
			return
		}
		if st.State != workflows.StateQuoted || len(st.Refusals) != 2 {
			t.Errorf("after two bad approvals: state %s refusals %v", st.State, st.Refusals)
		}
	}, 3*time.Second)
	st := h.run(t) // no valid approval: the quote expires
	if st.State != workflows.StateExpired || h.executions != 0 {
		t.Fatalf("state %s executions %d", st.State, h.executions)
	}
	if len(st.Refusals) != 2 || !strings.Contains(st.Refusals[0], "hash") || !strings.Contains(st.Refusals[1], "mallory") {
		t.Fatalf("refusals %v", st.Refusals)
	}
	h.assertPayment(t, 0, 0)
	if h.releases != 0 {
		t.Fatalf("a lock never requested was released %d times", h.releases)
	}
}

// A stranger's refusals are recorded once and then only counted: 25 of them leave one entry
// in the refusals and the timeline, and the requester's own wrong-hash refusal is still kept.
func TestStrangerRefusalsRecordedOnce(t *testing.T) {
	h := newHarness(t, pass)
	for i := range 25 {
		h.env.RegisterDelayedCallback(func() {
			h.env.SignalWorkflow(workflows.SignalApprove, workflows.Approve{Hash: h.input.Quote.Hash, Approver: fmt.Sprintf("mallory-%d", i%3), MessageID: fmt.Sprintf("m%d", i)})
		}, time.Second+time.Duration(i)*time.Millisecond)
	}
	h.env.RegisterDelayedCallback(func() {
		h.env.SignalWorkflow(workflows.SignalApprove, workflows.Approve{Hash: strings.Repeat("b", 64), Approver: "alice", MessageID: "own"})
	}, 2*time.Second)
	st := h.run(t)
	if st.State != workflows.StateExpired {
		t.Fatalf("state %s", st.State)
	}
	refusedEvents := 0
	for _, e := range st.Timeline {
		if e.Type == "approval_refused" {
			refusedEvents++
		}
	}
	if len(st.Refusals) != 2 || st.StrangerRefusals != 25 || refusedEvents != 2 || !strings.Contains(st.Refusals[1], "hash") {
		t.Fatalf("refusals %v, stranger refusals %d, timeline refusals %d", st.Refusals, st.StrangerRefusals, refusedEvents)
	}
}

func TestQuoteExpiry(t *testing.T) {
	h := newHarness(t)
	st := h.run(t)
	if st.State != workflows.StateExpired || !hasEvent(st, "quote_expired") {
		t.Fatalf("state %s", st.State)
	}
}

// The quote's expiry, when sooner than the approval timeout, is the approval deadline; an
// approval before it is taken.
func TestQuoteExpiresAtIsTheApprovalDeadline(t *testing.T) {
	h := newHarness(t)
	exp := h.env.Now().Add(30 * time.Minute).UTC().Truncate(time.Second) // the harness's approval timeout is 1 h
	h.input.QuoteExpiresAt = exp
	h.env.RegisterDelayedCallback(func() {
		v, err := h.env.QueryWorkflow(workflows.QueryStatus)
		var st workflows.Status
		if err != nil || v.Get(&st) != nil || !st.QuoteExpiresAt.Equal(exp) || st.State != workflows.StateQuoted {
			t.Errorf("status before expiry: %v, expires %v state %s", err, st.QuoteExpiresAt, st.State)
		}
	}, 10*time.Minute)
	st := h.run(t)
	if st.State != workflows.StateExpired || h.executions != 0 || !hasEvent(st, "quote_expired") {
		t.Fatalf("state %s executions %d", st.State, h.executions)
	}
	for _, e := range st.Timeline {
		if e.Type != "quote_expired" {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, e.At)
		if err != nil || at.Sub(exp).Abs() > time.Second {
			t.Fatalf("expired at %q (%v), the quote said %v", e.At, err, exp)
		}
		if e.Data["quote_expires_at"] != exp.Format(time.RFC3339) {
			t.Fatalf("quote_expired event %v does not name the quote's expiry %v", e.Data, exp)
		}
	}

	ok := newHarness(t, pass)
	ok.input.QuoteExpiresAt = ok.env.Now().Add(30 * time.Minute)
	ok.approveAndPay()
	if st := ok.run(t); st.Verdict != contracts.Satisfied {
		t.Fatalf("approved before expiry: verdict %q state %s", st.Verdict, st.State)
	}
}

func TestQuoteAlreadyExpiredEndsAtOnce(t *testing.T) {
	h := newHarness(t, pass)
	h.input.QuoteExpiresAt = h.env.Now().Add(-time.Minute)
	h.approveAndPay()
	st := h.run(t)
	if st.State != workflows.StateExpired || h.executions != 0 || !hasEvent(st, "quote_expired") {
		t.Fatalf("state %s executions %d", st.State, h.executions)
	}
	h.assertPayment(t, 0, 0)
}

// The payment's end is signed: one settlement per settled contract, naming the final
// payment state and the last attempt's bundle; a contract that never reached a verification
// has no proof to settle against.
func TestSettlementIsRecordedOnce(t *testing.T) {
	h := newHarness(t, pass)
	h.approveAndPay()
	st := h.run(t)
	if len(h.settlements) != 1 {
		t.Fatalf("%d settlements recorded, want 1", len(h.settlements))
	}
	s := h.settlements[0]
	if s.Verdict != contracts.Satisfied || s.Payment.State != activities.PaymentCaptured || s.Attempt != 1 || s.BundleDigest != "digest-1-1" ||
		s.ContractHash != st.ContractHash || s.TimelineHead == "" || !hasEvent(st, "settlement_recorded") {
		t.Fatalf("settlement %+v", s)
	}

	h = newHarness(t, overflow, overflow, overflow)
	h.approveAndPay()
	h.run(t)
	if len(h.settlements) != 1 || h.settlements[0].Payment.State != activities.PaymentCanceled || h.settlements[0].Attempt != 3 ||
		h.settlements[0].BundleDigest != "digest-3-1" || h.settlements[0].Verdict != contracts.NotSatisfied {
		t.Fatalf("settlements after three failures: %+v", h.settlements)
	}

	h = newHarness(t)
	h.env.RegisterDelayedCallback(func() { h.env.SignalWorkflow(workflows.SignalCancel, workflows.Cancel{By: "alice"}) }, time.Second)
	h.run(t)
	if len(h.settlements) != 0 {
		t.Fatalf("a contract cancelled before any attempt recorded a settlement: %+v", h.settlements)
	}
}

func TestCancelBeforeApproval(t *testing.T) {
	h := newHarness(t)
	h.env.RegisterDelayedCallback(func() { h.env.SignalWorkflow(workflows.SignalCancel, workflows.Cancel{By: "alice"}) }, time.Second)
	st := h.run(t)
	if st.State != workflows.StateCancelled || h.executions != 0 {
		t.Fatalf("state %s", st.State)
	}
	h.assertPayment(t, 0, 0)
	// `contract list` reads the index: it must say cancelled, as the status does.
	if n := len(h.indexed); n == 0 || h.indexed[n-1] != workflows.StateCancelled {
		t.Fatalf("index states %v, want the last to be %s", h.indexed, workflows.StateCancelled)
	}
}

func TestCancelAfterAuthorizationBeforeWork(t *testing.T) {
	h := newHarness(t, pass)
	h.env.RegisterDelayedCallback(func() {
		h.env.SignalWorkflow(workflows.SignalApprove, workflows.Approve{Hash: h.input.Quote.Hash, Approver: "alice", MessageID: "m1"})
	}, time.Second)
	h.env.RegisterDelayedCallback(func() { h.env.SignalWorkflow(workflows.SignalCancel, workflows.Cancel{By: "alice"}) }, 2*time.Second)
	st := h.run(t)
	if st.State != workflows.StateCancelled || h.executions != 0 {
		t.Fatalf("state %s executions %d", st.State, h.executions)
	}
	h.assertPayment(t, 0, 1) // the checkout session is cancelled
}

func TestCancelDuringWork(t *testing.T) {
	h := newHarness(t, overflow, pass)
	h.approveAndPay()
	// Cancel while attempt 1 is being verified.
	h.env.SetOnActivityStartedListener(func(info *activity.Info, ctx context.Context, args converter.EncodedValues) {
		if info.ActivityType.Name == activities.VerifyName {
			h.env.SignalWorkflow(workflows.SignalCancel, workflows.Cancel{By: "alice", Reason: "changed my mind"})
		}
	})
	st := h.run(t)
	if st.State != workflows.StateCancelled || h.executions != 1 {
		t.Fatalf("state %s executions %d", st.State, h.executions)
	}
	h.assertPayment(t, 0, 1)
	h.assertLockReleased(t)
}

func TestCancelDuringCaptureIsRefused(t *testing.T) {
	h := newHarness(t, pass)
	h.approveAndPay()
	h.captureHook = func() {
		h.env.SignalWorkflow(workflows.SignalCancel, workflows.Cancel{By: "alice"})
	}
	st := h.run(t)
	h.assertPayment(t, 1, 0)
	if !hasEvent(st, "cancel_refused") || st.State == workflows.StateCancelled {
		t.Fatalf("state %s: a cancel during capture must be refused", st.State)
	}
}

func TestEmptyDiffCountsAsAttempt(t *testing.T) {
	h := newHarness(t, pass)
	h.emptyOn[1] = true
	h.approveAndPay()
	st := h.run(t)
	if verdicts(st) != "not_satisfied,satisfied" || st.Attempts[0].Reasons[0].Code != "empty_diff" || st.Executions != 2 {
		t.Fatalf("verdicts %s %+v", verdicts(st), st.Attempts[0])
	}
	h.assertPayment(t, 1, 0)
}

func TestEmptyDiffsExhaustAttempts(t *testing.T) {
	h := newHarness(t)
	h.emptyOn[1], h.emptyOn[2], h.emptyOn[3] = true, true, true
	h.approveAndPay()
	st := h.run(t)
	if st.Executions != 3 || st.Verdict != contracts.NotSatisfied || h.verifies != 0 {
		t.Fatalf("executions %d verdict %s verifies %d", st.Executions, st.Verdict, h.verifies)
	}
	h.assertPayment(t, 0, 1)
	h.assertLockReleased(t)
}

func TestPaymentNeverAuthorized(t *testing.T) {
	h := newHarness(t)
	h.env.RegisterDelayedCallback(func() {
		h.env.SignalWorkflow(workflows.SignalApprove, workflows.Approve{Hash: h.input.Quote.Hash, Approver: "alice", MessageID: "m1"})
	}, time.Second)
	st := h.run(t)
	if h.executions != 0 || !hasEvent(st, "payment_not_authorized") {
		t.Fatalf("state %s executions %d", st.State, h.executions)
	}
	h.assertPayment(t, 0, 1)
}

func TestPaymentFoundByPolling(t *testing.T) {
	h := newHarness(t, pass)
	h.env.RegisterDelayedCallback(func() {
		h.env.SignalWorkflow(workflows.SignalApprove, workflows.Approve{Hash: h.input.Quote.Hash, Approver: "alice", MessageID: "m1"})
	}, time.Second)
	// The provider authorizes but the webhook is lost: no signal arrives.
	h.env.RegisterDelayedCallback(func() { h.mu.Lock(); h.authorized = true; h.mu.Unlock() }, 3*time.Minute)
	st := h.run(t)
	if st.Verdict != contracts.Satisfied || hasEvent(st, "payment_signal") {
		t.Fatalf("verdict %s", st.Verdict)
	}
	h.assertPayment(t, 1, 0)
}

func TestPRHeadMoveRevokesEligibility(t *testing.T) {
	h := newHarness(t, pass)
	h.input.Timeouts.WatchPR = time.Hour
	h.approveAndPay()
	h.env.RegisterDelayedCallback(func() {
		h.mu.Lock()
		h.executions = 99 // the fake PR head now reports another commit
		h.mu.Unlock()
		h.env.SignalWorkflow(workflows.SignalPRHeadChanged, workflows.PRHeadChanged{SHA: commitFor(99), Source: "test"})
	}, 30*time.Minute)
	st := h.run(t)
	if st.MergeEligible || !hasEvent(st, "merge_eligibility_revoked") {
		t.Fatalf("eligible %v state %s", st.MergeEligible, st.State)
	}
	h.assertPayment(t, 1, 0)
}

func TestDiscriminationIsRecordedBeforeApproval(t *testing.T) {
	h := newHarness(t, pass)
	h.input.Discrimination = &workflows.Discrimination{BaseSHA: h.contract.Repo.BaseCommitSHA,
		Failing: []string{"mobile-no-overflow", "mobile-cards"}, Guards: []string{"loads-mobile"}}
	h.approveAndPay()
	st := h.run(t)
	if len(st.Timeline) < 2 || st.Timeline[1].Type != "discrimination" || st.Timeline[1].Data["failing_on_base"] != "mobile-no-overflow,mobile-cards" {
		t.Fatalf("timeline %+v", st.Timeline[:2])
	}
}

func TestDiscriminateWorkflowBuildsAndVerifiesTheBase(t *testing.T) {
	h := newHarness(t, overflow)
	h.env.ExecuteWorkflow(workflows.DiscriminateWorkflow, workflows.DiscriminateInput{Contract: h.contract, ContractHash: h.input.Quote.Hash})
	if err := h.env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res workflows.DiscriminateResult
	if err := h.env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if !res.Verified || res.Verify.Evidence == nil || res.Verify.Evidence.ExpectedSHA != h.contract.Repo.BaseCommitSHA || h.executions != 0 {
		t.Fatalf("verified %v expected %s executions %d", res.Verified, res.Verify.Evidence.ExpectedSHA, h.executions)
	}
}
