package e2e_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/fixtures/runs"
	"github.com/signoff/signoff/temporal/temporaltest"
	"github.com/signoff/signoff/workflows/contractapi"
	"github.com/signoff/signoff/workflows/contractclient"
)

// TestApproveUpdateOnEmbeddedServer approves a contract through contractclient on a real
// server: a wrong hash and a stranger are refused at once with their codes and recorded, the
// requester's approval is taken at once, a second one is refused as a duplicate, and the
// contract runs to a captured payment. Its history holds the updates and the cancelled
// approval deadline, and is recorded as replays/u1-approve-update.json.
func TestApproveUpdateOnEmbeddedServer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an embedded Temporal server")
	}
	srv := temporaltest.StartServer(t)
	c := temporaltest.Dial(t, srv)
	r := loadRun(t, "H1")
	w := startWiring(t, c, &scriptedVerify{contract: r.Contract}, wiringOptions{})
	dataDir := w.Config.DataDir
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := runs.Materialize(ctx, w.Local.Deliverer.Remotes, dataDir, r.Contract); err != nil {
		t.Fatal(err)
	}

	cc := contractclient.New(c)
	id := r.Contract.ContractID
	q, err := contracts.NewQuote(r.Contract, "alice")
	if err != nil {
		t.Fatal(err)
	}
	run, err := cc.Start(ctx, contractapi.ContractInput{Quote: q, Channel: "test", Trust: testTrust(r.Contract), Timeouts: fastTimeouts})
	if err != nil {
		t.Fatal(err)
	}
	refusedWith := func(err error) string {
		t.Helper()
		var r *contractapi.ApprovalRefusal
		if !errors.As(err, &r) {
			t.Fatalf("approval: %v, want a refusal", err)
		}
		return r.Code
	}
	if _, err := cc.Approve(ctx, id, contractapi.Approve{Hash: strings.Repeat("a", 64), Approver: "alice", MessageID: "m0"}); refusedWith(err) != contractapi.RefusedWrongHash {
		t.Fatalf("wrong hash: %v", err)
	}
	if _, err := cc.Approve(ctx, id, contractapi.Approve{Hash: q.Hash, Approver: "mallory", MessageID: "m1"}); refusedWith(err) != contractapi.RefusedNotRequester {
		t.Fatalf("stranger: %v", err)
	}
	// The refusals were recorded by the time the update answered: no wait for them.
	st, err := cc.Status(ctx, id)
	if err != nil || st.State != contracts.StateQuoted || len(st.Refusals) != 2 {
		t.Fatalf("after two refusals: %v state %s refusals %v", err, st.State, st.Refusals)
	}
	res, err := cc.Approve(ctx, id, contractapi.Approve{Hash: q.Hash, Approver: "alice", Channel: "test", MessageID: "m2"})
	if err != nil || res.State != contracts.StateApproved {
		t.Fatalf("approval: %v %+v", err, res)
	}
	if _, err := cc.Approve(ctx, id, contractapi.Approve{Hash: q.Hash, Approver: "alice", MessageID: "m3"}); refusedWith(err) != contractapi.RefusedAlreadyApproved {
		t.Fatalf("duplicate: %v", err)
	}

	// Pay once the workflow has opened the checkout, then let it run to the end.
	if _, err := cc.Watch(ctx, id, 100*time.Millisecond, func(st contractapi.Status) bool { return st.Payment.CheckoutSessionID != "" }); err != nil {
		t.Fatalf("checkout: %v", err)
	}
	if err := w.Pay(ctx, id); err != nil {
		t.Fatal(err)
	}
	var final contractapi.Status
	if err := run.Get(ctx, &final); err != nil {
		t.Fatal(err)
	}
	if final.Verdict != contracts.Satisfied || len(final.Refusals) != 2 || final.StrangerRefusals != 1 {
		t.Fatalf("final: verdict %q refusals %v stranger %d", final.Verdict, final.Refusals, final.StrangerRefusals)
	}
	assertCapturedOnce(t, dataDir, id, r.Contract.Price.Amount)
	if _, err := cc.Approve(ctx, id, contractapi.Approve{Hash: q.Hash, Approver: "alice", MessageID: "m4"}); refusedWith(err) != contractapi.RefusedAlreadyApproved {
		t.Fatalf("approval of a settled contract: %v", err)
	}

	// The history: the accepted updates (the validator's rejection leaves none), and the
	// approval deadline cancelled once the approval was taken.
	var accepted, timersCancelled int
	it := c.GetWorkflowHistory(ctx, contractapi.WorkflowID(id), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		switch ev.GetEventType() {
		case enums.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
			accepted++
		case enums.EVENT_TYPE_TIMER_CANCELED:
			timersCancelled++
		}
	}
	if accepted != 3 || timersCancelled < 2 {
		t.Fatalf("history: %d updates accepted (want 3: wrong hash, stranger, approval), %d timers cancelled (want the approval and payment deadlines)",
			accepted, timersCancelled)
	}
	temporaltest.RecordHistory(t, c, contractapi.WorkflowID(id), "u1-approve-update")
}
