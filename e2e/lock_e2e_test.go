package e2e_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/contracts/contractstest"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/temporal/temporaltest"
	"github.com/signoff/signoff/workflows/contractapi"
)

// queuedPublish is the instant clients with a publish that holds the repository's lock until
// every contract that has not published yet waits in the lock's queue, and counts the
// publishes running at once: with a lock that let two through, two would be.
type queuedPublish struct {
	*instant
	c     client.Client
	lock  string // the lock workflow's ID
	total int

	mu        sync.Mutex
	running   int
	most      int
	published []string // contract workflow IDs, in publish order
}

func (q *queuedPublish) Publish(ctx context.Context, p capability.PublishRequest) (contracts.PRRef, error) {
	me := contractapi.WorkflowID(p.ContractID)
	q.mu.Lock()
	q.running++
	q.most = max(q.most, q.running)
	waiting := q.total - len(q.published) - 1
	q.mu.Unlock()
	defer func() {
		q.mu.Lock()
		q.running--
		q.published = append(q.published, me)
		q.mu.Unlock()
	}()
	for {
		var st contractapi.LockState
		v, err := q.c.QueryWorkflow(ctx, q.lock, "", contractapi.QueryLockState)
		if err == nil {
			err = v.Get(&st)
		}
		if err != nil {
			return contracts.PRRef{}, fmt.Errorf("query the lock: %w", err)
		}
		if st.Holder != me {
			return contracts.PRRef{}, fmt.Errorf("%s publishes while the lock says %+v", me, st)
		}
		if len(st.Queue) == waiting {
			return contracts.PRRef{Branch: p.Branch}, nil
		}
		select {
		case <-ctx.Done(): // the activity's timeout: a hang, not a verdict
			return contracts.PRRef{}, fmt.Errorf("%d contracts never queued behind %s: %+v", waiting, me, st)
		case <-time.After(20 * time.Millisecond): // polling the server for a state, bounded by ctx
		}
	}
}

// instantServer starts the embedded server for a test of contracts with instant activities
// (skipped in the unit tier) and loads W1's contract for them to start from.
func instantServer(t *testing.T) (client.Client, *contracts.Contract) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts the embedded Temporal server")
	}
	srv := temporaltest.StartServer(t)
	c := temporaltest.Dial(t, srv)
	base, err := contracts.Load(contractstest.ReadW1(t), contracts.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c, base
}

// TestOneRepositoryLockOnTheServer runs three contracts on one repository at once on the
// embedded server, with the product's workflows and control activities: the first asks a free
// lock and is granted in the update's answer, the others wait in its queue and are granted by
// signal in turn, and no two publish at once.
func TestOneRepositoryLockOnTheServer(t *testing.T) {
	c, base := instantServer(t)
	const n = 3
	repo := "shared"
	inst := &instant{}
	q := &queuedPublish{instant: inst, c: c, lock: contractapi.LockWorkflowID(base.Repo.Owner + "/" + repo), total: n}
	inst.deliverer = q
	inst.start(t, c)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := runInstant(c, inst, *base, fmt.Sprintf("lock-%d", i), repo); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if q.most != 1 || len(q.published) != n {
		t.Fatalf("%d publishes, at most %d at once: want %d, one at a time", len(q.published), q.most, n)
	}
	waitLockReleased(t, c, base.Repo.Owner+"/"+repo)
	temporaltest.RecordHistory(t, c, q.lock, "l2-repo-lock-by-update")
	temporaltest.RecordHistory(t, c, q.published[0], "h4-lock-granted-in-answer")
	temporaltest.RecordHistory(t, c, q.published[n-1], "h5-lock-queued")
}

// signalOnlyLock is a repo lock as runs started before updates were: no update handler, a
// request by signal granted by signal, done at the release.
func signalOnlyLock(ctx workflow.Context, repo string) error {
	var who string
	workflow.GetSignalChannel(ctx, contractapi.SignalLockRequest).Receive(ctx, &who)
	me := workflow.GetInfo(ctx).WorkflowExecution.ID
	if err := workflow.SignalExternalWorkflow(ctx, who, "", contractapi.SignalLockGranted, me).Get(ctx, nil); err != nil {
		return err
	}
	workflow.GetSignalChannel(ctx, contractapi.SignalLockRelease).Receive(ctx, &who)
	return nil
}

// TestLockFromBeforeUpdatesOnTheServer: a contract whose repository's lock run has no update
// handler (it started before the lock took updates) is refused the update by the server and
// asks by signal, is granted by signal, publishes and releases.
func TestLockFromBeforeUpdatesOnTheServer(t *testing.T) {
	c, base := instantServer(t)
	const oldQueue = "signoff-control-before-updates"
	w := worker.New(c, oldQueue, worker.Options{})
	w.RegisterWorkflowWithOptions(signalOnlyLock, workflow.RegisterOptions{Name: contractapi.RepoLockWorkflowName})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	repo := "before-updates"
	lock := contractapi.LockWorkflowID(base.Repo.Owner + "/" + repo)
	run, err := c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: lock, TaskQueue: oldQueue}, contractapi.RepoLockWorkflowName, repo)
	if err != nil {
		t.Fatal(err)
	}
	inst := &instant{}
	inst.start(t, c)
	if _, err := runInstant(c, inst, *base, "before-updates", repo); err != nil {
		t.Fatal(err)
	}
	if err := run.Get(context.Background(), nil); err != nil {
		t.Fatalf("the old lock run: %v", err)
	}
}
