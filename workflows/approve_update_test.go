package workflows_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/workflows/contractapi"
)

// updateOutcome is what one approve update came to: rejected by the validator, or completed
// by the handler with a result or an error.
type updateOutcome struct {
	done     bool
	rejected bool
	result   contractapi.ApproveResult
	err      error
}

// approveByUpdate sends the approve update after d and records its outcome.
func (h *harness) approveByUpdate(t *testing.T, d time.Duration, id string, a contractapi.Approve) *updateOutcome {
	t.Helper()
	out := &updateOutcome{}
	h.env.RegisterDelayedCallback(func() {
		h.env.UpdateWorkflow(contractapi.UpdateApprove, id, &testsuite.TestUpdateCallback{
			OnReject: func(err error) { out.done, out.rejected, out.err = true, true, err },
			OnComplete: func(v any, err error) {
				out.done, out.err = true, err
				if r, ok := v.(contractapi.ApproveResult); ok {
					out.result = r
				}
			},
		}, a)
	}, d)
	return out
}

// refusal reads the typed refusal out of an update's error.
func refusal(t *testing.T, err error) contractapi.ApprovalRefusal {
	t.Helper()
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != contractapi.ApprovalRefusedError {
		t.Fatalf("update error %v is not an %s", err, contractapi.ApprovalRefusedError)
	}
	var r contractapi.ApprovalRefusal
	if err := app.Details(&r); err != nil {
		t.Fatalf("refusal details: %v", err)
	}
	return r
}

func (h *harness) pay(d time.Duration) {
	h.env.RegisterDelayedCallback(func() {
		h.mu.Lock()
		h.authorized = true
		h.mu.Unlock()
		h.env.SignalWorkflow(contractapi.SignalPaymentAuthorized, contractapi.PaymentAuthorized{SessionID: "cs", Source: "test"})
	}, d)
}

// The approve update takes the requester's approval of the quoted hash and answers at once
// with the new state; the contract then runs as after the signal.
func TestApproveUpdateAccepted(t *testing.T) {
	h := newHarness(t, pass)
	u := h.approveByUpdate(t, time.Second, "u1", contractapi.Approve{Hash: h.input.Quote.Hash, Approver: "alice", Channel: "test", MessageID: "m1"})
	h.pay(2 * time.Second)
	st := h.run(t)
	if !u.done || u.rejected || u.err != nil || u.result.State != contracts.StateApproved {
		t.Fatalf("update: %+v", u)
	}
	if st.Verdict != contracts.Satisfied || !hasEvent(st, contracts.EventApproved) || len(st.Refusals) != 0 {
		t.Fatalf("verdict %q refusals %v", st.Verdict, st.Refusals)
	}
	h.assertPayment(t, 1, 0)
}

// A wrong hash is refused by the update, with its reason, and recorded as the signal's
// refusal is; the quote stays open and a right approval after it is taken.
func TestApproveUpdateRefusesWrongHash(t *testing.T) {
	h := newHarness(t, pass)
	bad := h.approveByUpdate(t, time.Second, "u1", contractapi.Approve{Hash: strings.Repeat("a", 64), Approver: "alice", MessageID: "m0"})
	stranger := h.approveByUpdate(t, 2*time.Second, "u2", contractapi.Approve{Hash: h.input.Quote.Hash, Approver: "mallory", MessageID: "m1"})
	good := h.approveByUpdate(t, 3*time.Second, "u3", contractapi.Approve{Hash: h.input.Quote.Hash, Approver: "alice", MessageID: "m2"})
	h.pay(4 * time.Second)
	st := h.run(t)
	if !bad.done || bad.rejected {
		t.Fatalf("wrong hash: %+v (a refusal the timeline records is the handler's, not the validator's)", bad)
	}
	if r := refusal(t, bad.err); r.Code != contractapi.RefusedWrongHash || r.Reason != st.Refusals[0] {
		t.Fatalf("wrong hash refusal %+v, recorded %v", r, st.Refusals)
	}
	if r := refusal(t, stranger.err); r.Code != contractapi.RefusedNotRequester || !strings.Contains(r.Reason, "mallory") {
		t.Fatalf("stranger refusal %+v", r)
	}
	if good.err != nil || good.result.State != contracts.StateApproved {
		t.Fatalf("right approval after refusals: %+v", good)
	}
	if len(st.Refusals) != 2 || st.StrangerRefusals != 1 || st.Verdict != contracts.Satisfied {
		t.Fatalf("refusals %v stranger %d verdict %q", st.Refusals, st.StrangerRefusals, st.Verdict)
	}
}

// A second approval of an approved contract is rejected as a duplicate: nothing is recorded,
// and the contract runs once.
func TestApproveUpdateDuplicate(t *testing.T) {
	h := newHarness(t, pass)
	a := contractapi.Approve{Hash: h.input.Quote.Hash, Approver: "alice", MessageID: "m1"}
	first := h.approveByUpdate(t, time.Second, "u1", a)
	again := h.approveByUpdate(t, 1500*time.Millisecond, "u2", a)
	h.pay(2 * time.Second)
	st := h.run(t)
	if first.err != nil || first.result.State != contracts.StateApproved {
		t.Fatalf("first: %+v", first)
	}
	if !again.rejected {
		t.Fatalf("duplicate was not rejected by the validator: %+v", again)
	}
	if r := refusal(t, again.err); r.Code != contractapi.RefusedAlreadyApproved {
		t.Fatalf("duplicate refusal %+v", r)
	}
	approvals := 0
	for _, e := range st.Timeline {
		if e.Type == contracts.EventApproved {
			approvals++
		}
	}
	if approvals != 1 || len(st.Refusals) != 0 || h.executions != 1 {
		t.Fatalf("approved events %d refusals %v executions %d", approvals, st.Refusals, h.executions)
	}
}

// After the quote expired, and after a cancel, the update is rejected with the reason. The
// index write is slowed (on the workflow's clock) so the workflow is still open when the
// late approval arrives.
func TestApproveUpdateRefusedWhenClosed(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cancel bool
		at     time.Duration
		code   string
		state  string
	}{
		{"expired", false, 75 * time.Minute, contractapi.RefusedExpired, contracts.StateExpired},
		{"expired-at-quote-deadline", false, 65 * time.Minute, contractapi.RefusedExpired, contracts.StateExpired},
		{"cancelled", true, 15 * time.Minute, contractapi.RefusedCancelled, contracts.StateCancelled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, pass) // approval timeout 1 h
			h.env.OnActivity((*activities.Control)(nil).UpdateIndex, mock.Anything, mock.Anything).Return(nil).After(10 * time.Minute)
			if tc.cancel {
				h.env.RegisterDelayedCallback(func() { h.env.SignalWorkflow(contractapi.SignalCancel, contractapi.Cancel{By: "alice"}) }, 12*time.Minute)
			}
			u := h.approveByUpdate(t, tc.at, "late", contractapi.Approve{Hash: h.input.Quote.Hash, Approver: "alice", MessageID: "late"})
			st := h.run(t)
			if !u.rejected {
				t.Fatalf("late approval was not rejected: %+v", u)
			}
			if r := refusal(t, u.err); r.Code != tc.code {
				t.Fatalf("refusal %+v, want %s", r, tc.code)
			}
			if st.State != tc.state || hasEvent(st, contracts.EventApproved) || h.executions != 0 {
				t.Fatalf("state %s executions %d", st.State, h.executions)
			}
		})
	}
}
