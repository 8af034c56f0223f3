package conversation_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/signoff/signoff/chatbridge/chatproto"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/payment"
	"github.com/signoff/signoff/workflows/contractapi"
)

// fakeTemporal plays the contract workflow's signal, update and query surface: the approval rules
// (exact hash, requester only), the checkout opened on approval, the payment confirmed with
// the provider, cancel. It records what the conversation asked for.
type fakeTemporal struct {
	mu       sync.Mutex
	payments capability.Payments
	wfs      map[string]*fakeWF
	signals  []fakeSignal
	starts   []client.StartWorkflowOptions
	queries  int
	// quote plays the quote workflow (its two activities, in order) when one is started.
	quote  func(contractapi.QuoteRequest) contractapi.QuoteReply
	quoted []contractapi.QuoteReply
}

type fakeWF struct {
	in contractapi.ContractInput
	st contractapi.Status
}

type fakeSignal struct {
	WorkflowID, Name string
	Arg              any
}

func newFakeTemporal(p capability.Payments) *fakeTemporal {
	return &fakeTemporal{payments: p, wfs: map[string]*fakeWF{}}
}

func (f *fakeTemporal) ExecuteWorkflow(_ context.Context, o client.StartWorkflowOptions, wf interface{}, args ...interface{}) (client.WorkflowRun, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.starts = append(f.starts, o)
	if wf == contractapi.QuoteWorkflowName && len(args) == 1 {
		if f.wfs[o.ID] != nil {
			return nil, serviceerror.NewWorkflowExecutionAlreadyStarted("already started", "", "run-1")
		}
		f.wfs[o.ID] = &fakeWF{}
		f.mu.Unlock() // the draft starts the contract workflow
		r := f.quote(args[0].(contractapi.QuoteRequest))
		f.mu.Lock()
		f.quoted = append(f.quoted, r)
		return fakeRun{o.ID}, nil
	}
	if wf != contractapi.ContractWorkflowName || len(args) != 1 {
		return nil, fmt.Errorf("unexpected workflow %v", wf)
	}
	in := args[0].(contractapi.ContractInput)
	if old := f.wfs[o.ID]; old != nil && (!old.st.Final || o.WorkflowIDReusePolicy == enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE) {
		if !o.WorkflowExecutionErrorWhenAlreadyStarted {
			return fakeRun{o.ID}, nil // what the SDK does without the option: the old run, no error
		}
		return nil, serviceerror.NewWorkflowExecutionAlreadyStarted("already started", "", "run-1")
	}
	c := in.Quote.Contract
	f.wfs[o.ID] = &fakeWF{in: in, st: contractapi.Status{ContractID: c.ContractID, ContractHash: in.Quote.Hash, Goal: c.Goal,
		Repo: c.Repo.Owner + "/" + c.Repo.Name, Requester: in.Quote.Requester, State: contracts.StateQuoted, MaxAttempts: c.MaxAttempts,
		Attempts: []contractapi.AttemptRecord{}, Refusals: []string{}}}
	return fakeRun{o.ID}, nil
}

// contractStarts lists the contract workflows started.
func (f *fakeTemporal) contractStarts() []client.StartWorkflowOptions {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []client.StartWorkflowOptions
	for _, o := range f.starts {
		if strings.HasPrefix(o.ID, "contract-") {
			out = append(out, o)
		}
	}
	return out
}

func (f *fakeTemporal) SignalWorkflow(ctx context.Context, id, _ string, name string, arg interface{}) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.signals = append(f.signals, fakeSignal{id, name, arg})
	w := f.wfs[id]
	if w == nil {
		return serviceerror.NewNotFound("workflow not found")
	}
	switch name {
	case contractapi.SignalPaymentAuthorized:
		ps, err := f.payments.Status(ctx, w.st.ContractHash, w.st.Payment.CheckoutSessionID)
		if err != nil {
			return err
		}
		w.st.Payment = ps
		if ps.State == capability.PaymentAuthorized {
			w.st.State = contracts.StateAuthorized
		}
	case contractapi.SignalCancel:
		w.st.State, w.st.Final = contracts.StateCancelled, true
	}
	return nil
}

// UpdateWorkflow plays the approve update: refused as the workflow refuses (a closed quote
// by the validator, a stranger or a wrong hash by the handler), else approved with the
// checkout opened. Each reaching the workflow is recorded under the update's name.
func (f *fakeTemporal) UpdateWorkflow(ctx context.Context, o client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if o.UpdateName != contractapi.UpdateApprove || len(o.Args) != 1 {
		return nil, fmt.Errorf("unexpected update %s", o.UpdateName)
	}
	a := o.Args[0].(contractapi.Approve)
	w := f.wfs[o.WorkflowID]
	if w == nil || w.st.Final {
		return nil, serviceerror.NewNotFound("workflow not found")
	}
	if w.st.State != contracts.StateQuoted {
		return nil, refusedErr(contractapi.RefusedAlreadyApproved, "contract "+w.st.ContractID+" was approved already")
	}
	f.signals = append(f.signals, fakeSignal{o.WorkflowID, o.UpdateName, a})
	switch {
	case a.Approver != w.st.Requester && w.st.StrangerRefusals > 0: // as the workflow: recorded once, then counted
		w.st.StrangerRefusals++
		return fakeUpdate{err: refusedErr(contractapi.RefusedNotRequester, "only the requester may approve")}, nil
	case a.Approver != w.st.Requester:
		w.st.StrangerRefusals++
		why := fmt.Sprintf("approval by %q refused: only the requester %q may approve", a.Approver, w.st.Requester)
		w.st.Refusals = append(w.st.Refusals, why)
		return fakeUpdate{err: refusedErr(contractapi.RefusedNotRequester, why)}, nil
	case a.Hash != w.st.ContractHash:
		why := "approval of hash " + a.Hash[:12] + " refused: the quoted contract's hash is " + w.st.ContractHash[:12]
		w.st.Refusals = append(w.st.Refusals, why)
		return fakeUpdate{err: refusedErr(contractapi.RefusedWrongHash, why)}, nil
	}
	w.st.State = contracts.StateApproved
	ps, err := f.payments.Authorize(ctx, capability.AuthorizeRequest{ContractID: w.st.ContractID, ContractHash: w.st.ContractHash,
		Goal: w.st.Goal, Price: w.in.Quote.Contract.Price})
	if err != nil {
		return nil, err
	}
	w.st.Payment = ps
	return fakeUpdate{res: contractapi.ApproveResult{State: w.st.State}}, nil
}

func refusedErr(code, why string) error {
	return temporal.NewApplicationErrorWithOptions(why, contractapi.ApprovalRefusedError, temporal.ApplicationErrorOptions{
		NonRetryable: true, Details: []any{contractapi.ApprovalRefusal{Code: code, Reason: why}}})
}

type fakeUpdate struct {
	res contractapi.ApproveResult
	err error
}

func (u fakeUpdate) WorkflowID() string { return "" }
func (u fakeUpdate) RunID() string      { return "" }
func (u fakeUpdate) UpdateID() string   { return "" }
func (u fakeUpdate) Get(_ context.Context, v any) error {
	if u.err != nil {
		return u.err
	}
	*v.(*contractapi.ApproveResult) = u.res
	return nil
}

func (f *fakeTemporal) QueryWorkflow(_ context.Context, id, _ string, q string, _ ...interface{}) (converter.EncodedValue, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries++
	w := f.wfs[id]
	if w == nil {
		return nil, serviceerror.NewNotFound("workflow not found")
	}
	if q != contractapi.QueryStatus {
		return nil, fmt.Errorf("unknown query %s", q)
	}
	return encoded{w.st}, nil
}

// waitQueries waits until n more status queries were answered (watchers poll).
func (f *fakeTemporal) waitQueries(t *testing.T, n int) {
	t.Helper()
	f.mu.Lock()
	want := f.queries + n
	f.mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		f.mu.Lock()
		got := f.queries
		f.mu.Unlock()
		if got >= want {
			return
		}
		time.Sleep(5 * time.Millisecond) // polling a condition with a deadline
	}
	t.Fatalf("fewer than %d status queries", n)
}

// set changes a workflow's status as the real workflow would move on.
func (f *fakeTemporal) set(id string, fn func(st *contractapi.Status)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(&f.wfs[contractapi.WorkflowID(id)].st)
}

func (f *fakeTemporal) input(id string) contractapi.ContractInput {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.wfs[contractapi.WorkflowID(id)].in
}

func (f *fakeTemporal) signalsNamed(name string) []fakeSignal {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fakeSignal
	for _, s := range f.signals {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// fakePayments is the payment provider, in memory, with the rules one enforces: one checkout
// per contract hash, answered again when retried; authorized only once the payer completes
// it (pay, as on the local Stripe test double's page); a payment read or moved only for the
// contract it was made for; no capture after a cancel or cancel after a capture.
type fakePayments struct {
	mu sync.Mutex
	by map[string]*fakePayment // by checkout session id
}

type fakePayment struct {
	ContractID, ContractHash string
	capability.PaymentState
}

var _ capability.Payments = (*fakePayments)(nil)

func (p *fakePayments) Authorize(_ context.Context, req capability.AuthorizeRequest) (capability.PaymentState, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(req.ContractHash) < 16 {
		return capability.PaymentState{}, capability.Refused(fmt.Errorf("contract hash %q is too short", req.ContractHash))
	}
	session := "cs_test_" + req.ContractHash[:16]
	if p.by == nil {
		p.by = map[string]*fakePayment{}
	}
	if e := p.by[session]; e != nil {
		return e.PaymentState, nil
	}
	e := &fakePayment{ContractID: req.ContractID, ContractHash: req.ContractHash, PaymentState: capability.PaymentState{
		Provider: payment.ProviderLocal, Local: true, CheckoutSessionID: session,
		CheckoutURL: "http://127.0.0.1:8480/checkout/" + session, State: capability.PaymentPending}}
	p.by[session] = e
	return e.PaymentState, nil
}

// find is the payment for a session (or PaymentIntent) made for contractHash. Callers hold p.mu.
func (p *fakePayments) find(contractHash, id string) (*fakePayment, error) {
	for _, e := range p.by {
		if e.ContractHash == contractHash && (e.CheckoutSessionID == id || (id != "" && e.PaymentIntentID == id)) {
			return e, nil
		}
	}
	return nil, capability.Refused(fmt.Errorf("no payment %q for contract %s", id, contractHash))
}

func (p *fakePayments) Status(_ context.Context, contractHash, session string) (capability.PaymentState, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, err := p.find(contractHash, session)
	if err != nil {
		return capability.PaymentState{}, err
	}
	return e.PaymentState, nil
}

func (p *fakePayments) Capture(_ context.Context, a capability.PaymentAction) (capability.PaymentState, error) {
	return p.move(a, capability.PaymentCaptured, capability.PaymentAuthorized)
}

func (p *fakePayments) Cancel(_ context.Context, a capability.PaymentAction) (capability.PaymentState, error) {
	return p.move(a, capability.PaymentCanceled, capability.PaymentAuthorized, capability.PaymentPending)
}

// move takes a payment to state `to` from one of `from`; repeating a move is a no-op.
func (p *fakePayments) move(a capability.PaymentAction, to string, from ...string) (capability.PaymentState, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, err := p.find(a.ContractHash, a.SessionID)
	if err != nil {
		return capability.PaymentState{}, err
	}
	if e.State != to {
		if !slices.Contains(from, e.State) {
			return e.PaymentState, capability.PaymentStateError(fmt.Errorf("payment %s is %s, not %s", e.CheckoutSessionID, e.State, to))
		}
		e.State = to
	}
	return e.PaymentState, nil
}

// pay completes a contract's checkout, as the payer does on the checkout page: authorized,
// nothing captured. Paying again changes nothing.
func (p *fakePayments) pay(contractID string) (capability.PaymentState, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range p.by {
		if e.ContractID != contractID {
			continue
		}
		switch e.State {
		case capability.PaymentPending:
			e.State, e.PaymentIntentID = capability.PaymentAuthorized, "pi_test_"+e.ContractHash[:16]
			e.AuthorizedAt = time.Now().UTC().Format(time.RFC3339)
		case capability.PaymentAuthorized:
		default:
			return e.PaymentState, fmt.Errorf("the checkout of %s is %s", contractID, e.State)
		}
		return e.PaymentState, nil
	}
	return capability.PaymentState{}, fmt.Errorf("no checkout for %s", contractID)
}

// all lists every payment made.
func (p *fakePayments) all() []fakePayment {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []fakePayment
	for _, e := range p.by {
		out = append(out, *e)
	}
	return out
}

type fakeRun struct{ id string }

func (r fakeRun) GetID() string                  { return r.id }
func (r fakeRun) GetRunID() string               { return "run-1" }
func (r fakeRun) GetFirstExecutionRunID() string { return "run-1" }
func (r fakeRun) Get(context.Context, any) error { return nil }
func (r fakeRun) GetWithOptions(context.Context, any, client.WorkflowRunGetOptions) error {
	return nil
}

type encoded struct{ v any }

func (e encoded) HasValue() bool { return true }
func (e encoded) Get(p any) error {
	b, err := json.Marshal(e.v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, p)
}

// outbox collects pushed messages.
type outbox struct {
	mu   sync.Mutex
	msgs []pushed
	fail error
}

type pushed struct {
	To, Session, MsgID, Text string
}

func (o *outbox) SendMessage(_ context.Context, to, session string, m chatproto.ChatMessage) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.fail != nil {
		return o.fail
	}
	o.msgs = append(o.msgs, pushed{to, session, m.MsgID, m.Text()})
	return nil
}

func (o *outbox) all() []pushed {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]pushed(nil), o.msgs...)
}

// waitPushed waits for a pushed message containing want.
func (o *outbox) waitPushed(t *testing.T, want string) pushed {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, m := range o.all() {
			if strings.Contains(m.Text, want) {
				return m
			}
		}
		time.Sleep(10 * time.Millisecond) // polling a condition with a deadline
	}
	t.Fatalf("no pushed message contains %q; got %+v", want, o.all())
	return pushed{}
}
