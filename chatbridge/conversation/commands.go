package conversation

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/signoff/signoff/chatbridge"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/fixtures/runs"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/workflows/contractapi"
	"github.com/signoff/signoff/workflows/contractclient"
)

// quoteTerms are what a drafted quote adds to the workflow's input: how long it stands and
// what the base check found. Prepared runs have neither.
type quoteTerms struct {
	ExpiresAt time.Time
	BaseCheck *contracts.BaseCheck
}

// startContract starts the contract workflow in state quoted with the sender as requester,
// and binds the session to it. A workflow that already exists is bound again only when it is
// the same quote, still open, for the same requester.
func (c *Conversation) startContract(ctx context.Context, in chatbridge.Inbound, q contracts.Quote, run, repo string, terms quoteTerms) (rebound bool, err error) {
	if c.cfg.Trust == nil {
		return false, userErr("This Signoff instance cannot start contracts: no verifier trust is configured.")
	}
	trust, err := c.cfg.Trust()
	if err != nil {
		c.log.Warn("verifier trust unavailable", "err", err)
		return false, userErr("This Signoff instance has not published its verifier's key yet (is the verify worker running?). Try again in a moment.")
	}
	id := q.Contract.ContractID
	_, err = c.contracts.Start(ctx, contractapi.ContractInput{Quote: q, Channel: channel(in.Session), Trust: trust, Timeouts: c.cfg.Timeouts,
		QuoteExpiresAt: terms.ExpiresAt, BaseCheck: terms.BaseCheck})
	switch {
	case contractclient.AlreadyStarted(err):
		st, qerr := c.queryStatus(ctx, id)
		if qerr != nil {
			// Typically a workflow started just before a restart, whose first task has not
			// run yet: a quote being drafted retries; a chat command says so.
			return false, &statusUnreadableError{UserError: &chatbridge.UserError{Msg: fmt.Sprintf(
				"Contract %s already exists but its status cannot be read right now; try \"status %s\" shortly.", id, id)}, err: qerr}
		}
		switch {
		case st.Final && run != "":
			return false, userErr("Prepared run %s (contract %s) already ran with this data dir: %s. Say \"status %s\" for its outcome; start `signoff dev` with a fresh --data-dir to run it again.",
				run, id, stateWords(st), run)
		case st.Final:
			return false, userErr("This request gives contract %s, which already ran: %s. Say \"status %s\" for its outcome, or word the change differently for a new contract.",
				id, stateWords(st), id)
		case st.Requester != in.Sender:
			return false, userErr("Contract %s is in progress for another requester (%s). Say \"status %s\" to follow it.", id, stateWords(st), id)
		case st.ContractHash != q.Hash:
			return false, userErr("Contract %s is open with different terms (hash %s); cancel it first to quote these.", id, contracts.ShortSHA(st.ContractHash))
		}
		rebound = true
	case err != nil:
		return false, fmt.Errorf("start workflow %s: %w", contractapi.WorkflowID(id), err)
	}
	b := Binding{ContractID: id, Hash: q.Hash, Requester: in.Sender, Session: in.Session, Run: run, Repo: repo, Goal: q.Contract.Goal,
		Price: q.Contract.Price.String()}
	if err := c.store.bind(b); err != nil {
		return rebound, fmt.Errorf("remember the session's contract: %w", err)
	}
	c.watch(b)
	return rebound, nil
}

// statusUnreadableError is a contract that exists but whose status query failed. It reads as
// its UserError in chat; the quote activity retries it instead.
type statusUnreadableError struct {
	*chatbridge.UserError
	err error
}

func (e *statusUnreadableError) Unwrap() []error { return []error{e.UserError, e.err} }

// run binds the conversation to a prepared run's contract.
func (c *Conversation) run(ctx context.Context, in chatbridge.Inbound, name string) ([]string, error) {
	if c.cfg.RunsDir == "" {
		return nil, userErr("This Signoff instance has no prepared runs.")
	}
	r, err := runs.Load(c.cfg.RunsDir, name)
	if err != nil {
		return nil, userErr("There is no prepared run %q. Prepared runs: %s.", name, strings.Join(c.runNames(), ", "))
	}
	if c.cfg.PrepareRun != nil {
		if err := c.cfg.PrepareRun(ctx, r); err != nil {
			return nil, fmt.Errorf("prepare run %s: %w", r.Name, err)
		}
	}
	q, err := contracts.NewQuote(r.Contract, in.Sender)
	if err != nil {
		return nil, fmt.Errorf("quote run %s: %w", r.Name, err)
	}
	rebound, err := c.startContract(ctx, in, q, r.Name, r.Contract.Repo.Key(), quoteTerms{})
	if err != nil {
		return nil, err
	}
	head := fmt.Sprintf("Prepared run %s: %s", r.Name, r.Spec.Description)
	if rebound {
		head = fmt.Sprintf("Prepared run %s is already quoted to you; here it is again.", r.Name)
	}
	return []string{head + "\n\n" + c.quoteText(r.Contract, q.Hash, nil, "", "")}, nil
}

// approve sends the approval of a hash through the workflow's approve update and reports its
// answer: taken, or refused with its reason.
func (c *Conversation) approve(ctx context.Context, in chatbridge.Inbound, args []string) ([]string, error) {
	hash := strings.ToLower(args[len(args)-1])
	if !hashRe.MatchString(hash) {
		return nil, userErr("Send the full 64-character contract hash you were shown: approve <hash>.")
	}
	var b Binding
	found := false
	if len(args) == 2 {
		if !contractIDRe.MatchString(args[0]) {
			return nil, userErr("%q is not a contract id.", args[0])
		}
		b, found = Binding{ContractID: args[0]}, true
	} else {
		cur, ok, err := c.store.current(in.Sender, in.Session)
		if err != nil {
			return nil, err
		}
		if ok && cur.Hash == hash {
			b, found = cur, true
		} else if bs, err := c.store.byHash(hash); err != nil {
			return nil, err
		} else if len(bs) > 0 {
			b, found = bs[0], true
		} else if ok {
			b, found = cur, true // the workflow refuses the wrong hash, with its reason
		}
	}
	noQuote := userErr("No quoted contract here has that hash. Describe a change or say \"run W1\" to get a quote first.")
	if !found {
		return nil, noQuote
	}
	before, err := c.queryStatus(ctx, b.ContractID)
	if isNotFound(err) {
		return nil, noQuote
	}
	if err != nil {
		return nil, c.statusErr(b.ContractID, err)
	}
	if before.Requester != in.Sender {
		// Another requester's contract: the same answer as a hash nobody quoted, and nothing
		// reaches its workflow (which refuses strangers too, for callers other than chat).
		return nil, noQuote
	}
	if before.State != contracts.StateQuoted {
		return []string{fmt.Sprintf("Contract %s is no longer open for approval: %s.", b.ContractID, stateWords(before))}, nil
	}
	if !c.approvals.take(in.Sender, b.ContractID, c.cfg.ApprovalsPerContract) {
		return nil, userErr("You have sent %d approvals for %s already; no more are taken from you for it.", c.cfg.ApprovalsPerContract, b.ContractID)
	}
	actx, cancel := context.WithTimeout(ctx, c.cfg.ReplyWait)
	defer cancel()
	_, err = c.contracts.Approve(actx, b.ContractID,
		contractapi.Approve{Hash: hash, Approver: in.Sender, Channel: channel(in.Session), MessageID: in.MsgID})
	var refused *contractapi.ApprovalRefusal
	switch {
	case errors.Is(err, contractclient.ErrNotAnswered) && ctx.Err() == nil:
		return []string{fmt.Sprintf("Approval of %s sent; the workflow has not taken it yet. Say \"status %s\" in a moment.", b.ContractID, b.ContractID)}, nil
	case errors.As(err, &refused) && (refused.Code == contractapi.RefusedWrongHash || refused.Code == contractapi.RefusedNotRequester):
		return []string{"Approval refused by the workflow: " + refused.Reason}, nil
	case errors.As(err, &refused):
		return []string{fmt.Sprintf("Contract %s is no longer open for approval: %s.", b.ContractID, refused.Reason)}, nil
	case err != nil:
		return nil, fmt.Errorf("approve %s: %w", b.ContractID, err)
	}
	if b.Requester == in.Sender && b.Session != in.Session {
		// Approved from another session: progress follows the approver's latest session.
		b.Session = in.Session
		if err := c.store.bind(b); err != nil {
			return nil, err
		}
	}
	next := "Next: authorize the fixed price; the payment link follows."
	if b.Price != "" {
		next = "Next: authorize " + b.Price + "; the payment link follows."
	}
	return []string{fmt.Sprintf("Approved %s (hash %s), recorded with your address and message %s. %s",
		b.ContractID, contracts.ShortSHA(hash), in.MsgID, next)}, nil
}

// pay completes the local checkout for the session's approved contract.
func (c *Conversation) pay(ctx context.Context, in chatbridge.Inbound) ([]string, error) {
	b, st, err := c.requesterContract(ctx, in, nil)
	if err != nil {
		return nil, err
	}
	if st.State == contracts.StateApproved && st.Payment.CheckoutSessionID == "" {
		// Just approved: the workflow is creating the checkout.
		if st, err = c.waitStatus(ctx, b.ContractID, func(st contractapi.Status) bool {
			return st.Payment.CheckoutSessionID != "" || st.State != contracts.StateApproved
		}); err != nil {
			return nil, err
		}
	}
	switch {
	case st.State == contracts.StateQuoted:
		return nil, userErr("Contract %s is not approved yet: approve <hash> first.", b.ContractID)
	case st.Payment.State == capability.PaymentAuthorized || st.State != contracts.StateApproved:
		return []string{fmt.Sprintf("Nothing to authorize for %s: %s.", b.ContractID, stateWords(st))}, nil
	case st.Payment.CheckoutSessionID == "":
		return []string{fmt.Sprintf("The checkout for %s is being created; say \"pay\" again in a moment.", b.ContractID)}, nil
	case !st.Payment.Local || c.cfg.Checkout == nil:
		return []string{fmt.Sprintf("Payments here go through %s: authorize at %s (captured only if the contract is satisfied).", st.Payment.Provider, st.Payment.CheckoutURL)}, nil
	}
	// This reply announces the authorization; the watcher need not (claimed before the
	// checkout, so the watcher cannot race the reply).
	if _, err := c.store.markSaid(b.ContractID, b.Hash, stepAuthorized); err != nil {
		c.log.Warn("record a progress step", "contract", b.ContractID, "err", err)
	}
	if err := c.cfg.Checkout(ctx, b.ContractID); err != nil {
		_ = c.store.unsay(b.ContractID, b.Hash, stepAuthorized)
		return nil, fmt.Errorf("local checkout for %s: %w", b.ContractID, err)
	}
	st, err = c.waitStatus(ctx, b.ContractID, func(st contractapi.Status) bool { return st.State != contracts.StateApproved })
	if err != nil {
		return nil, err
	}
	if st.State == contracts.StateApproved {
		return []string{fmt.Sprintf("Local checkout completed for %s (%s): the price is authorized, not captured; the workflow is confirming it.", b.ContractID, c.cfg.PaymentLabel)}, nil
	}
	return []string{fmt.Sprintf("Local checkout completed for %s. %s", b.ContractID, authorizedText(st, c.cfg.PaymentLabel))}, nil
}

// requesterContract finds the contract a command acts on (an id in args, else the session's)
// and checks the sender is its requester: only they may pay, cancel, retry or abandon.
func (c *Conversation) requesterContract(ctx context.Context, in chatbridge.Inbound, args []string) (Binding, contractapi.Status, error) {
	var b Binding
	if len(args) > 0 {
		id := c.resolveID(args[0])
		if id == "" {
			return b, contractapi.Status{}, userErr("%q is not a contract id or prepared run.", args[0])
		}
		b = Binding{ContractID: id}
	} else {
		cur, ok, err := c.store.current(in.Sender, in.Session)
		if err != nil {
			return b, contractapi.Status{}, err
		}
		if !ok {
			return b, contractapi.Status{}, userErr("No contract in this conversation yet. Describe a change, or say \"run W1\".")
		}
		b = cur
	}
	st, err := c.queryStatus(ctx, b.ContractID)
	if err != nil {
		return b, st, c.statusErr(b.ContractID, err)
	}
	if st.Requester != in.Sender {
		// Word for word what an id nobody started gets: a stranger learns nothing.
		return b, contractapi.Status{}, c.statusErr(b.ContractID, errNoSuchContract)
	}
	return b, st, nil
}

func (c *Conversation) cancelContract(ctx context.Context, in chatbridge.Inbound, args []string) ([]string, error) {
	b, st, err := c.requesterContract(ctx, in, args)
	if err != nil {
		return nil, err
	}
	if st.Final {
		return []string{fmt.Sprintf("Contract %s has already ended: %s.", b.ContractID, stateWords(st))}, nil
	}
	if err := c.contracts.Cancel(ctx, b.ContractID, contractapi.Cancel{By: in.Sender, Reason: "cancelled in chat"}); err != nil {
		return nil, fmt.Errorf("signal cancel of %s: %w", b.ContractID, err)
	}
	msg := fmt.Sprintf("Cancel requested for %s. Nothing is captured; ", b.ContractID)
	if st.Payment.CheckoutSessionID != "" {
		msg += "the authorization will be cancelled."
	} else {
		msg += "no payment was authorized."
	}
	return []string{msg}, nil
}

// operator answers a verification pause: retry the verification, or abandon the contract.
func (c *Conversation) operator(ctx context.Context, in chatbridge.Inbound, verb string, args []string) ([]string, error) {
	b, st, err := c.requesterContract(ctx, in, args)
	if err != nil {
		return nil, err
	}
	if st.State != contracts.StateAwaitingOperator {
		return []string{fmt.Sprintf("Contract %s is not paused for a decision: %s.", b.ContractID, stateWords(st))}, nil
	}
	signal, reply := contractapi.SignalRetryVerification, "Retrying the verification of the same commit (no code change)."
	if verb == verbAbandon {
		signal, reply = contractapi.SignalAbandon, "Abandoned: the authorization will be cancelled and nothing captured."
	}
	if err := c.contracts.Operator(ctx, b.ContractID, signal, contractapi.Operator{By: in.Sender, Reason: "from chat"}); err != nil {
		return nil, fmt.Errorf("signal %s to %s: %w", signal, b.ContractID, err)
	}
	return []string{fmt.Sprintf("%s: %s", b.ContractID, reply)}, nil
}

// resolveID maps a prepared run name to its contract id, and accepts contract ids as they are.
func (c *Conversation) resolveID(arg string) string {
	if runNameRe.MatchString(arg) && c.cfg.RunsDir != "" {
		if r, err := runs.Load(c.cfg.RunsDir, arg); err == nil {
			return r.Contract.ContractID
		}
	}
	if contractIDRe.MatchString(arg) {
		return arg
	}
	return ""
}

// status answers for any contract, prepared ones included: the status query, else the index.
func (c *Conversation) status(ctx context.Context, in chatbridge.Inbound, args []string) ([]string, error) {
	var id, run string
	if len(args) == 1 {
		id = c.resolveID(args[0])
		if id == "" {
			return nil, userErr("%q is not a contract id or prepared run.", args[0])
		}
		if id != args[0] {
			run = strings.ToUpper(args[0])
		}
	} else {
		cur, ok, err := c.store.current(in.Sender, in.Session)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, userErr("No contract in this conversation yet. Say \"status <contract id>\", describe a change, or say \"run W1\".")
		}
		id = cur.ContractID
	}
	// Another requester's contract is answered exactly as one that does not exist.
	st, err := c.queryStatus(ctx, id)
	if err == nil && st.Requester == in.Sender {
		return []string{statusText(st, c.proofURL(st.ContractID), c.cfg.PaymentLabel)}, nil
	}
	if err != nil && !isNotFound(err) {
		c.log.Warn("status query failed", "contract", id, "err", err)
	}
	if c.cfg.Index != nil {
		if e, ok, ierr := c.cfg.Index.Get(id); ierr == nil && ok && c.owns(in.Sender, e) {
			return []string{indexText(e, c.proofURL(id))}, nil
		}
	}
	if run != "" {
		return []string{fmt.Sprintf("Prepared run %s (contract %s) has not been started here. Say \"run %s\" to get its quote.", run, id, run)}, nil
	}
	if err == nil || isNotFound(err) {
		return nil, unknownContract(id)
	}
	return nil, userErr("The status of %s cannot be read right now; try again shortly.", id)
}

// unknownContract is the answer for an id nobody here knows, and for another requester's.
func unknownContract(id string) error { return userErr("No contract %q is known here.", id) }

// owns reports whether an index entry is sender's: by the requester it records, or, for
// entries written before it did, by this chat's own binding.
func (c *Conversation) owns(sender string, e capability.IndexEntry) bool {
	if e.Requester != "" {
		return e.Requester == sender
	}
	b, ok, err := c.store.get(e.ContractID)
	return err == nil && ok && b.Requester == sender
}

func (c *Conversation) list(in chatbridge.Inbound) string {
	var b strings.Builder
	b.WriteString("Prepared runs (say \"run <name>\"):")
	for _, name := range c.runNames() {
		if r, err := runs.Load(c.cfg.RunsDir, name); err == nil {
			fmt.Fprintf(&b, "\n- %s: %s", name, r.Spec.Description)
		}
	}
	if cur, ok, err := c.store.current(in.Sender, in.Session); err == nil && ok {
		fmt.Fprintf(&b, "\nThis conversation's contract: %s (say \"status\").", cur.ContractID)
	}
	return b.String()
}

func (c *Conversation) statusErr(id string, err error) error {
	if isNotFound(err) {
		return userErr("No contract %q is running here (its workflow is unknown or past retention); \"status %s\" may still find it in the index.", id, id)
	}
	c.log.Warn("status query failed", "contract", id, "err", err)
	return userErr("The status of %s cannot be read right now; try again shortly.", id)
}

func (c *Conversation) proofURL(id string) string {
	if c.cfg.ProofURL == nil {
		return ""
	}
	return c.cfg.ProofURL(id)
}

// waitStatus polls the status query until done says so or ReplyWait passes; it returns the
// last status read.
func (c *Conversation) waitStatus(ctx context.Context, id string, done func(contractapi.Status) bool) (contractapi.Status, error) {
	deadline := time.Now().Add(c.cfg.ReplyWait)
	var last contractapi.Status
	var lastErr error
	for {
		st, err := c.queryStatus(ctx, id)
		if err == nil {
			last, lastErr = st, nil
			if done(st) {
				return st, nil
			}
		} else {
			lastErr = err
		}
		if time.Now().After(deadline) {
			if last.ContractID == "" && lastErr != nil {
				return last, c.statusErr(id, lastErr)
			}
			return last, nil
		}
		select {
		case <-ctx.Done():
			return last, ctx.Err()
		case <-time.After(100 * time.Millisecond): // polling a query, with a deadline
		}
	}
}
