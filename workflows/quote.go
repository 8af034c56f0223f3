package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Activities of the quote workflow, on ChatQueue.
const (
	DraftQuoteActivity = "DraftQuote"
	ChatSayActivity    = "ChatSay"
)

// QuoteWorkflow drafts the quote and says it. Drafting heartbeats, so a worker lost mid-way
// (the process killed) is noticed within the heartbeat timeout and the draft runs again on
// the restarted worker; its steps are idempotent (the contract workflow's id is the
// contract's, the base check is keyed by this workflow).
func QuoteWorkflow(ctx workflow.Context, in QuoteRequest) (QuoteReply, error) {
	dctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           ChatQueue,
		StartToCloseTimeout: 45 * time.Minute, // a queued quote waits its turn inside the activity
		HeartbeatTimeout:    20 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 2 * time.Second, BackoffCoefficient: 2,
			MaximumInterval: 30 * time.Second, MaximumAttempts: 4},
	})
	var out QuoteReply
	if err := workflow.ExecuteActivity(dctx, DraftQuoteActivity, in).Get(ctx, &out); err != nil {
		out = QuoteReply{Outcome: QuoteFailed, Messages: []string{QuoteFailedText}}
	}
	if len(out.Messages) == 0 {
		return out, nil
	}
	sctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           ChatQueue,
		StartToCloseTimeout: 45 * time.Second, // a push lost with its worker is retried soon
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
			MaximumInterval: time.Minute, MaximumAttempts: 10},
	})
	say := ChatSay{To: in.Requester, Session: in.Session, Key: workflow.GetInfo(ctx).WorkflowExecution.ID + "/reply", Texts: out.Messages}
	out.Delivered = workflow.ExecuteActivity(sctx, ChatSayActivity, say).Get(ctx, nil) == nil
	return out, nil
}
