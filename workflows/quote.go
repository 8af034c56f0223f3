package workflows

import (
	"time"

	"github.com/signoff/signoff/workflows/contractapi"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// QuoteWorkflow drafts the quote and says it. Drafting heartbeats, so a worker lost mid-way
// (the process killed) is noticed within the heartbeat timeout and the draft runs again on
// the restarted worker; its steps are idempotent (the contract workflow's id is the
// contract's, the base check is keyed by this workflow).
func QuoteWorkflow(ctx workflow.Context, in contractapi.QuoteRequest) (contractapi.QuoteReply, error) {
	dctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           contractapi.ChatQueue,
		StartToCloseTimeout: 45 * time.Minute, // a queued quote waits its turn inside the activity
		HeartbeatTimeout:    20 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 2 * time.Second, BackoffCoefficient: 2,
			MaximumInterval: 30 * time.Second, MaximumAttempts: 4},
	})
	var out contractapi.QuoteReply
	if err := workflow.ExecuteActivity(dctx, contractapi.DraftQuoteActivity, in).Get(ctx, &out); err != nil {
		out = contractapi.QuoteReply{Outcome: contractapi.QuoteFailed}
	}
	failed := out.Outcome == contractapi.QuoteFailed
	if len(out.Messages) == 0 && !failed {
		return out, nil
	}
	sctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           contractapi.ChatQueue,
		StartToCloseTimeout: 45 * time.Second, // a push lost with its worker is retried soon
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
			MaximumInterval: time.Minute, MaximumAttempts: 10},
	})
	say := contractapi.ChatSay{To: in.Requester, Session: in.Session, Key: workflow.GetInfo(ctx).WorkflowExecution.ID + "/reply", Texts: out.Messages, Failed: failed}
	out.Delivered = workflow.ExecuteActivity(sctx, contractapi.ChatSayActivity, say).Get(ctx, nil) == nil
	return out, nil
}
