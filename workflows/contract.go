package workflows

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/workflows/contractapi"
)

// ContractWorkflow carries one completion contract from quote to a settled payment:
//
//	quoted --approve(hash)--> authorize payment --authorized--> lock the repo -->
//	attempt 1..max: execute -> publish -> preview -> verify -> gate -> policy
//	satisfied: capture; otherwise cancel the authorization.
func ContractWorkflow(ctx workflow.Context, in contractapi.ContractInput) (contractapi.Status, error) {
	w, err := newContractRun(ctx, in)
	if err != nil {
		return contractapi.Status{}, err
	}
	return w.run()
}

// contractRun is the workflow's state: what the queries read and the story below changes.
type contractRun struct {
	root       workflow.Context
	work       workflow.Context // cancelled by the cancel signal
	cancelWork workflow.CancelFunc
	in         contractapi.ContractInput
	timeouts   contractapi.Timeouts
	contract   contracts.Contract
	chain      contracts.Chain
	st         contractapi.Status
	cancel     *contractapi.Cancel
	capturing  bool
	lockHeld   bool
	// lockPublishOnly: the lock is taken around each publish, not the whole run
	// (versionLockPublishOnly).
	lockPublishOnly bool
	// lockAsks counts requests of the lock by update, for their update IDs.
	lockAsks int
	// approvedCh wakes awaitApproval when the approve update took an approval.
	approvedCh workflow.Channel
}

func newContractRun(ctx workflow.Context, in contractapi.ContractInput) (*contractRun, error) {
	c := in.Quote.Contract
	hash, err := contracts.Hash(c)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError("contract does not hash", "BadContract", err)
	}
	if hash != in.Quote.Hash {
		return nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("quote hash %s is not the contract's hash %s", in.Quote.Hash, hash), "BadContract", nil)
	}
	w := &contractRun{root: ctx, in: in, timeouts: in.Timeouts.WithDefaults(), contract: c}
	w.work, w.cancelWork = workflow.WithCancel(ctx)
	w.approvedCh = workflow.NewBufferedChannel(ctx, 1)
	w.st = contractapi.Status{
		ContractID: c.ContractID, ContractHash: hash, Goal: c.Goal, Repo: c.Repo.Key(),
		Requester: in.Quote.Requester, State: contracts.StateQuoted, MaxAttempts: c.MaxAttempts,
		Attempts: []contractapi.AttemptRecord{}, Refusals: []string{},
	}
	w.st.QuoteExpiresAt = workflow.Now(ctx).Add(w.timeouts.Approval).UTC()
	if exp := in.QuoteExpiresAt; !exp.IsZero() && exp.Before(w.st.QuoteExpiresAt) {
		w.st.QuoteExpiresAt = exp.UTC()
	}
	if err := workflow.SetQueryHandler(ctx, contractapi.QueryStatus, func() (contractapi.Status, error) {
		s := w.st
		s.Timeline = w.chain.Events
		return s, nil
	}); err != nil {
		return nil, err
	}
	if err := workflow.SetQueryHandler(ctx, contractapi.QueryProof, func() (contractapi.Proof, error) {
		return contractapi.Proof{ContractHash: hash, Verdict: w.st.Verdict, TimelineHead: w.chain.Head(), Attempts: w.st.Attempts}, nil
	}); err != nil {
		return nil, err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, contractapi.UpdateApprove, w.approveUpdate,
		workflow.UpdateHandlerOptions{Validator: w.validateApprove}); err != nil {
		return nil, err
	}
	// Cancel may arrive at any moment: it cancels the work context, which ends the wait or
	// activity in progress; run() then settles on the root context.
	workflow.Go(ctx, func(gctx workflow.Context) {
		var sig contractapi.Cancel
		workflow.GetSignalChannel(gctx, contractapi.SignalCancel).Receive(gctx, &sig)
		if w.capturing || w.st.Final {
			w.event(contracts.EventCancelRefused, map[string]string{contracts.DataBy: sig.By, contracts.DataWhy: "payment already settling"})
			return
		}
		w.cancel = &sig
		w.event(contracts.EventCancelRequested, map[string]string{contracts.DataBy: sig.By, contracts.DataReason: sig.Reason})
		w.cancelWork()
	})
	quoted := map[string]string{contracts.DataHash: hash, contracts.DataRequester: in.Quote.Requester, contracts.DataGoal: c.Goal}
	if !in.QuoteExpiresAt.IsZero() {
		quoted[contracts.DataQuoteExpiresAt] = in.QuoteExpiresAt.UTC().Format(time.RFC3339)
	}
	w.event(contracts.EventQuoted, quoted)
	if d := in.BaseCheck; d != nil {
		ev := map[string]string{contracts.DataBase: d.BaseSHA, contracts.DataFailingOnBase: strings.Join(d.Failing, ","),
			contracts.DataRegressionGuards: strings.Join(d.Guards, ",")}
		if d.Where != "" {
			ev[contracts.DataCheckedOn] = d.Where
		}
		if len(d.Variants) > 0 {
			ev[contracts.DataLazyVariants] = contracts.VariantSummary(d.Variants)
		}
		w.event(contracts.EventBaseCheck, ev)
	}
	return w, nil
}

func (w *contractRun) run() (contractapi.Status, error) {
	w.index()
	if !w.awaitApproval() {
		// Cancelled or expired before approval: the index says so, as the status does
		// (histories recorded before this version left the index at quoted).
		if workflow.GetVersion(w.root, versionIndexUnapprovedEnd, workflow.DefaultVersion, 1) >= 1 {
			w.index()
		}
		return w.end(), nil
	}
	if !w.authorize() {
		w.settle("")
		return w.end(), nil
	}
	switch {
	case workflow.GetVersion(w.root, versionLockPublishOnly, workflow.DefaultVersion, 1) >= 1:
		w.lockPublishOnly = true
		w.settle(w.attempts())
	case w.acquireLock():
		verdict := w.attempts()
		w.settle(verdict)
	default:
		w.settle("")
	}
	w.releaseLock()
	w.watchPR()
	return w.end(), nil
}

func (w *contractRun) end() contractapi.Status {
	w.st.Final = true
	s := w.st
	s.Timeline = w.chain.Events
	return s
}

// to changes state and records the transition in the hash chain.
func (w *contractRun) to(state, event string, data map[string]string) {
	w.st.State = state
	w.event(event, data)
}

func (w *contractRun) phase(p string) { w.st.Phase = p }

func (w *contractRun) event(typ string, data map[string]string) {
	at := workflow.Now(w.root).UTC().Format(time.RFC3339Nano)
	if _, err := w.chain.Append(typ, at, data); err != nil {
		workflow.GetLogger(w.root).Error("timeline append failed", "event", typ, "error", err)
	}
}

func (w *contractRun) index() {
	ctx, _ := workflow.NewDisconnectedContext(w.root)
	proof := ""
	if n := len(w.st.Attempts); n > 0 {
		proof = w.st.Attempts[n-1].ProofDir
	}
	e := capability.IndexEntry{ContractID: w.contract.ContractID, ContractHash: w.st.ContractHash,
		WorkflowID: workflow.GetInfo(w.root).WorkflowExecution.ID, Repo: w.st.Repo, Goal: w.contract.Goal,
		Requester: w.in.Quote.Requester, State: w.st.State, Verdict: w.st.Verdict, Attempts: w.st.Attempt, ProofDir: proof, PR: w.st.PR.URL,
		UpdatedAt: workflow.Now(w.root).UTC().Format(time.RFC3339)}
	if err := w.controlQuick(ctx, versionLocalBookkeeping, control.UpdateIndex, e).Get(ctx, nil); err != nil {
		w.event(contracts.EventIndexError, map[string]string{contracts.DataError: errText(err)})
	}
}

func (w *contractRun) notify(kind, text string) {
	ctx, _ := workflow.NewDisconnectedContext(w.root)
	n := capability.Notice{ContractID: w.contract.ContractID, Requester: w.in.Quote.Requester, Channel: w.in.Channel, Kind: kind, Text: text}
	_ = w.controlQuick(ctx, versionLocalBookkeeping, control.Notify, n).Get(ctx, nil)
}

// controlQuick runs a control activity that answers in milliseconds (the index update, the
// progress notice, the payment's status, the pull request's head, the signed bundle and
// settlement): a local activity in the control worker's own workflow task once change is
// recorded, an activity on the control queue in workflows started before it. The workflow
// runs on the control queue, where activities.Control is registered.
func (w *contractRun) controlQuick(ctx workflow.Context, change string, activity any, args ...any) workflow.Future {
	if workflow.GetVersion(w.root, change, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return workflow.ExecuteActivity(controlCtx(ctx, w.timeouts), activity, args...)
	}
	return workflow.ExecuteLocalActivity(controlLocalCtx(ctx, w.timeouts), activity, args...)
}

func errText(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Error()
	}
	return err.Error()
}
