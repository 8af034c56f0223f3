package workflows

import (
	"time"

	"github.com/signoff/signoff/workflows/contractapi"
	"go.temporal.io/sdk/workflow"
)

// lockLease bounds how long a holder keeps the lock without releasing it.
const lockLease = 7 * 24 * time.Hour

// RepoLockWorkflow grants one repository to one contract workflow at a time (the mutex
// workflow pattern). Requests arrive by signal-with-start; the holder releases by signal; a
// lease bounds a holder that ends without releasing. It completes when no one waits.
func RepoLockWorkflow(ctx workflow.Context, repo string) error {
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
