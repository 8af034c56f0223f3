package workers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/workflows"
	"github.com/signoff/signoff/workflows/contractapi"
	"github.com/signoff/signoff/workflows/contractclient"
)

// Queue names accepted by `signoff worker --queue`.
var Queues = map[string]string{"control": contractapi.ControlQueue, "execute": contractapi.ExecuteQueue, "verify": contractapi.VerifyQueue}

// RegisterControl registers the workflows and the control activities. Workflow tasks run on
// the control queue. Every exported method of Control is an activity under its own name, so
// an activity added to the struct is registered everywhere this is called: the product and
// the tests alike.
func RegisterControl(r worker.Registry, c *activities.Control) {
	r.RegisterWorkflowWithOptions(workflows.ContractWorkflow, workflow.RegisterOptions{Name: contractapi.ContractWorkflowName})
	r.RegisterWorkflowWithOptions(workflows.RepoLockWorkflow, workflow.RegisterOptions{Name: contractapi.RepoLockWorkflowName})
	r.RegisterWorkflowWithOptions(workflows.BaseCheckWorkflow, workflow.RegisterOptions{Name: contractapi.BaseCheckWorkflowName})
	r.RegisterActivity(c)
}

// RegisterExecute registers the execute activities: every exported method of Execute.
func RegisterExecute(r worker.Registry, e *activities.Execute) {
	r.RegisterActivity(e)
}

// RegisterVerify registers the verify activities: every exported method of Verify.
func RegisterVerify(r worker.Registry, v *activities.Verify) {
	r.RegisterActivity(v)
}

// Set is the activity structs of the queues one process runs; nil means not this process.
type Set struct {
	Control *activities.Control
	Execute *activities.Execute
	Verify  *activities.Verify
	// Interceptors are installed on every worker of the set (tests: NewBarrier).
	Interceptors []interceptor.WorkerInterceptor
}

// Start runs a Temporal worker for each non-nil queue of the set and returns a stop function
// that stops them all.
func Start(c client.Client, s Set) (stop func(), err error) {
	var started []worker.Worker
	var queues []string
	stop = func() {
		for _, w := range started {
			w.Stop()
		}
	}
	identity := workerIdentity()
	add := func(queue string, register func(worker.Registry)) error {
		w := worker.New(c, queue, worker.Options{Identity: identity, Interceptors: withClassification(s.Interceptors)})
		register(w)
		if err := w.Start(); err != nil {
			return fmt.Errorf("start %s worker: %w", queue, err)
		}
		started = append(started, w)
		queues = append(queues, queue)
		return nil
	}
	if s.Control != nil {
		if err = add(contractapi.ControlQueue, func(r worker.Registry) { RegisterControl(r, s.Control) }); err != nil {
			stop()
			return nil, err
		}
	}
	if s.Execute != nil {
		if err = add(contractapi.ExecuteQueue, func(r worker.Registry) { RegisterExecute(r, s.Execute) }); err != nil {
			stop()
			return nil, err
		}
	}
	if s.Verify != nil {
		if err = add(contractapi.VerifyQueue, func(r worker.Registry) { RegisterVerify(r, s.Verify) }); err != nil {
			stop()
			return nil, err
		}
	}
	if len(started) == 0 {
		return nil, errors.New("no queue to run")
	}
	// Every worker is polling by now or soon; wait for the server to list each, not one
	// worker's first poll before the next worker starts.
	for _, q := range queues {
		polled(c, q, identity)
	}
	return stop, nil
}

// workerIdentity is the SDK's default worker identity ("pid@host@"), set explicitly so that
// polled knows which of a queue's pollers is this process's.
func workerIdentity() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%d@%s@", os.Getpid(), host)
}

// pollWait bounds polled: a first poll reaches a server in milliseconds.
const pollWait = time.Minute

// polled waits until the server lists identity among the queue's pollers. A worker's Start
// returns before its first poll has arrived, and a caller that then asks the server whether
// anyone polls (basecheck.Ready; a host that has printed that it runs a queue) must get yes:
// a CLI on another host was told "no worker polls the signoff-control queue" by a cluster
// whose control worker had just said it was up. It only waits: a server that cannot say (an
// error from DescribeTaskQueue) or that has not listed the worker within pollWait leaves the
// worker running as it is.
func polled(c client.Client, queue, identity string) {
	ctx, cancel := context.WithTimeout(context.Background(), pollWait)
	defer cancel()
	for {
		resp, err := c.DescribeTaskQueue(ctx, queue, contractclient.PollerType(queue))
		if err != nil {
			return
		}
		for _, p := range resp.GetPollers() {
			if p.GetIdentity() == identity {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond): // asking the server again
		}
	}
}

// Run starts the set and blocks until ctx ends.
func Run(ctx context.Context, c client.Client, s Set) error {
	stop, err := Start(c, s)
	if err != nil {
		return err
	}
	<-ctx.Done()
	stop()
	return nil
}

// ChatActivities are the quote workflow's activities; the chat's conversation implements them.
// They keep the names the recorded quote histories carry (Say runs as ChatSay), so they are
// registered by name, not by struct: the conversation has other exported methods.
type ChatActivities interface {
	DraftQuote(ctx context.Context, req contractapi.QuoteRequest) (contractapi.QuoteReply, error)
	Say(ctx context.Context, s contractapi.ChatSay) error
}

// RegisterChat registers the quote workflow and its activities, on the chat queue.
func RegisterChat(r worker.Registry, a ChatActivities) {
	r.RegisterWorkflowWithOptions(workflows.QuoteWorkflow, workflow.RegisterOptions{Name: contractapi.QuoteWorkflowName})
	r.RegisterActivityWithOptions(a.DraftQuote, activity.RegisterOptions{Name: contractapi.DraftQuoteActivity})
	r.RegisterActivityWithOptions(a.Say, activity.RegisterOptions{Name: contractapi.ChatSayActivity})
}
