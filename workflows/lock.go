package workflows

import (
	"errors"
	"time"

	"github.com/signoff/signoff/workflows/contractapi"
	"go.temporal.io/sdk/workflow"
)

// lockLease bounds how long a holder keeps the lock without releasing it.
const lockLease = 7 * 24 * time.Hour

// RepoLockWorkflow grants one repository to one contract workflow at a time (the mutex
// workflow pattern). Requests arrive by update-with-start (answered at once: granted, or
// queued) or by signal-with-start; a queued requester is granted by signal; the holder
// releases by signal; a lease bounds a holder that ends without releasing. It completes when
// no one waits. Runs started before versionLockGrantByUpdate took requests only by signal.
func RepoLockWorkflow(ctx workflow.Context, repo string) error {
	if workflow.GetVersion(ctx, versionLockGrantByUpdate, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return repoLockBySignal(ctx, repo)
	}
	l := &repoLock{queue: []string{}}
	if err := workflow.SetQueryHandler(ctx, contractapi.QueryLockState, func() (contractapi.LockState, error) {
		return contractapi.LockState{Holder: l.holder, Queue: append([]string{}, l.queue...)}, nil
	}); err != nil {
		return err
	}
	// The handler never blocks, and the SDK runs it before the workflow's own code in the
	// same task: the loop below sees what it changed before deciding to complete.
	if err := workflow.SetUpdateHandlerWithOptions(ctx, contractapi.UpdateLockAcquire, l.acquire,
		workflow.UpdateHandlerOptions{Validator: func(who string) error {
			if who == "" {
				return errors.New("lock_acquire needs the requesting workflow's ID")
			}
			return nil
		}}); err != nil {
		return err
	}
	return l.run(ctx, repo)
}

// repoLock is a lock workflow's state since versionLockGrantByUpdate.
type repoLock struct {
	holder string   // "" when free
	queue  []string // waiting, in order; never the holder
}

// request queues who, unless it holds the lock already (a retried request).
func (l *repoLock) request(who string) {
	if who != l.holder {
		l.queue = appendUnique(l.queue, who)
	}
}

// acquire is the UpdateLockAcquire handler: who holds the lock when it returns true.
func (l *repoLock) acquire(_ workflow.Context, who string) (bool, error) {
	l.request(who)
	if l.holder == "" && l.queue[0] == who {
		l.holder, l.queue = who, l.queue[1:]
	}
	return l.holder == who, nil
}

func (l *repoLock) run(ctx workflow.Context, repo string) error {
	logger := workflow.GetLogger(ctx)
	requests := workflow.GetSignalChannel(ctx, contractapi.SignalLockRequest)
	releases := workflow.GetSignalChannel(ctx, contractapi.SignalLockRelease)
	drain := func() {
		var r string
		for requests.ReceiveAsync(&r) {
			l.request(r)
		}
	}
	me := workflow.GetInfo(ctx).WorkflowExecution.ID
	for {
		drain()
		if l.holder == "" {
			if len(l.queue) == 0 {
				// Wait for one more request before completing, so a request racing our
				// completion is never lost.
				if err := workflow.Await(ctx, func() bool { return requests.Len() > 0 || len(l.queue) > 0 || l.holder != "" }); err != nil {
					return err
				}
				continue
			}
			l.holder, l.queue = l.queue[0], l.queue[1:]
			if err := workflow.SignalExternalWorkflow(ctx, l.holder, "", contractapi.SignalLockGranted, me).Get(ctx, nil); err != nil {
				logger.Warn("lock holder gone before grant", "repo", repo, "holder", l.holder, "error", err)
				l.holder = ""
				continue
			}
		}
		lctx, expired := workflow.WithCancel(ctx)
		lease := workflow.NewTimer(lctx, lockLease)
		for released := false; !released; {
			sel := workflow.NewSelector(ctx)
			sel.AddReceive(releases, func(c workflow.ReceiveChannel, _ bool) {
				var who string
				c.Receive(ctx, &who)
				if who == l.holder {
					released = true
					return
				}
				l.queue = remove(l.queue, who) // released before it was granted
			})
			sel.AddReceive(requests, func(c workflow.ReceiveChannel, _ bool) {
				var r string
				c.Receive(ctx, &r)
				l.request(r)
			})
			sel.AddFuture(lease, func(workflow.Future) {
				logger.Warn("lock lease expired", "repo", repo, "holder", l.holder)
				released = true
			})
			sel.Select(ctx)
		}
		expired() // a spent lease timer does not stay pending
		l.holder = ""
		drain()
		if len(l.queue) == 0 {
			return nil
		}
	}
}

// repoLockBySignal is RepoLockWorkflow before versionLockGrantByUpdate, kept for the runs it
// started: requests only by signal, every grant by signal.
func repoLockBySignal(ctx workflow.Context, repo string) error {
	logger := workflow.GetLogger(ctx)
	requests := workflow.GetSignalChannel(ctx, contractapi.SignalLockRequest)
	releases := workflow.GetSignalChannel(ctx, contractapi.SignalLockRelease)
	var queue []string
	drain := func() {
		for {
			var r string
			if !requests.ReceiveAsync(&r) {
				return
			}
			queue = appendUnique(queue, r)
		}
	}
	me := workflow.GetInfo(ctx).WorkflowExecution.ID
	for {
		drain()
		if len(queue) == 0 {
			// Wait for one more request before completing, so a request racing our completion
			// is never lost: Temporal refuses to complete while signals are unhandled.
			var r string
			requests.Receive(ctx, &r)
			queue = appendUnique(queue, r)
			continue
		}
		holder := queue[0]
		queue = queue[1:]
		if err := workflow.SignalExternalWorkflow(ctx, holder, "", contractapi.SignalLockGranted, me).Get(ctx, nil); err != nil {
			logger.Warn("lock holder gone before grant", "repo", repo, "holder", holder, "error", err)
			continue
		}
		lease := workflow.NewTimer(ctx, lockLease)
		for released := false; !released; {
			sel := workflow.NewSelector(ctx)
			sel.AddReceive(releases, func(c workflow.ReceiveChannel, _ bool) {
				var who string
				c.Receive(ctx, &who)
				if who == holder {
					released = true
					return
				}
				queue = remove(queue, who) // released before it was granted
			})
			sel.AddReceive(requests, func(c workflow.ReceiveChannel, _ bool) {
				var r string
				c.Receive(ctx, &r)
				queue = appendUnique(queue, r)
			})
			sel.AddFuture(lease, func(workflow.Future) {
				logger.Warn("lock lease expired", "repo", repo, "holder", holder)
				released = true
			})
			sel.Select(ctx)
		}
		drain()
		if len(queue) == 0 {
			return nil
		}
	}
}

func appendUnique(q []string, id string) []string {
	for _, x := range q {
		if x == id {
			return q
		}
	}
	return append(q, id)
}

func remove(q []string, id string) []string {
	out := q[:0]
	for _, x := range q {
		if x != id {
			out = append(out, x)
		}
	}
	return out
}
