package workflows_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/contracts/contractstest"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/policy/policytest"
	"github.com/signoff/signoff/workers"
	"github.com/signoff/signoff/workflows"
	"github.com/signoff/signoff/workflows/contractapi"
)

// verifyScript is what the fake verifier reports for one verification.
type verifyScript string

// fakes is every client of the activity structs (payments, deliverable, proof store, index,
// executor, previews, verifier) with scripted results, and counts the side effects the tests
// assert on. The activities themselves are the product's, registered as the workers do.
// Activities run on other goroutines, hence the mutex.
type fakes struct {
	t        *testing.T
	contract contracts.Contract
	env      *testsuite.TestWorkflowEnvironment

	mu         sync.Mutex
	script     []verifyScript // consumed one per verification
	emptyOn    map[int]bool   // attempts whose executor changes nothing
	executions int
	verifies   int
	captures   int
	cancels    int
	authorized bool
	indexed    []string // states written to the index, in order
	payState   string
	feedbacks  [][]contracts.Reason
	releases   int
	// lockRequests counts the lock's requests: each one is released (lock-publish-only asks
	// around every publish).
	lockRequests int
	lockGrants   int
	// lockBusy: the lock answers every ask "queued" and grants it by signal after; lockOld: it
	// is a lock run from before updates, which rejects the update.
	lockBusy, lockOld bool
	publishes         int
	bundles           []contracts.Bundle
	settlements       []contracts.Settlement
	settleErr         error // what WriteSettlement returns, when set
	settleTries       int
	captureHook       func()
}

func (f *fakes) Authorize(ctx context.Context, r capability.AuthorizeRequest) (capability.PaymentState, error) {
	return capability.PaymentState{Provider: "fake", Local: true, CheckoutSessionID: "cs_" + r.ContractID,
		CheckoutURL: "http://127.0.0.1/checkout", State: capability.PaymentPending}, nil
}

func (f *fakes) Status(ctx context.Context, hash, session string) (capability.PaymentState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := capability.PaymentPending
	if f.authorized {
		st = capability.PaymentAuthorized
	}
	return capability.PaymentState{Provider: "fake", Local: true, CheckoutSessionID: session, PaymentIntentID: "pi_1", State: st}, nil
}

func (f *fakes) Capture(ctx context.Context, a capability.PaymentAction) (capability.PaymentState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.payState == capability.PaymentCanceled {
		return capability.PaymentState{}, errors.New("capture after cancel")
	}
	f.captures++
	f.payState = capability.PaymentCaptured
	if f.captureHook != nil {
		f.captureHook()
	}
	return capability.PaymentState{Provider: "fake", PaymentIntentID: a.PaymentIntentID, State: capability.PaymentCaptured}, nil
}

func (f *fakes) Cancel(ctx context.Context, a capability.PaymentAction) (capability.PaymentState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.payState == capability.PaymentCaptured {
		return capability.PaymentState{}, errors.New("cancel after capture")
	}
	f.cancels++
	f.payState = capability.PaymentCanceled
	return capability.PaymentState{Provider: "fake", PaymentIntentID: a.PaymentIntentID, State: capability.PaymentCanceled}, nil
}

func (f *fakes) Publish(ctx context.Context, r capability.PublishRequest) (contracts.PRRef, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.publishes++
	if f.lockRequests != f.releases+1 || f.lockGrants != f.releases+1 {
		f.t.Errorf("publish with %d lock requests, %d grants and %d releases: it must hold the lock, alone", f.lockRequests, f.lockGrants, f.releases)
	}
	return contracts.PRRef{Branch: r.Branch, URL: "local://" + r.Branch}, nil
}

func (f *fakes) Report(ctx context.Context, b contracts.Bundle, final bool, comment string) (contracts.PRRef, error) {
	return contracts.PRRef{}, nil
}

func (f *fakes) WriteBundle(_ context.Context, c contracts.Contract, b contracts.Bundle) (capability.RecordResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bundles = append(f.bundles, b)
	return capability.RecordResult{ProofDir: fmt.Sprintf("/proofs/attempt-%d", b.Attempt), BundleDigest: fmt.Sprintf("digest-%d-%d", b.Attempt, b.Try)}, nil
}

func (f *fakes) WriteSettlement(_ context.Context, s contracts.Settlement) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.settleTries++
	if f.settleErr != nil {
		return "", f.settleErr
	}
	f.settlements = append(f.settlements, s)
	return "/proofs/settlement.json", nil
}

func (f *fakes) Head(ctx context.Context, r capability.HeadRequest) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return commitFor(f.executions), nil
}

func (f *fakes) Put(e capability.IndexEntry) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.indexed = append(f.indexed, e.State)
	return nil
}

// idleLock is the Temporal client the control activities reach the lock workflow with: it
// grants at once, as an idle lock workflow would.
type idleLock struct {
	client.Client
	env *testsuite.TestWorkflowEnvironment
	f   *fakes
}

func commitFor(attempt int) string { return fmt.Sprintf("%040d", attempt) }

func (f *fakes) Run(ctx context.Context, r capability.ExecRequest) (capability.ExecResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.executions++
	f.feedbacks = append(f.feedbacks, r.Feedback)
	if f.lockRequests != f.releases {
		f.t.Errorf("attempt %d ran while the contract held the repository lock: other contracts on it would wait", r.Attempt)
	}
	if f.emptyOn[r.Attempt] {
		return capability.ExecResult{Empty: true, CommitSHA: r.ParentSHA, Branch: "signoff/w1"}, nil
	}
	return capability.ExecResult{CommitSHA: commitFor(r.Attempt), Branch: "signoff/w1", FilesChanged: 1, Insertions: 3, DiffSummary: "1 file, +3"}, nil
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

func (f *fakes) Start(ctx context.Context, r capability.PreviewRequest) (capability.PreviewResult, error) {
	if f.peek() == buildFailed {
		f.next()
		return capability.PreviewResult{PreviewID: "p", Build: contracts.BuildResult{Passed: false,
			Steps: []contracts.BuildStep{{Name: "build", Passed: false}}}}, nil
	}
	return capability.PreviewResult{PreviewID: "p", URL: "http://127.0.0.1:1", Build: contracts.BuildResult{Passed: true}}, nil
}

func (f *fakes) Stop(ctx context.Context, id string) error { return nil }

func (f *fakes) Verify(ctx context.Context, r capability.VerifyRequest) (capability.VerifyResult, error) {
	o := policytest.Options{Attempt: r.Attempt}
	switch f.next() {
	case overflow:
		o.Override = map[string]map[string]any{"mobile-no-overflow": {"390x844/scroll_width": 927.0}}
	case missingSHA:
		o.RuntimeSHA = ""
		ev, err := policytest.Evidence(f.contract, r.ExpectedSHA, o)
		if err != nil {
			return capability.VerifyResult{}, err
		}
		ev.RuntimeSHA = ""
		if err := ev.Sign(policytest.VerifierKey); err != nil {
			return capability.VerifyResult{}, err
		}
		return capability.VerifyResult{Evidence: ev, EvidenceDigest: "e"}, nil
	case staleBuild:
		o.RuntimeSHA = f.contract.Repo.BaseCommitSHA
	}
	ev, err := policytest.Evidence(f.contract, r.ExpectedSHA, o)
	if err != nil {
		return capability.VerifyResult{}, err
	}
	return capability.VerifyResult{Evidence: ev, EvidenceDigest: "e", ProofDir: "/proofs"}, nil
}

type harness struct {
	*fakes
	env   *testsuite.TestWorkflowEnvironment
	input contractapi.ContractInput
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
	// The product's worker options: a capability's classified error is classified here too.
	// A minute, not the SDK's 1 s, before a workflow task counts as a deadlock: a busy host
	// can hold the workflow goroutine that long (it failed a test of the same kind in CI).
	opts := workers.WorkerOptions()
	opts.DeadlockDetectionTimeout = time.Minute
	env.SetWorkerOptions(opts)
	f := &fakes{t: t, contract: *c, env: env, script: script, emptyOn: map[int]bool{}}
	// The runtime gate has no client here: page errors in the evidence are the gate.
	workers.RegisterControl(env, &activities.Control{Payments: f, Deliverer: f, Proofs: f, Index: f,
		BundleKey: ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)), Temporal: idleLock{env: env, f: f}})
	workers.RegisterExecute(env, &activities.Execute{Executor: f, Previews: f})
	workers.RegisterVerify(env, &activities.Verify{Verifier: f})
	in := contractapi.ContractInput{Quote: q, Channel: "test",
		Trust:    contractapi.Trust{VerifierPublicKey: policytest.VerifierPublicKey(), VerifierDigest: c.Verifier.Digest},
		Timeouts: contractapi.Timeouts{Approval: time.Hour, Payment: time.Hour, PaymentPoll: time.Minute, Operator: time.Hour}}
	return &harness{fakes: f, env: env, input: in}
}

func verdicts(st contractapi.Status) string {
	var out []string
	for _, a := range st.Attempts {
		out = append(out, a.Verdict)
	}
	return strings.Join(out, ",")
}

func hasEvent(st contractapi.Status, typ string) bool {
	for _, e := range st.Timeline {
		if e.Type == typ {
			return true
		}
	}
	return false
}

const (
	pass        verifyScript = "pass"
	overflow    verifyScript = "overflow"     // honest not_satisfied
	missingSHA  verifyScript = "missing-sha"  // verification_error
	staleBuild  verifyScript = "stale-build"  // verification_error
	buildFailed verifyScript = "build-failed" // not_satisfied without evidence
)

// SignalWithStartWorkflow is a request by signal (a lock run from before updates): granted
// by signal at once.
func (l idleLock) SignalWithStartWorkflow(ctx context.Context, workflowID, signalName string, signalArg any,
	options client.StartWorkflowOptions, workflow any, workflowArgs ...any) (client.WorkflowRun, error) {
	l.f.mu.Lock()
	l.f.lockRequests++
	l.f.lockGrants++
	l.f.mu.Unlock()
	l.env.SignalWorkflow(contractapi.SignalLockGranted, workflowID)
	return nil, nil
}

func (l idleLock) NewWithStartWorkflowOperation(client.StartWorkflowOptions, any, ...any) client.WithStartWorkflowOperation {
	return nil
}

// UpdateWithStartWorkflow is a request by update: granted in the answer, or (lockBusy)
// queued and granted by signal, or (lockOld) rejected as a lock run from before updates does.
func (l idleLock) UpdateWithStartWorkflow(ctx context.Context, o client.UpdateWithStartWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	l.f.mu.Lock()
	defer l.f.mu.Unlock()
	if o.UpdateOptions.UpdateName != contractapi.UpdateLockAcquire || o.UpdateOptions.UpdateID == "" {
		l.f.t.Errorf("lock asked with update %q, ID %q", o.UpdateOptions.UpdateName, o.UpdateOptions.UpdateID)
	}
	if l.f.lockOld {
		return lockAnswer{err: fmt.Errorf("unknown update %s. KnownUpdates=[]", o.UpdateOptions.UpdateName)}, nil
	}
	l.f.lockRequests++
	if l.f.lockBusy {
		// Another contract holds it for a minute of workflow time.
		l.env.RegisterDelayedCallback(func() {
			l.f.mu.Lock()
			l.f.lockGrants++
			l.f.mu.Unlock()
			l.env.SignalWorkflow(contractapi.SignalLockGranted, contractapi.LockWorkflowID("signoff-fixtures/finance"))
		}, time.Minute)
		return lockAnswer{granted: false}, nil
	}
	l.f.lockGrants++
	return lockAnswer{granted: true}, nil
}

// SignalWorkflow is the release.
func (l idleLock) SignalWorkflow(ctx context.Context, workflowID, runID, signalName string, arg any) error {
	l.f.mu.Lock()
	defer l.f.mu.Unlock()
	if workflowID != contractapi.LockWorkflowID("signoff-fixtures/finance") || signalName != contractapi.SignalLockRelease {
		l.f.t.Errorf("signal %s to %s", signalName, workflowID)
	}
	l.f.releases++
	return nil
}

// lockAnswer is the lock update's outcome.
type lockAnswer struct {
	client.WorkflowUpdateHandle
	granted bool
	err     error
}

func (a lockAnswer) Get(_ context.Context, v any) error {
	if a.err != nil {
		return a.err
	}
	*(v.(*bool)) = a.granted
	return nil
}

// approveAndPay schedules the approval by the requester and the payment authorization.
func (h *harness) approveAndPay() {
	h.env.RegisterDelayedCallback(func() {
		h.env.SignalWorkflow(contractapi.SignalApprove, contractapi.Approve{Hash: h.input.Quote.Hash, Approver: "alice", Channel: "test", MessageID: "m1"})
	}, time.Second)
	h.env.RegisterDelayedCallback(func() {
		h.mu.Lock()
		h.authorized = true
		h.mu.Unlock()
		h.env.SignalWorkflow(contractapi.SignalPaymentAuthorized, contractapi.PaymentAuthorized{SessionID: "cs", Source: "test"})
	}, 2*time.Second)
}

func (h *harness) run(t *testing.T) contractapi.Status {
	t.Helper()
	h.env.ExecuteWorkflow(workflows.ContractWorkflow, h.input)
	if !h.env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	if err := h.env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow error: %v", err)
	}
	var st contractapi.Status
	if err := h.env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	if _, err := contracts.VerifyChain(st.Timeline); err != nil {
		t.Fatalf("timeline: %v", err)
	}
	return st
}

func (h *harness) assertPayment(t *testing.T, captures, cancels int) {
	t.Helper()
	if h.captures != captures || h.cancels != cancels {
		t.Fatalf("captures %d cancels %d, want %d and %d", h.captures, h.cancels, captures, cancels)
	}
}

// assertLockReleased: every request of the repository lock was released, once.
func (h *harness) assertLockReleased(t *testing.T) {
	t.Helper()
	if h.releases != h.lockRequests || h.lockRequests != h.publishes {
		t.Fatalf("lock requested %d times and released %d times for %d publishes", h.lockRequests, h.releases, h.publishes)
	}
}
