package contractclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/workflows/contractapi"
	"github.com/signoff/signoff/workflows/contractclient"
)

// fake answers as the server would: updateErr is the update's outcome, statuses the status
// query's answers in turn (the last repeats), queryErr a failing query.
type fake struct {
	starts    []client.StartWorkflowOptions
	updates   []client.UpdateWorkflowOptions
	updateErr error // returned by UpdateWorkflow itself
	resultErr error // returned by the handle's Get
	statuses  []contractapi.Status
	queries   int
	queryErr  error
}

func (f *fake) ExecuteWorkflow(_ context.Context, o client.StartWorkflowOptions, _ interface{}, _ ...interface{}) (client.WorkflowRun, error) {
	f.starts = append(f.starts, o)
	return nil, nil
}

func (f *fake) SignalWorkflow(context.Context, string, string, string, interface{}) error { return nil }

func (f *fake) QueryWorkflow(context.Context, string, string, string, ...interface{}) (converter.EncodedValue, error) {
	if f.queryErr != nil {
		return nil, f.queryErr
	}
	st := f.statuses[min(f.queries, len(f.statuses)-1)]
	f.queries++
	return encoded{st}, nil
}

func (f *fake) UpdateWorkflow(_ context.Context, o client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	f.updates = append(f.updates, o)
	if f.updateErr != nil {
		return nil, f.updateErr
	}
	return handle{f.resultErr}, nil
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

type handle struct{ err error }

func (h handle) WorkflowID() string { return "" }
func (h handle) RunID() string      { return "" }
func (h handle) UpdateID() string   { return "" }
func (h handle) Get(_ context.Context, v interface{}) error {
	if h.err != nil {
		return h.err
	}
	*v.(*contractapi.ApproveResult) = contractapi.ApproveResult{State: contracts.StateApproved}
	return nil
}

func TestStartHasTheOneIDPolicy(t *testing.T) {
	f := &fake{}
	in := contractapi.ContractInput{Quote: contracts.Quote{Contract: contracts.Contract{ContractID: "c-one"}}}
	if _, err := contractclient.New(f).Start(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	o := f.starts[0]
	if o.ID != contractapi.WorkflowID("c-one") || o.TaskQueue != contractapi.ControlQueue || !o.WorkflowExecutionErrorWhenAlreadyStarted ||
		o.WorkflowIDReusePolicy != enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE || o.WorkflowIDConflictPolicy != enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL {
		t.Fatalf("start options %+v", o)
	}
}

func TestApprove(t *testing.T) {
	a := contractapi.Approve{Hash: strings.Repeat("a", 64), Approver: "alice"}
	refused := temporal.NewApplicationErrorWithOptions("no", contractapi.ApprovalRefusedError, temporal.ApplicationErrorOptions{
		NonRetryable: true, Details: []any{contractapi.ApprovalRefusal{Code: contractapi.RefusedWrongHash, Reason: "approval of hash aaa refused"}}})
	gone := serviceerror.NewNotFound("workflow execution already completed")
	for _, tc := range []struct {
		name string
		f    *fake
		code string // "" approved; "-" another error
	}{
		{"approved", &fake{}, ""},
		{"refused by the workflow", &fake{resultErr: refused}, contractapi.RefusedWrongHash},
		{"rejected by the validator", &fake{updateErr: refused}, contractapi.RefusedWrongHash},
		{"ended expired", &fake{updateErr: gone, statuses: []contractapi.Status{{ContractID: "c", State: contracts.StateExpired, Final: true}}}, contractapi.RefusedExpired},
		{"ended cancelled", &fake{updateErr: gone, statuses: []contractapi.Status{{ContractID: "c", State: contracts.StateCancelled, Final: true}}}, contractapi.RefusedCancelled},
		{"ended settled", &fake{updateErr: gone, statuses: []contractapi.Status{{ContractID: "c", State: contracts.StatePaymentCaptured, Final: true}}}, contractapi.RefusedAlreadyApproved},
		{"no such contract", &fake{updateErr: gone, queryErr: serviceerror.NewNotFound("not found")}, "-"},
		{"server down", &fake{updateErr: errors.New("unavailable")}, "-"},
		{"not answered", &fake{updateErr: client.NewWorkflowUpdateServiceTimeoutOrCanceledError(context.DeadlineExceeded)}, "timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := contractclient.New(tc.f).Approve(context.Background(), "c", a)
			if u := tc.f.updates[0]; u.UpdateName != contractapi.UpdateApprove || u.WorkflowID != contractapi.WorkflowID("c") ||
				u.WaitForStage != client.WorkflowUpdateStageCompleted || u.Args[0] != a {
				t.Fatalf("update options %+v", u)
			}
			var r *contractapi.ApprovalRefusal
			switch {
			case tc.code == "":
				if err != nil || res.State != contracts.StateApproved {
					t.Fatalf("approve: %v %+v", err, res)
				}
			case tc.code == "timeout":
				if !errors.Is(err, contractclient.ErrNotAnswered) || errors.As(err, &r) {
					t.Fatalf("want ErrNotAnswered, got %v", err)
				}
			case tc.code == "-":
				if err == nil || errors.As(err, &r) || errors.Is(err, contractclient.ErrNotAnswered) {
					t.Fatalf("want a plain error, got %v", err)
				}
			case !errors.As(err, &r) || r.Code != tc.code || r.Reason == "":
				t.Fatalf("want refusal %s, got %v (%+v)", tc.code, err, r)
			}
		})
	}
}

func TestWatchStopsAtFinal(t *testing.T) {
	f := &fake{statuses: []contractapi.Status{{ContractID: "c", State: contracts.StateQuoted}, {ContractID: "c", State: contracts.StateApproved},
		{ContractID: "c", State: contracts.StateExpired, Final: true}}}
	var seen []string
	st, err := contractclient.New(f).Watch(context.Background(), "c", time.Millisecond, func(st contractapi.Status) bool {
		seen = append(seen, st.State)
		return false
	})
	if err != nil || !st.Final || strings.Join(seen, ",") != "quoted,approved,expired" {
		t.Fatalf("watch: %v final %v seen %v", err, st.Final, seen)
	}
	f = &fake{statuses: []contractapi.Status{{ContractID: "c", State: contracts.StateQuoted}, {ContractID: "c", State: contracts.StateApproved}}}
	st, err = contractclient.New(f).Watch(context.Background(), "c", time.Millisecond, func(st contractapi.Status) bool { return st.State == contracts.StateApproved })
	if err != nil || st.State != contracts.StateApproved || f.queries != 2 {
		t.Fatalf("watch until approved: %v %s after %d queries", err, st.State, f.queries)
	}
}

func TestAlreadyStarted(t *testing.T) {
	started := serviceerror.NewWorkflowExecutionAlreadyStarted("started", "", "run")
	if !contractclient.AlreadyStarted(fmt.Errorf("start: %w", started)) {
		t.Error("a wrapped already-started refusal is not recognised")
	}
	if contractclient.AlreadyStarted(errors.New("connection refused")) || contractclient.AlreadyStarted(nil) {
		t.Error("another error taken for an already-started refusal")
	}
}

// sent records signals.
type sent struct{ got []string }

func (s *sent) SignalWorkflow(_ context.Context, id, _, name string, arg interface{}) error {
	s.got = append(s.got, fmt.Sprintf("%s %s %T", id, name, arg))
	return nil
}

// TestSignalsNameTheirArgument: each signal goes to the contract's workflow under its name
// with its own argument type, and an operator decision that is not one is refused unsent.
func TestSignalsNameTheirArgument(t *testing.T) {
	s := &sent{}
	sig := contractclient.NewSignals(s)
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(sig.Cancel(ctx, "c1", contractapi.Cancel{}))
	must(sig.PaymentAuthorized(ctx, "c1", contractapi.PaymentAuthorized{}))
	must(sig.PRHeadChanged(ctx, "c1", contractapi.PRHeadChanged{}))
	must(sig.Operator(ctx, "c1", contractapi.SignalRetryVerification, contractapi.Operator{}))
	must(sig.Operator(ctx, "c1", contractapi.SignalAbandon, contractapi.Operator{}))
	if err := sig.Operator(ctx, "c1", contractapi.SignalCancel, contractapi.Operator{}); err == nil {
		t.Error("cancel was taken as an operator's decision")
	}
	want := []string{
		"contract-c1 cancel contractapi.Cancel",
		"contract-c1 payment_authorized contractapi.PaymentAuthorized",
		"contract-c1 pr_head_changed contractapi.PRHeadChanged",
		"contract-c1 retry_verification contractapi.Operator",
		"contract-c1 abandon contractapi.Operator",
	}
	if strings.Join(s.got, "\n") != strings.Join(want, "\n") {
		t.Errorf("sent:\n%s\nwant:\n%s", strings.Join(s.got, "\n"), strings.Join(want, "\n"))
	}
}
