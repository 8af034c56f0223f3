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
	h.env.ExecuteWorkflow(workflows.RepoLockWorkflow, "owner/repo")
	if !h.env.IsWorkflowCompleted() || h.env.GetWorkflowError() != nil {
		t.Fatalf("completed %v err %v", h.env.IsWorkflowCompleted(), h.env.GetWorkflowError())
	}
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
