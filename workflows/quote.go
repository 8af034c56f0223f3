package workflows

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// ChatQueue carries the chat's own durable work: the quote workflows and their activities,
// run by the process that hosts the chat bridge (it holds the agent key that signs replies).
const ChatQueue = "signoff-chat"

// QuoteWorkflowName turns one chat task message into a quote: survey, draft, base check and
// the contract workflow's start happen in its DraftQuote activity, then the answer is pushed
// to the requester with ChatSay. The message handler only starts it, so the reply to the chat
// message is immediate and the quote survives a restart of the process doing it.
const QuoteWorkflowName = "QuoteWorkflow"

// Activities of the quote workflow, on ChatQueue.
const (
	DraftQuoteActivity = "DraftQuote"
	ChatSayActivity    = "ChatSay"
)

// Outcomes of a quote workflow.
const (
	QuoteOffered = "quoted"  // a contract workflow is waiting for approval
	QuoteRefused = "refused" // the request did not become a contract; the messages say why
	QuoteFailed  = "failed"  // drafting kept failing; the requester is told to try again
)

// QuoteFailedText is what the requester reads when drafting failed for reasons of ours: no
// internal error text reaches the chat.
const QuoteFailedText = "I could not prepare a quote for that request: surveying the repository or checking its base commit kept failing on this Signoff. Nothing was started and nothing is owed. Please send the request again in a few minutes."

// QuoteRequest is a task message as the chat bridge received it (the sender is verified).
type QuoteRequest struct {
	Requester string `json:"requester"`
	Session   string `json:"session"`
	MsgID     string `json:"msg_id"`
	Text      string `json:"text"`
}

// QuoteReply is what drafting produced: the contract quoted (when one was) and the messages
// to send, in order.
type QuoteReply struct {
	Outcome    string   `json:"outcome"`
	ContractID string   `json:"contract_id,omitempty"`
	Hash       string   `json:"contract_hash,omitempty"`
	Messages   []string `json:"messages"`
	// Delivered is false when the messages could not be pushed to the requester.
	Delivered bool `json:"delivered"`
}

// ChatSay pushes texts to a requester in a session. Key makes the message ids stable, so a
// retried push is shown once by a peer that dedupes by msg_id.
type ChatSay struct {
	To      string   `json:"to"`
	Session string   `json:"session"`
	Key     string   `json:"key"`
	Texts   []string `json:"texts"`
}

// QuoteWorkflowID names the quote of one chat message: a message handed over twice (a
// resend, a restart) starts one workflow.
func QuoteWorkflowID(sender, session, msgID string) string {
	sum := sha256.Sum256([]byte(sender + "|" + session + "|" + msgID))
	return "quote-" + hex.EncodeToString(sum[:12])
}

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
