package workflows_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/workflows"
	"github.com/signoff/signoff/workflows/contractapi"
)

func TestSatisfiedFirstAttempt(t *testing.T) {
	h := newHarness(t, pass)
	h.approveAndPay()
	st := h.run(t)
	if verdicts(st) != "satisfied" || st.State != contracts.StateMergeEligible || !st.MergeEligible || st.Executions != 1 {
		t.Fatalf("state %s verdicts %s executions %d eligible %v", st.State, verdicts(st), st.Executions, st.MergeEligible)
	}
	h.assertPayment(t, 1, 0)
	h.assertLockReleased(t)
	if len(h.bundles) != 1 || h.bundles[0].Verdict != contracts.Satisfied || h.bundles[0].TimelineHead == "" {
		t.Fatalf("bundles %+v", h.bundles)
	}
}

// A contract queued behind another on its repository waits for the grant signal before it
// publishes (the harness's publish fails the test without the lock), then releases.
func TestQueuedForTheLockWaitsForItsGrant(t *testing.T) {
	h := newHarness(t, overflow, pass)
	h.lockBusy = true
	h.approveAndPay()
	st := h.run(t)
	if verdicts(st) != "not_satisfied,satisfied" || h.lockGrants != 2 {
		t.Fatalf("verdicts %s, %d grants", verdicts(st), h.lockGrants)
	}
	h.assertLockReleased(t)
}

// A lock run started before the lock took updates rejects the update; the contract asks by
// signal instead and is granted by signal.
func TestLockFromBeforeUpdatesIsAskedBySignal(t *testing.T) {
	h := newHarness(t, pass)
	h.lockOld = true
	h.approveAndPay()
	st := h.run(t)
	if verdicts(st) != "satisfied" || h.lockRequests != 1 {
		t.Fatalf("verdicts %s, %d requests", verdicts(st), h.lockRequests)
	}
	h.assertLockReleased(t)
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
	if st.State != contracts.StatePaymentCancelled || st.MergeEligible {
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
		var st contractapi.Status
		v, err := h.env.QueryWorkflow(contractapi.QueryStatus)
		if err != nil || v.Get(&st) != nil || st.State != contracts.StateAwaitingOperator {
			t.Errorf("before retry: state %s err %v", st.State, err)
		}
		h.env.SignalWorkflow(contractapi.SignalRetryVerification, contractapi.Operator{By: "ops"})
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
		h.env.SignalWorkflow(contractapi.SignalAbandon, contractapi.Operator{By: "ops", Reason: "preview host down"})
	}, 10*time.Minute)
	st := h.run(t)
	if st.Verdict != contracts.VerificationError || st.State != contracts.StatePaymentCancelled || h.executions != 1 {
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
		h.env.SignalWorkflow(contractapi.SignalApprove, contractapi.Approve{Hash: strings.Repeat("a", 64), Approver: "alice", MessageID: "m0"})
	}, time.Second)
	h.env.RegisterDelayedCallback(func() {
		h.env.SignalWorkflow(contractapi.SignalApprove, contractapi.Approve{Hash: h.input.Quote.Hash, Approver: "mallory", MessageID: "m1"})
	}, 2*time.Second)
	h.env.RegisterDelayedCallback(func() {
		v, err := h.env.QueryWorkflow(contractapi.QueryStatus)
		var st contractapi.Status
		if err != nil || v.Get(&st) != nil {
			t.Errorf("query: %v", err)
			return
		}
		if st.State != contracts.StateQuoted || len(st.Refusals) != 2 {
			t.Errorf("after two bad approvals: state %s refusals %v", st.State, st.Refusals)
		}
	}, 3*time.Second)
	st := h.run(t) // no valid approval: the quote expires
	if st.State != contracts.StateExpired || h.executions != 0 {
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
			h.env.SignalWorkflow(contractapi.SignalApprove, contractapi.Approve{Hash: h.input.Quote.Hash, Approver: fmt.Sprintf("mallory-%d", i%3), MessageID: fmt.Sprintf("m%d", i)})
		}, time.Second+time.Duration(i)*time.Millisecond)
	}
	h.env.RegisterDelayedCallback(func() {
		h.env.SignalWorkflow(contractapi.SignalApprove, contractapi.Approve{Hash: strings.Repeat("b", 64), Approver: "alice", MessageID: "own"})
	}, 2*time.Second)
	st := h.run(t)
	if st.State != contracts.StateExpired {
		t.Fatalf("state %s", st.State)
	}
	refusedEvents := 0
	for _, e := range st.Timeline {
		if e.Type == contracts.EventApprovalRefused {
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
	if st.State != contracts.StateExpired || !hasEvent(st, "quote_expired") {
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
		v, err := h.env.QueryWorkflow(contractapi.QueryStatus)
		var st contractapi.Status
		if err != nil || v.Get(&st) != nil || !st.QuoteExpiresAt.Equal(exp) || st.State != contracts.StateQuoted {
			t.Errorf("status before expiry: %v, expires %v state %s", err, st.QuoteExpiresAt, st.State)
		}
	}, 10*time.Minute)
	st := h.run(t)
	if st.State != contracts.StateExpired || h.executions != 0 || !hasEvent(st, "quote_expired") {
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
	if st.State != contracts.StateExpired || h.executions != 0 || !hasEvent(st, "quote_expired") {
		t.Fatalf("state %s executions %d", st.State, h.executions)
	}
	h.assertPayment(t, 0, 0)
}

// A settlement the store refuses (its name squatted by whoever can write the store) is
// reported on the timeline and not retried; the contract still ends, captured, and releases
// its repository for the next contract.
func TestSquattedSettlementStillSettles(t *testing.T) {
	h := newHarness(t, pass)
	h.settleErr = fmt.Errorf("publish: %w", capability.Refused(errors.New("the settlement name already holds something else")))
	h.approveAndPay()
	st := h.run(t)
	if h.settleTries != 1 {
		t.Errorf("WriteSettlement called %d times, want once (a refusal is final)", h.settleTries)
	}
	if st.State != contracts.StateMergeEligible || !st.Final || !hasEvent(st, contracts.EventSettlementRecordError) {
		t.Errorf("state %s final %v, events %v", st.State, st.Final, st.Timeline)
	}
	h.assertPayment(t, 1, 0)
	h.assertLockReleased(t)
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
	if s.Verdict != contracts.Satisfied || s.Payment.State != capability.PaymentCaptured || s.Attempt != 1 || s.BundleDigest != "digest-1-1" ||
		s.ContractHash != st.ContractHash || s.TimelineHead == "" || !hasEvent(st, "settlement_recorded") {
		t.Fatalf("settlement %+v", s)
	}

	h = newHarness(t, overflow, overflow, overflow)
	h.approveAndPay()
	h.run(t)
	if len(h.settlements) != 1 || h.settlements[0].Payment.State != capability.PaymentCanceled || h.settlements[0].Attempt != 3 ||
		h.settlements[0].BundleDigest != "digest-3-1" || h.settlements[0].Verdict != contracts.NotSatisfied {
		t.Fatalf("settlements after three failures: %+v", h.settlements)
	}

	h = newHarness(t)
	h.env.RegisterDelayedCallback(func() { h.env.SignalWorkflow(contractapi.SignalCancel, contractapi.Cancel{By: "alice"}) }, time.Second)
	h.run(t)
	if len(h.settlements) != 0 {
		t.Fatalf("a contract cancelled before any attempt recorded a settlement: %+v", h.settlements)
	}
}

func TestCancelBeforeApproval(t *testing.T) {
	h := newHarness(t)
	h.env.RegisterDelayedCallback(func() { h.env.SignalWorkflow(contractapi.SignalCancel, contractapi.Cancel{By: "alice"}) }, time.Second)
	st := h.run(t)
	if st.State != contracts.StateCancelled || h.executions != 0 {
		t.Fatalf("state %s", st.State)
	}
	h.assertPayment(t, 0, 0)
	// `contract list` reads the index: it must say cancelled, as the status does.
	if n := len(h.indexed); n == 0 || h.indexed[n-1] != contracts.StateCancelled {
		t.Fatalf("index states %v, want the last to be %s", h.indexed, contracts.StateCancelled)
	}
}

func TestCancelAfterAuthorizationBeforeWork(t *testing.T) {
	h := newHarness(t, pass)
	h.env.RegisterDelayedCallback(func() {
		h.env.SignalWorkflow(contractapi.SignalApprove, contractapi.Approve{Hash: h.input.Quote.Hash, Approver: "alice", MessageID: "m1"})
	}, time.Second)
	h.env.RegisterDelayedCallback(func() { h.env.SignalWorkflow(contractapi.SignalCancel, contractapi.Cancel{By: "alice"}) }, 2*time.Second)
	st := h.run(t)
	if st.State != contracts.StateCancelled || h.executions != 0 {
		t.Fatalf("state %s executions %d", st.State, h.executions)
	}
	h.assertPayment(t, 0, 1) // the checkout session is cancelled
}

func TestCancelDuringWork(t *testing.T) {
	h := newHarness(t, overflow, pass)
	h.approveAndPay()
	// Cancel while attempt 1 is being verified.
	h.env.SetOnActivityStartedListener(func(info *activity.Info, ctx context.Context, args converter.EncodedValues) {
		if info.ActivityType.Name == "Verify" {
			h.env.SignalWorkflow(contractapi.SignalCancel, contractapi.Cancel{By: "alice", Reason: "changed my mind"})
		}
	})
	st := h.run(t)
	if st.State != contracts.StateCancelled || h.executions != 1 {
		t.Fatalf("state %s executions %d", st.State, h.executions)
	}
	h.assertPayment(t, 0, 1)
	h.assertLockReleased(t)
}

func TestCancelDuringCaptureIsRefused(t *testing.T) {
	h := newHarness(t, pass)
	h.approveAndPay()
	h.captureHook = func() {
		h.env.SignalWorkflow(contractapi.SignalCancel, contractapi.Cancel{By: "alice"})
	}
	st := h.run(t)
	h.assertPayment(t, 1, 0)
	if !hasEvent(st, "cancel_refused") || st.State == contracts.StateCancelled {
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
		h.env.SignalWorkflow(contractapi.SignalApprove, contractapi.Approve{Hash: h.input.Quote.Hash, Approver: "alice", MessageID: "m1"})
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
		h.env.SignalWorkflow(contractapi.SignalApprove, contractapi.Approve{Hash: h.input.Quote.Hash, Approver: "alice", MessageID: "m1"})
	}, time.Second)
	// The provider authorizes but the webhook is lost: no signal arrives.
	h.env.RegisterDelayedCallback(func() { h.mu.Lock(); h.authorized = true; h.mu.Unlock() }, 3*time.Minute)
	st := h.run(t)
	if st.Verdict != contracts.Satisfied || hasEvent(st, "payment_signal") {
		t.Fatalf("verdict %s", st.Verdict)
	}
	h.assertPayment(t, 1, 0)
}

// TestCheckoutLinkSurvivesPolls: the provider's status answers carry no checkout link; the
// status a requester reads keeps it until the payment is authorized, however late they pay.
func TestCheckoutLinkSurvivesPolls(t *testing.T) {
	h := newHarness(t, pass)
	h.env.RegisterDelayedCallback(func() {
		h.env.SignalWorkflow(contractapi.SignalApprove, contractapi.Approve{Hash: h.input.Quote.Hash, Approver: "alice", MessageID: "m1"})
	}, time.Second)
	// Two polls (one a minute) have answered "pending" by then.
	h.env.RegisterDelayedCallback(func() {
		var st contractapi.Status
		v, err := h.env.QueryWorkflow(contractapi.QueryStatus)
		if err != nil || v.Get(&st) != nil {
			t.Fatalf("query: %v", err)
		}
		if st.Payment.State != capability.PaymentPending || st.Payment.CheckoutURL != "http://127.0.0.1/checkout" || st.Payment.CheckoutSessionID == "" {
			t.Errorf("after two polls the payment reads %+v, want pending with its checkout link", st.Payment)
		}
		if !hasEvent(st, "payment_requested") {
			t.Errorf("no payment was requested by then: %s", st.State)
		}
		h.mu.Lock()
		h.authorized = true
		h.mu.Unlock()
	}, 2*time.Minute+30*time.Second)
	st := h.run(t)
	if st.Verdict != contracts.Satisfied || st.Payment.CheckoutURL == "" || st.Payment.State != capability.PaymentCaptured {
		t.Fatalf("verdict %s, payment %+v", st.Verdict, st.Payment)
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
		h.env.SignalWorkflow(contractapi.SignalPRHeadChanged, contractapi.PRHeadChanged{SHA: commitFor(99), Source: "test"})
	}, 30*time.Minute)
	st := h.run(t)
	if st.MergeEligible || !hasEvent(st, "merge_eligibility_revoked") {
		t.Fatalf("eligible %v state %s", st.MergeEligible, st.State)
	}
	h.assertPayment(t, 1, 0)
}

func TestBaseCheckIsRecordedBeforeApproval(t *testing.T) {
	h := newHarness(t, pass)
	h.input.BaseCheck = &contracts.BaseCheck{BaseSHA: h.contract.Repo.BaseCommitSHA,
		Failing: []string{"mobile-no-overflow", "mobile-cards"}, Guards: []string{"loads-mobile"}}
	h.approveAndPay()
	st := h.run(t)
	if len(st.Timeline) < 2 || st.Timeline[1].Type != contracts.EventBaseCheck || st.Timeline[1].Data["failing_on_base"] != "mobile-no-overflow,mobile-cards" {
		t.Fatalf("timeline %+v", st.Timeline[:2])
	}
}

func TestBaseCheckWorkflowBuildsAndVerifiesTheBase(t *testing.T) {
	h := newHarness(t, overflow)
	h.env.ExecuteWorkflow(workflows.BaseCheckWorkflow, contractapi.BaseCheckInput{Contract: h.contract, ContractHash: h.input.Quote.Hash})
	if err := h.env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res contractapi.BaseCheckResult
	if err := h.env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if !res.Verified || res.Verify.Evidence == nil || res.Verify.Evidence.ExpectedSHA != h.contract.Repo.BaseCommitSHA || h.executions != 0 {
		t.Fatalf("verified %v expected %s executions %d", res.Verified, res.Verify.Evidence.ExpectedSHA, h.executions)
	}
}
