package conversation

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"go.temporal.io/sdk/activity"

	"github.com/signoff/signoff/chatbridge"
	"github.com/signoff/signoff/chatbridge/chatproto"
	"github.com/signoff/signoff/chatbridge/identity"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/policy"
	"github.com/signoff/signoff/web/proofpage"
)

// ErrNotAttached is returned by pushes made before Attach.
var ErrNotAttached = errors.New("conversation: no outbox attached")

// Notify implements capability.Notifier: the workflow's progress notice goes to the requester
// in the chat session the contract was started from (its channel). Notices of contracts not
// started in chat are ignored. A retried notify activity sends the same message id, and a
// notice already delivered by this process is not sent twice.
func (c *Conversation) Notify(ctx context.Context, n capability.Notice) error {
	session, ok := sessionOf(n.Channel)
	if !ok || !identity.IsAgentAddress(n.Requester) {
		return nil
	}
	// The requester may have moved on to another session (approved from a new chat).
	if b, found, err := c.store.get(n.ContractID); err == nil && found && b.Requester == n.Requester {
		session = b.Session
	}
	key := "notice/" + n.ContractID + "/" + n.Kind + "/" + n.Text
	if activity.IsActivity(ctx) {
		// The activity id is stable across retries of the same notify call, and distinct for
		// every other call, even with the same text (a prepared run run twice).
		info := activity.GetInfo(ctx)
		key = "notice/" + info.WorkflowExecution.RunID + "/" + info.ActivityID
	}
	if !c.sent.add(key) {
		return nil
	}
	err := c.push(ctx, n.Requester, session, key, c.noticeText(n))
	if err != nil {
		c.sent.remove(key)
	}
	return err
}

func (c *Conversation) push(ctx context.Context, to, session, key, text string) error {
	out := c.outbox()
	if out == nil {
		return ErrNotAttached
	}
	msg := chatproto.ChatMessage{MsgID: chatbridge.MessageID(key), Timestamp: c.cfg.Now().UTC(),
		Content: []chatproto.Content{chatproto.TextContent{Text: text}}}
	if err := out.SendMessage(ctx, to, session, msg); err != nil {
		return fmt.Errorf("push to %s: %w", to, err)
	}
	return nil
}

// noticeText turns a workflow notice into the chat message: the verdict from the signed
// bundle (criterion, observed values, proof link), the rest with what to do next.
func (c *Conversation) noticeText(n capability.Notice) string {
	switch n.Kind {
	case contracts.NoticePayment:
		if c.cfg.Checkout != nil {
			return n.Text + "\nLocal mode (" + c.cfg.PaymentLabel + "): reply \"pay\" to complete the test checkout from here, or open the link on the Signoff machine."
		}
		return n.Text
	case contracts.NoticeVerdict:
		return c.verdictText(n)
	case contracts.NoticeCaptured, contracts.NoticeCancelled:
		s := n.Text
		if e, ok := c.indexEntry(n.ContractID); ok {
			if e.PR != "" {
				s += "\nDeliverable: " + e.PR
			}
			if u := c.proofURL(n.ContractID); u != "" && e.ProofDir != "" {
				s += "\nProof: " + u
			}
		}
		return s
	case contracts.NoticePaused:
		return n.Text + "\nReply \"retry\" to verify the same commit again, or \"abandon\" to cancel the authorization."
	}
	return n.Text
}

func (c *Conversation) indexEntry(id string) (capability.IndexEntry, bool) {
	if c.cfg.Index == nil {
		return capability.IndexEntry{}, false
	}
	e, ok, err := c.cfg.Index.Get(id)
	return e, ok && err == nil
}

// verdictText reads the attempt's signed bundle (the index points at it; the workflow
// indexes before it notifies) for the summary, every failed criterion with its observed
// values, and what happens next. Without a readable bundle it falls back to the notice.
func (c *Conversation) verdictText(n capability.Notice) string {
	e, ok := c.indexEntry(n.ContractID)
	if !ok || e.ProofDir == "" {
		return plainVerdictNotice(n.Text)
	}
	a := proofpage.LoadAttempt(e.ProofDir)
	if a == nil || a.Bundle == nil || a.Bundle.ContractID != n.ContractID {
		return plainVerdictNotice(n.Text)
	}
	summary, err := proofpage.ChatSummary(a, c.proofURL(n.ContractID))
	if err != nil {
		return plainVerdictNotice(n.Text)
	}
	// The proof summary labels every local payment generically; say which local checkout
	// this deployment actually runs.
	if a.Bundle.Payment.Local && c.cfg.PaymentLabel != proofpage.LocalPaymentLabel {
		summary = strings.ReplaceAll(summary, "("+proofpage.LocalPaymentLabel+")", "("+c.cfg.PaymentLabel+")")
	}
	b := a.Bundle
	summary = chatSummaryWords(summary, b)
	var lines []string
	lines = append(lines, summary)
	// The summary names the first reason; the others follow, a few at most.
	for i, r := range b.Reasons[min(1, len(b.Reasons)):] {
		if i == 4 {
			lines = append(lines, fmt.Sprintf("(+%d more on the proof page)", len(b.Reasons)-5))
			break
		}
		lines = append(lines, "Also: "+reasonWords(r))
	}
	max := 0
	if a.Contract != nil {
		max = a.Contract.MaxAttempts
	}
	switch b.Verdict {
	case contracts.Satisfied:
		lines = append(lines, "Every criterion passed on the delivered commit: capturing the authorized payment.")
	case contracts.NotSatisfied:
		switch {
		case max > 0 && b.Attempt < max:
			lines = append(lines, fmt.Sprintf("I cannot mark this complete. The failed criteria go back to the executor for attempt %d under the same contract (hash unchanged).", b.Attempt+1))
		default:
			lines = append(lines, "The contract has reached its attempt limit: merge and payment stay blocked, and the authorization will be cancelled.")
		}
	case contracts.VerificationError:
		lines = append(lines, "The verification itself could not complete; this is not counted against the code.")
	}
	return strings.Join(lines, "\n")
}

// internalReason reports a reason that carries an activity's error (a capability that could
// not run): its message is a Go error chain, for the proof page and the logs, not the chat.
func internalReason(r contracts.Reason) bool {
	return r.Rule == policy.RuleIntegrity && (r.Code == policy.CodeCapabilityFailed || r.Code == policy.CodeNotConfigured)
}

// reasonWords is a reason as the chat says it: its message, or for an internal failure which
// step could not run.
func reasonWords(r contracts.Reason) string {
	if !internalReason(r) {
		return r.Message
	}
	step, _, _ := strings.Cut(r.Message, ":")
	step = strings.TrimSpace(step)
	if step == "" || len(step) > 40 || strings.ContainsAny(step, " ()") {
		step = "verification"
	}
	if r.Code == policy.CodeNotConfigured {
		return fmt.Sprintf("the %s step is not configured on this Signoff (details on the proof page)", step)
	}
	return fmt.Sprintf("the %s step could not run on Signoff's side (details on the proof page)", step)
}

// chatSummaryWords fixes the proof summary for chat: no "(commit )" when no commit was
// delivered, and no error chain in place of the first reason.
func chatSummaryWords(summary string, b *contracts.Bundle) string {
	summary = strings.Replace(summary, " (commit ).", ".", 1)
	if len(b.Reasons) == 0 || !internalReason(b.Reasons[0]) {
		return summary
	}
	msg := b.Reasons[0].Message
	probe := msg[:min(len(msg), 40)]
	i := strings.Index(summary, probe)
	if i < 0 {
		return summary
	}
	end := strings.Index(summary[i:], "; Payment ")
	if end < 0 {
		return summary
	}
	return summary[:i] + reasonWords(b.Reasons[0]) + summary[i+end:]
}

// plainVerdictNotice is the workflow's own verdict notice (used when the proof is not at
// hand) without the error text a verification error carries.
func plainVerdictNotice(text string) string {
	const marker = ": verification error."
	if i := strings.Index(text, marker); i >= 0 {
		return text[:i+len(marker)] + " The verification could not complete on Signoff's side; this is not counted against the code. Say \"status\" for where it stands."
	}
	return text
}

// recent is a bounded set of keys already sent.
type recent struct {
	mu    sync.Mutex
	max   int
	set   map[string]bool
	order []string
}

func newRecent(max int) *recent { return &recent{max: max, set: map[string]bool{}} }

func (r *recent) add(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.set[key] {
		return false
	}
	r.set[key] = true
	r.order = append(r.order, key)
	for len(r.order) > r.max {
		delete(r.set, r.order[0])
		r.order = r.order[1:]
	}
	return true
}

func (r *recent) remove(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.set, key)
}
