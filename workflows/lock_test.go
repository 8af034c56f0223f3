package workflows_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/signoff/signoff/workflows"
	"github.com/signoff/signoff/workflows/contractapi"
)

// lockHarness records grants the lock workflow sends to requesters.
type lockHarness struct {
	env    *testsuite.TestWorkflowEnvironment
	mu     sync.Mutex
	grants []string
	gone   map[string]bool // requesters that ended before their grant
}

func newLockHarness() *lockHarness {
	var suite testsuite.WorkflowTestSuite
	h := &lockHarness{env: suite.NewTestWorkflowEnvironment(), gone: map[string]bool{}}
	h.env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute}) // a busy host, not a deadlock
	h.env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", contractapi.SignalLockGranted, mock.Anything).
		Return(func(_, workflowID, _, _ string, _ any) error {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.grants = append(h.grants, workflowID)
			if h.gone[workflowID] {
				return errGone
			}
			return nil
		})
	return h
}

type goneErr struct{}

func (goneErr) Error() string { return "workflow not found" }

var errGone = goneErr{}

func (h *lockHarness) at(d time.Duration, signal, who string) {
	h.env.RegisterDelayedCallback(func() { h.env.SignalWorkflow(signal, who) }, d)
}

// run runs the lock to its end, which must be a completion.
func (h *lockHarness) run(t *testing.T) {
	t.Helper()
	h.env.ExecuteWorkflow(workflows.RepoLockWorkflow, "owner/repo")
	if !h.env.IsWorkflowCompleted() || h.env.GetWorkflowError() != nil {
		t.Fatalf("completed %v err %v", h.env.IsWorkflowCompleted(), h.env.GetWorkflowError())
	}
}

func (h *lockHarness) grantsSeen() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.grants...)
}

func TestLockGrantsOneAtATimeInOrder(t *testing.T) {
	h := newLockHarness()
	h.at(0, contractapi.SignalLockRequest, "a")
	h.at(time.Second, contractapi.SignalLockRequest, "b")
	h.at(2*time.Second, contractapi.SignalLockRequest, "c")
	h.env.RegisterDelayedCallback(func() {
		if g := h.grantsSeen(); len(g) != 1 || g[0] != "a" {
			t.Errorf("while a holds the lock: grants %v", g)
		}
		h.env.SignalWorkflow(contractapi.SignalLockRelease, "a")
	}, time.Minute)
	h.at(2*time.Minute, contractapi.SignalLockRelease, "c") // c gives up before its turn
	h.at(3*time.Minute, contractapi.SignalLockRelease, "b")
	h.run(t)
	if g := h.grantsSeen(); len(g) != 2 || g[0] != "a" || g[1] != "b" {
		t.Fatalf("grants %v, want [a b]", g)
	}
}

func TestLockSkipsRequesterThatIsGone(t *testing.T) {
	h := newLockHarness()
	h.gone["a"] = true
	h.at(0, contractapi.SignalLockRequest, "a")
	h.at(time.Second, contractapi.SignalLockRequest, "b")
	h.at(time.Minute, contractapi.SignalLockRelease, "b")
	h.env.ExecuteWorkflow(workflows.RepoLockWorkflow, "owner/repo")
	if g := h.grantsSeen(); len(g) != 2 || g[1] != "b" || h.env.GetWorkflowError() != nil {
		t.Fatalf("grants %v err %v", g, h.env.GetWorkflowError())
	}
}

func TestLockLeaseExpires(t *testing.T) {
	h := newLockHarness()
	h.at(0, contractapi.SignalLockRequest, "a")
	h.at(time.Second, contractapi.SignalLockRequest, "b")
	h.at(8*24*time.Hour, contractapi.SignalLockRelease, "b")
	h.env.ExecuteWorkflow(workflows.RepoLockWorkflow, "owner/repo")
	if g := h.grantsSeen(); len(g) != 2 || g[1] != "b" {
		t.Fatalf("grants %v: a holder that never releases must lose the lock at the lease", g)
	}
}

// acquire sends the lock's update for who after d; the answer lands in answers[who].
func (h *lockHarness) acquire(t *testing.T, d time.Duration, who string, answers map[string]any) {
	h.env.RegisterDelayedCallback(func() {
		h.env.UpdateWorkflow(contractapi.UpdateLockAcquire, who+"-ask", &testsuite.TestUpdateCallback{
			OnAccept: func() {},
			OnReject: func(err error) { t.Errorf("%s's ask rejected: %v", who, err) },
			OnComplete: func(v any, err error) {
				h.mu.Lock()
				defer h.mu.Unlock()
				answers[who] = v
				if err != nil {
					answers[who] = err
				}
			},
		}, who)
	}, d)
}

// state queries the lock after d into *st.
func (h *lockHarness) state(t *testing.T, d time.Duration, st *contractapi.LockState) {
	h.env.RegisterDelayedCallback(func() {
		v, err := h.env.QueryWorkflow(contractapi.QueryLockState)
		if err != nil {
			t.Errorf("query %s: %v", contractapi.QueryLockState, err)
			return
		}
		if err := v.Get(st); err != nil {
			t.Error(err)
		}
	}, d)
}

// A free lock is granted in the update's answer, with no signal; a busy one queues the asker,
// who is granted by signal when the holder releases.
func TestLockGrantsAFreeLockInTheAnswer(t *testing.T) {
	h := newLockHarness()
	answers := map[string]any{}
	var during contractapi.LockState
	h.acquire(t, 0, "a", answers)
	h.acquire(t, time.Second, "b", answers)
	h.state(t, 2*time.Second, &during)
	h.at(time.Minute, contractapi.SignalLockRelease, "a")
	h.at(2*time.Minute, contractapi.SignalLockRelease, "b")
	h.run(t)
	if answers["a"] != true || answers["b"] != false {
		t.Fatalf("answers %v, want a granted and b queued", answers)
	}
	if during.Holder != "a" || len(during.Queue) != 1 || during.Queue[0] != "b" {
		t.Fatalf("state while a held the lock: %+v", during)
	}
	if g := h.grantsSeen(); len(g) != 1 || g[0] != "b" {
		t.Fatalf("grants by signal %v, want only b's", g)
	}
}

// A holder asking again (its ask retried, by update or by signal) keeps the lock and is not
// queued behind itself: it would be granted again after its release and hold the repository
// until the lease.
func TestLockHolderAskingAgainIsNotQueued(t *testing.T) {
	h := newLockHarness()
	answers := map[string]any{}
	var after contractapi.LockState
	h.acquire(t, 0, "a", answers)
	h.at(time.Second, contractapi.SignalLockRequest, "a")
	h.acquire(t, 2*time.Second, "b", answers)
	h.state(t, 3*time.Second, &after)
	h.at(time.Minute, contractapi.SignalLockRelease, "a")
	h.at(2*time.Minute, contractapi.SignalLockRelease, "b")
	h.run(t)
	if after.Holder != "a" || len(after.Queue) != 1 || after.Queue[0] != "b" {
		t.Fatalf("state after a asked again: %+v, want a holding and only b waiting", after)
	}
	if g := h.grantsSeen(); len(g) != 1 || g[0] != "b" {
		t.Fatalf("grants by signal %v, want only b's", g)
	}
}
