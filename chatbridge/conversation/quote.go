package conversation

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"

	"github.com/signoff/signoff/authoring"
	"github.com/signoff/signoff/authoring/survey"
	"github.com/signoff/signoff/chatbridge"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/workflows/contractapi"
	"github.com/signoff/signoff/workflows/contractclient"
)

// KeyedChecker is a base checker that can name its check after a key, so a draft retried
// after a restart finds the check it started instead of running another
// (basecheck.Choice and basecheck.Queued implement it).
type KeyedChecker interface {
	WithKey(key string) authoring.BaseChecker
}

// Default admission bounds for quotes.
const (
	DefaultConcurrentQuotes     = 2
	DefaultQuotesPerRequester   = 2
	DefaultApprovalsPerContract = 5
)

// quoteLine is the global bound on quotes being drafted at once: a FIFO of keys, of which the
// first slots may run. A key joins when its task message is accepted (so the requester is
// told its place at once) or, after a restart, when its draft activity starts again.
type quoteLine struct {
	slots int

	mu      sync.Mutex
	keys    []string
	owner   map[string]string
	changed chan struct{}
}

func newQuoteLine(slots int) *quoteLine {
	return &quoteLine{slots: slots, owner: map[string]string{}, changed: make(chan struct{})}
}

// join adds key for requester (no-op when present) and returns its place: 0 when it may run
// now, else how many quotes wait ahead of it plus one.
func (l *quoteLine) join(key, requester string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.owner[key]; !ok {
		l.keys = append(l.keys, key)
		l.owner[key] = requester
	}
	return l.placeLocked(key)
}

func (l *quoteLine) placeLocked(key string) int {
	for i, k := range l.keys {
		if k == key {
			if i < l.slots {
				return 0
			}
			return i - l.slots + 1
		}
	}
	return -1
}

// has reports whether key is in line.
func (l *quoteLine) has(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.owner[key]
	return ok
}

// pending counts requester's quotes in line (waiting or running).
func (l *quoteLine) pending(requester string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.owner {
		if r == requester {
			n++
		}
	}
	return n
}

// wait blocks until key may run, calling tick while it waits (heartbeats).
func (l *quoteLine) wait(ctx context.Context, key string, tick func()) error {
	for {
		l.mu.Lock()
		place, changed := l.placeLocked(key), l.changed
		l.mu.Unlock()
		if place <= 0 {
			return nil
		}
		select {
		case <-changed:
		case <-time.After(5 * time.Second):
			tick()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// leave removes key and lets the next one run.
func (l *quoteLine) leave(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.owner[key]; !ok {
		return
	}
	delete(l.owner, key)
	for i, k := range l.keys {
		if k == key {
			l.keys = append(l.keys[:i], l.keys[i+1:]...)
			break
		}
	}
	close(l.changed)
	l.changed = make(chan struct{})
}

// approvalCounts bounds approve commands per (sender, contract) in this process.
type approvalCounts struct {
	mu sync.Mutex
	n  map[string]int
}

// take counts one approval by sender for contractID and reports whether it is within limit.
func (a *approvalCounts) take(sender, contractID string, limit int) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.n == nil {
		a.n = map[string]int{}
	}
	k := sender + "|" + contractID
	if a.n[k] >= limit {
		return false
	}
	a.n[k]++
	return true
}

// task starts the quote workflow for a task message and answers at once: what will be
// surveyed, and the requester's place in line when quotes are queued. The quote itself
// follows as a pushed message when the workflow has it.
func (c *Conversation) task(ctx context.Context, in chatbridge.Inbound, text string) ([]string, error) {
	if c.cfg.Author == nil || len(c.cfg.Repos) == 0 {
		return nil, userErr("This Signoff instance does not quote new tasks. Say \"run W1\" for a prepared run, or \"help\".")
	}
	repo, _, err := c.pickRepo(text)
	if err != nil {
		return nil, err
	}
	id := contractapi.QuoteWorkflowID(in.Sender, in.Session, in.MsgID)
	if !c.quotes.has(id) && c.quotes.pending(in.Sender) >= c.cfg.QuotesPerRequester {
		return nil, userErr("You already have %d quotes being prepared; the next one can start when one of them is ready.", c.cfg.QuotesPerRequester)
	}
	place := c.quotes.join(id, in.Sender)
	_, err = c.cfg.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: contractapi.ChatQueue,
		WorkflowIDReusePolicy:                    enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy:                 enums.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
	}, contractapi.QuoteWorkflowName, contractapi.QuoteRequest{Requester: in.Sender, Session: in.Session, MsgID: in.MsgID, Text: text})
	switch {
	case contractclient.AlreadyStarted(err):
		return []string{"That request is already being quoted; the quote follows here."}, nil
	case err != nil:
		c.quotes.leave(id)
		c.log.Error("start quote workflow", "workflow", id, "err", err)
		return nil, userErr("I could not start preparing a quote just now. Please send the request again in a moment.")
	}
	what := fmt.Sprintf("Surveying %s to quote that (a few seconds)", repo.Slug)
	if c.cfg.Author.Checker != nil {
		what = fmt.Sprintf("Surveying %s and running the criteria on its base commit before quoting (a build and a browser run, about a minute)", repo.Slug)
	}
	if place > 0 {
		what += fmt.Sprintf(". Your request is number %d in line: %d quotes are prepared at a time", place, c.cfg.ConcurrentQuotes)
	}
	return []string{what + "... The quote follows here."}, nil
}

// DraftQuote is the quote workflow's drafting activity: it waits for a place in line, then
// surveys, drafts, checks the base commit (when configured) and starts the contract workflow,
// and returns what to tell the requester. A request that does not become a contract is an
// answer, not an error; errors are ours and are retried by the workflow.
func (c *Conversation) DraftQuote(ctx context.Context, req contractapi.QuoteRequest) (contractapi.QuoteReply, error) {
	key := contractapi.QuoteWorkflowID(req.Requester, req.Session, req.MsgID)
	retry := false
	if activity.IsActivity(ctx) {
		info := activity.GetInfo(ctx)
		key, retry = info.WorkflowExecution.ID, info.Attempt > 1
	}
	beat := func() {
		if activity.IsActivity(ctx) {
			activity.RecordHeartbeat(ctx)
		}
	}
	rejoined := !c.quotes.has(key)
	place := c.quotes.join(key, req.Requester)
	defer c.quotes.leave(key)
	if place > 0 && rejoined {
		// Back in line (after a restart, or a failed attempt): the place said before no
		// longer holds.
		if err := c.push(ctx, req.Requester, req.Session, fmt.Sprintf("quote/%s/requeued/%d", key, place), fmt.Sprintf(
			"Still working on your request: it is now number %d in line for a quote.", place)); err != nil {
			c.log.Warn("queue position not sent", "err", err)
		}
	}
	if err := c.quotes.wait(ctx, key, beat); err != nil {
		return contractapi.QuoteReply{}, err
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() { // drafting blocks in git, the survey and the base check; heartbeat alongside
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				beat()
			}
		}
	}()
	in := chatbridge.Inbound{Sender: req.Requester, Session: req.Session, MsgID: req.MsgID, Text: req.Text}
	out, err := c.draft(ctx, in, req.Text, key, retry)
	var ue *chatbridge.UserError
	switch {
	case errors.As(err, &ue):
		return contractapi.QuoteReply{Outcome: contractapi.QuoteRefused, Messages: []string{ue.Msg}}, nil
	case err != nil:
		c.log.Warn("quote draft failed", "workflow", key, "err", err)
		return contractapi.QuoteReply{}, err
	}
	return out, nil
}

// Say is the quote workflow's push activity. A failed quote is told in quoteFailedText.
func (c *Conversation) Say(ctx context.Context, s contractapi.ChatSay) error {
	if s.Failed && len(s.Texts) == 0 {
		s.Texts = []string{quoteFailedText}
	}
	for i, text := range s.Texts {
		if err := c.push(ctx, s.To, s.Session, fmt.Sprintf("%s/%d", s.Key, i), text); err != nil {
			return err
		}
	}
	return nil
}

// draft is the quote proper: survey, criteria, price, hash, base check, and the contract
// workflow started in state quoted with the sender as requester.
func (c *Conversation) draft(ctx context.Context, in chatbridge.Inbound, text, key string, retry bool) (contractapi.QuoteReply, error) {
	repo, goal, err := c.pickRepo(text)
	if err != nil {
		return contractapi.QuoteReply{}, err
	}
	if repo.Prepare != nil {
		if err := repo.Prepare(ctx); err != nil {
			return contractapi.QuoteReply{}, fmt.Errorf("prepare %s: %w", repo.Slug, err)
		}
	}
	src, err := survey.ResolveSource(ctx, repo.Path, "HEAD", repo.Slug)
	if err != nil {
		return contractapi.QuoteReply{}, fmt.Errorf("resolve %s: %w", repo.Slug, err)
	}
	if repo.URL != "" {
		src.URL = repo.URL
	}
	author := *c.cfg.Author
	if kc, ok := author.Checker.(KeyedChecker); ok {
		author.Checker = kc.WithKey(key)
	}
	reruns := 0
	progress := func(msg string) { // each base-check rerun is told as it starts waiting
		reruns++
		if err := c.push(ctx, in.Sender, in.Session, fmt.Sprintf("quote/%s/base-rerun/%d", key, reruns), msg); err != nil {
			c.log.Warn("base check progress not sent", "err", err)
		}
	}
	res, err := author.Draft(ctx, authoring.Request{Requester: in.Sender, Source: src, Goal: goal, Progress: progress})
	if err != nil {
		if authoring.IsRefusal(err) {
			out := contractapi.QuoteReply{Outcome: contractapi.QuoteRefused}
			if res != nil && res.Survey != nil {
				out.Messages = append(out.Messages, "Survey of "+res.Survey.Summary())
			}
			out.Messages = append(out.Messages, refusalText(err))
			return out, nil
		}
		return contractapi.QuoteReply{}, fmt.Errorf("draft a contract for %s: %w", repo.Slug, err)
	}
	// One contract per requester: the same words from two people are two quotes. The same
	// words again from one requester find their contract (the terms' id, not the quote's).
	contract := *res.Contract
	contract.ContractID = requesterID(res.TermsID, in.Sender)
	if err := contracts.Validate(contract, contracts.LoadOptions{}); err != nil {
		return contractapi.QuoteReply{}, fmt.Errorf("drafted contract: %w", err)
	}
	q, err := contracts.NewQuote(contract, in.Sender)
	if err != nil {
		return contractapi.QuoteReply{}, err
	}
	terms := quoteTerms{BaseCheck: res.BaseCheck.Record()}
	if res.Estimate != nil {
		terms.ExpiresAt = res.Estimate.ExpiresAt
	}
	rebound, err := c.startContract(ctx, in, q, "", repo.Slug, terms)
	var unreadable *statusUnreadableError
	if errors.As(err, &unreadable) {
		return contractapi.QuoteReply{}, fmt.Errorf("contract %s started but not readable yet: %w", contract.ContractID, unreadable.err)
	}
	if err != nil {
		return contractapi.QuoteReply{}, err
	}
	quote := c.quoteText(contract, q.Hash, res.Estimate, baseCheckText(res.BaseCheck), c.cfg.ExecutorNote)
	if rebound && !retry {
		quote = "This contract is already quoted to you; here it is again.\n\n" + quote
	}
	return contractapi.QuoteReply{Outcome: contractapi.QuoteOffered, ContractID: contract.ContractID, Hash: q.Hash,
		Messages: []string{"Survey of " + res.Survey.Summary(), quote}}, nil
}
