package workflows

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/policy"
)

// ContractWorkflow carries one completion contract from quote to a settled payment:
//
//	quoted --approve(hash)--> authorize payment --authorized--> lock the repo -->
//	attempt 1..max: execute -> publish -> preview -> verify -> gate -> policy
//	satisfied: capture; otherwise cancel the authorization.
func ContractWorkflow(ctx workflow.Context, in ContractInput) (Status, error) {
	w, err := newContractRun(ctx, in)
	if err != nil {
		return Status{}, err
	}
	return w.run()
}

// contractRun is the workflow's state: what the queries read and the story below changes.
type contractRun struct {
	root       workflow.Context
	work       workflow.Context // cancelled by the cancel signal
	cancelWork workflow.CancelFunc
	in         ContractInput
	timeouts   Timeouts
	contract   contracts.Contract
	chain      contracts.Chain
	st         Status
	cancel     *Cancel
	capturing  bool
	lockHeld   bool
}

func newContractRun(ctx workflow.Context, in ContractInput) (*contractRun, error) {
	c := in.Quote.Contract
	hash, err := contracts.Hash(c)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError("contract does not hash", "BadContract", err)
	}
	if hash != in.Quote.Hash {
		return nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("quote hash %s is not the contract's hash %s", in.Quote.Hash, hash), "BadContract", nil)
	}
	w := &contractRun{root: ctx, in: in, timeouts: in.Timeouts.withDefaults(), contract: c}
	w.work, w.cancelWork = workflow.WithCancel(ctx)
	w.st = Status{
		ContractID: c.ContractID, ContractHash: hash, Goal: c.Goal, Repo: repoKey(c.Repo),
		Requester: in.Quote.Requester, State: StateQuoted, MaxAttempts: c.MaxAttempts,
		Attempts: []AttemptRecord{}, Refusals: []string{},
	}
	w.st.QuoteExpiresAt = workflow.Now(ctx).Add(w.timeouts.Approval).UTC()
	if exp := in.QuoteExpiresAt; !exp.IsZero() && exp.Before(w.st.QuoteExpiresAt) {
		w.st.QuoteExpiresAt = exp.UTC()
	}
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (Status, error) {
		s := w.st
		s.Timeline = w.chain.Events
		return s, nil
	}); err != nil {
		return nil, err
	}
	if err := workflow.SetQueryHandler(ctx, QueryProof, func() (Proof, error) {
		return Proof{ContractHash: hash, Verdict: w.st.Verdict, TimelineHead: w.chain.Head(), Attempts: w.st.Attempts}, nil
	}); err != nil {
		return nil, err
	}
	// Cancel may arrive at any moment: it cancels the work context, which ends the wait or
	// activity in progress; run() then settles on the root context.
	workflow.Go(ctx, func(gctx workflow.Context) {
		var sig Cancel
		workflow.GetSignalChannel(gctx, SignalCancel).Receive(gctx, &sig)
		if w.capturing || w.st.Final {
			w.event("cancel_refused", map[string]string{"by": sig.By, "why": "payment already settling"})
			return
		}
		w.cancel = &sig
		w.event("cancel_requested", map[string]string{"by": sig.By, "reason": sig.Reason})
		w.cancelWork()
	})
	quoted := map[string]string{"hash": hash, "requester": in.Quote.Requester, "goal": c.Goal}
	if !in.QuoteExpiresAt.IsZero() {
		quoted["quote_expires_at"] = in.QuoteExpiresAt.UTC().Format(time.RFC3339)
	}
	w.event("quoted", quoted)
	if d := in.Discrimination; d != nil {
		ev := map[string]string{"base": d.BaseSHA, "failing_on_base": strings.Join(d.Failing, ","),
			"regression_guards": strings.Join(d.Guards, ",")}
		if d.Where != "" {
			ev["checked_on"] = d.Where
		}
		w.event("discrimination", ev)
	}
	return w, nil
}

func (w *contractRun) run() (Status, error) {
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
	if w.acquireLock() {
		verdict := w.attempts()
		w.settle(verdict)
	} else {
		w.settle("")
	}
	w.releaseLock()
	w.watchPR()
	return w.end(), nil
}

// awaitApproval waits for an approval of exactly this hash by the requester. Anything else
// is refused, recorded, and the quote stays open until its deadline.
func (w *contractRun) awaitApproval() bool {
	approveCh := workflow.GetSignalChannel(w.root, SignalApprove)
	// The quote's own expiry wins when it is sooner than the approval timeout. Workflows
	// started without one (every history recorded before quotes expired) wait as before.
	wait, why := w.timeouts.Approval, map[string]string{"after": w.timeouts.Approval.String()}
	if exp := w.in.QuoteExpiresAt; !exp.IsZero() {
		if left := exp.Sub(workflow.Now(w.root)); left < wait {
			wait, why = left, map[string]string{"quote_expires_at": exp.UTC().Format(time.RFC3339)}
		}
	}
	if wait <= 0 {
		w.to(StateExpired, "quote_expired", why)
		return false
	}
	deadline := workflow.NewTimer(w.work, wait)
	for {
		var sig Approve
		got, expired := false, false
		sel := workflow.NewSelector(w.root)
		sel.AddReceive(approveCh, func(c workflow.ReceiveChannel, _ bool) { c.Receive(w.root, &sig); got = true })
		sel.AddFuture(deadline, func(f workflow.Future) { expired = f.Get(w.root, nil) == nil })
		sel.AddReceive(w.work.Done(), func(workflow.ReceiveChannel, bool) {})
		sel.Select(w.root)
		switch {
		case w.cancel != nil:
			w.to(StateCancelled, "cancelled", map[string]string{"by": w.cancel.By, "before": "approval"})
			return false
		case expired:
			w.to(StateExpired, "quote_expired", why)
			return false
		case got:
			if why := w.refuseApproval(sig); why != "" {
				if sig.Approver != w.in.Quote.Requester &&
					workflow.GetVersion(w.root, versionStrangerRefusals, workflow.DefaultVersion, 1) >= 1 {
					w.st.StrangerRefusals++
					if w.st.StrangerRefusals > 1 {
						continue // counted, not recorded again
					}
				}
				w.st.Refusals = append(w.st.Refusals, why)
				w.event("approval_refused", map[string]string{"hash": sig.Hash, "approver": sig.Approver,
					"channel": sig.Channel, "message_id": sig.MessageID, "why": why})
				continue
			}
			w.to(StateApproved, "approved", map[string]string{"hash": sig.Hash, "approver": sig.Approver,
				"channel": sig.Channel, "message_id": sig.MessageID})
			return true
		}
	}
}

// versionIndexUnapprovedEnd: a contract that ends before approval updates the index.
const versionIndexUnapprovedEnd = "index-unapproved-end"

// versionStrangerRefusals: refusals of approvers other than the requester are recorded once,
// then only counted (StrangerRefusals).
const versionStrangerRefusals = "stranger-refusals-counted"

func (w *contractRun) refuseApproval(sig Approve) string {
	switch {
	case sig.Hash != w.st.ContractHash:
		return fmt.Sprintf("approval of hash %s refused: the quoted contract's hash is %s", short(sig.Hash), short(w.st.ContractHash))
	case sig.Approver != w.in.Quote.Requester:
		return fmt.Sprintf("approval by %q refused: only the requester %q may approve", sig.Approver, w.in.Quote.Requester)
	}
	return ""
}

// authorize creates the checkout and waits until the provider says authorized: on a signal
// (webhook or CLI), confirmed with the provider, or by polling when no signal comes.
func (w *contractRun) authorize() bool {
	var ps activities.PaymentState
	err := workflow.ExecuteActivity(controlCtx(w.work, w.timeouts), activities.AuthorizePaymentName, activities.AuthorizeRequest{
		ContractID: w.contract.ContractID, ContractHash: w.st.ContractHash, Goal: w.contract.Goal, Price: w.contract.Price,
	}).Get(w.work, &ps)
	if err != nil {
		if w.cancel == nil {
			w.st.Verdict = contracts.VerificationError
			w.event("payment_error", map[string]string{"error": errText(err)})
			w.to(StateCancelled, "cancelled", map[string]string{"why": "payment authorization could not start"})
		}
		return false
	}
	w.st.Payment = ps
	w.event("payment_requested", map[string]string{"provider": ps.Provider, "session": ps.CheckoutSessionID, "local": fmt.Sprint(ps.Local)})
	w.notify("payment", fmt.Sprintf("Authorize %s to start (captured only if the contract is satisfied): %s",
		formatPrice(w.contract.Price), ps.CheckoutURL))

	payCh := workflow.GetSignalChannel(w.root, SignalPaymentAuthorized)
	deadline := workflow.NewTimer(w.work, w.timeouts.Payment)
	for ps.State != activities.PaymentAuthorized {
		poll := workflow.NewTimer(w.work, w.timeouts.PaymentPoll)
		expired := false
		sel := workflow.NewSelector(w.root)
		sel.AddReceive(payCh, func(c workflow.ReceiveChannel, _ bool) {
			var sig PaymentAuthorized
			c.Receive(w.root, &sig)
			w.event("payment_signal", map[string]string{"source": sig.Source, "session": sig.SessionID})
		})
		sel.AddFuture(poll, func(workflow.Future) {})
		sel.AddFuture(deadline, func(f workflow.Future) { expired = f.Get(w.root, nil) == nil })
		sel.AddReceive(w.work.Done(), func(workflow.ReceiveChannel, bool) {})
		sel.Select(w.root)
		if w.cancel != nil {
			return false
		}
		if expired {
			w.event("payment_not_authorized", map[string]string{"after": w.timeouts.Payment.String()})
			return false
		}
		var now activities.PaymentState
		if err := workflow.ExecuteActivity(controlCtx(w.work, w.timeouts), activities.PaymentStatusName, w.st.ContractHash, ps.CheckoutSessionID).Get(w.work, &now); err != nil {
			if w.cancel != nil {
				return false
			}
			w.event("payment_status_error", map[string]string{"error": errText(err)})
			continue
		}
		ps = now
		w.st.Payment = now
		if now.State == activities.PaymentCanceled || now.State == activities.PaymentExpired {
			w.event("payment_not_authorized", map[string]string{"state": now.State})
			return false
		}
	}
	w.to(StateAuthorized, "payment_authorized", map[string]string{"payment_intent": ps.PaymentIntentID})
	return true
}

// acquireLock takes the repo lock so only one contract works on a repository at a time.
func (w *contractRun) acquireLock() bool {
	info := workflow.GetInfo(w.root)
	req := activities.LockRequest{
		LockWorkflowID: LockWorkflowID(w.st.Repo), LockWorkflowType: RepoLockWorkflowName, TaskQueue: ControlQueue,
		Signal: SignalLockRequest, RepoKey: w.st.Repo, RequesterWorkflowID: info.WorkflowExecution.ID,
	}
	if err := workflow.ExecuteActivity(controlCtx(w.work, w.timeouts), activities.RequestLockName, req).Get(w.work, nil); err != nil {
		if w.cancel == nil {
			w.event("lock_error", map[string]string{"error": errText(err)})
			w.st.Verdict = contracts.VerificationError
		}
		return false
	}
	w.lockHeld = true // requested: release on every path from here, even before the grant
	w.event("lock_requested", map[string]string{"repo": w.st.Repo})
	granted := workflow.GetSignalChannel(w.root, SignalLockGranted)
	sel := workflow.NewSelector(w.root)
	got := false
	sel.AddReceive(granted, func(c workflow.ReceiveChannel, _ bool) { var lock string; c.Receive(w.root, &lock); got = true })
	sel.AddReceive(w.work.Done(), func(workflow.ReceiveChannel, bool) {})
	sel.Select(w.root)
	if got {
		w.event("lock_acquired", map[string]string{"repo": w.st.Repo})
	}
	return got && w.cancel == nil
}

func (w *contractRun) releaseLock() {
	if !w.lockHeld {
		return
	}
	ctx, _ := workflow.NewDisconnectedContext(w.root)
	me := workflow.GetInfo(w.root).WorkflowExecution.ID
	err := workflow.SignalExternalWorkflow(ctx, LockWorkflowID(w.st.Repo), "", SignalLockRelease, me).Get(ctx, nil)
	if err != nil {
		w.event("lock_release_error", map[string]string{"error": errText(err)})
		return
	}
	w.lockHeld = false
	w.event("lock_released", map[string]string{"repo": w.st.Repo})
}

// attempts runs up to max_attempts executions. Only not_satisfied leads to a repair;
// verification_error re-verifies the same commit and never re-runs the executor.
func (w *contractRun) attempts() string {
	parent := w.contract.Repo.BaseCommitSHA
	var feedback []contracts.Reason
	verdict := contracts.NotSatisfied
	for attempt := 1; attempt <= w.contract.MaxAttempts; attempt++ {
		w.st.Attempt = attempt
		state, phase := StateBuilding, "executor working"
		if attempt > 1 {
			state, phase = StateRepairing, "executor repairing"
		}
		w.to(state, "attempt_started", map[string]string{"attempt": fmt.Sprint(attempt), "parent": parent})
		w.phase(phase)
		var exec activities.ExecResult
		err := workflow.ExecuteActivity(executeCtx(w.work, w.timeouts, 30*time.Minute), activities.RunExecutorName, activities.ExecRequest{
			ContractID: w.contract.ContractID, ContractHash: w.st.ContractHash, Attempt: attempt, Goal: w.contract.Goal,
			Repo: w.contract.Repo, Criteria: w.contract.Criteria, TestHooks: w.contract.TestHooks, Feedback: feedback, ParentSHA: parent,
		}).Get(w.work, &exec)
		w.st.Executions++
		if err != nil {
			if w.cancel != nil {
				return ""
			}
			o := outcome{decision: capabilityFailure("executor", err)}
			w.recordVerdict(attempt, 1, o)
			return o.decision.Verdict
		}
		w.event("executed", map[string]string{"attempt": fmt.Sprint(attempt), "commit": exec.CommitSHA,
			"empty": fmt.Sprint(exec.Empty), "diff": exec.DiffSummary})
		if exec.Empty {
			d := policy.Decision{Verdict: contracts.NotSatisfied, Reasons: []contracts.Reason{{Rule: policy.RuleBuild,
				Code: "empty_diff", Message: fmt.Sprintf("attempt %d changed nothing", attempt)}}}
			w.recordVerdict(attempt, 1, outcome{decision: d, commit: exec.CommitSHA})
			feedback = d.Reasons
			continue
		}
		w.notify("executed", fmt.Sprintf("Attempt %d: executor committed %s (%s).", attempt, short(exec.CommitSHA), exec.DiffSummary))

		var pr contracts.PRRef
		err = workflow.ExecuteActivity(controlCtx(w.work, w.timeouts), activities.PublishName, activities.PublishRequest{
			ContractID: w.contract.ContractID, ContractHash: w.st.ContractHash, Goal: w.contract.Goal, Repo: w.contract.Repo,
			Criteria: w.contract.Criteria, Branch: exec.Branch, CommitSHA: exec.CommitSHA, Attempt: attempt,
		}).Get(w.work, &pr)
		if err != nil {
			if w.cancel != nil {
				return ""
			}
			o := outcome{decision: capabilityFailure("deliverable", err), commit: exec.CommitSHA, diff: exec.DiffSummary}
			w.recordVerdict(attempt, 1, o)
			return o.decision.Verdict
		}
		w.st.PR = pr
		w.event("published", map[string]string{"commit": exec.CommitSHA, "branch": pr.Branch, "pr": pr.URL})

		d := w.verifyCommit(attempt, exec)
		if w.cancel != nil {
			return ""
		}
		verdict = d.Verdict
		switch d.Verdict {
		case contracts.Satisfied, contracts.VerificationError:
			return d.Verdict
		}
		feedback = d.Reasons
		parent = exec.CommitSHA
	}
	return verdict
}

// outcome is one verification's result and what the bundle records about it.
type outcome struct {
	decision       policy.Decision
	commit         string
	diff           string
	proofDir       string
	evidenceDigest string
	build          contracts.BuildResult
	gate           contracts.GateResult
	artifacts      []contracts.Artifact
}

// verifyCommit verifies one commit, re-verifying a verification_error a bounded number of
// times and then pausing for an operator's retry or abandon, with a deadline.
func (w *contractRun) verifyCommit(attempt int, exec activities.ExecResult) policy.Decision {
	limit := w.in.ReverifyLimit
	if limit <= 0 {
		limit = DefaultReverifyLimit
	}
	for try := 1; ; try++ {
		o := w.verifyOnce(attempt, try, exec)
		d := o.decision
		if w.cancel != nil {
			return d
		}
		w.recordVerdict(attempt, try, o)
		if d.Verdict != contracts.VerificationError {
			return d
		}
		if try <= limit {
			w.event("reverify", map[string]string{"attempt": fmt.Sprint(attempt), "try": fmt.Sprint(try + 1)})
			continue
		}
		if !w.awaitOperator(attempt) {
			return d
		}
	}
}

// awaitOperator pauses a verification_error for a person: true means retry verification.
func (w *contractRun) awaitOperator(attempt int) bool {
	w.to(StateAwaitingOperator, "paused_for_operator", map[string]string{"attempt": fmt.Sprint(attempt),
		"deadline": w.timeouts.Operator.String()})
	w.notify("paused", fmt.Sprintf("Verification could not complete for attempt %d. Send retry_verification or abandon within %s.",
		attempt, w.timeouts.Operator))
	retryCh := workflow.GetSignalChannel(w.root, SignalRetryVerification)
	abandonCh := workflow.GetSignalChannel(w.root, SignalAbandon)
	deadline := workflow.NewTimer(w.work, w.timeouts.Operator)
	var sig Operator
	retry, done := false, false
	sel := workflow.NewSelector(w.root)
	sel.AddReceive(retryCh, func(c workflow.ReceiveChannel, _ bool) { c.Receive(w.root, &sig); retry, done = true, true })
	sel.AddReceive(abandonCh, func(c workflow.ReceiveChannel, _ bool) { c.Receive(w.root, &sig); done = true })
	sel.AddFuture(deadline, func(workflow.Future) {})
	sel.AddReceive(w.work.Done(), func(workflow.ReceiveChannel, bool) {})
	sel.Select(w.root)
	switch {
	case w.cancel != nil:
		return false
	case !done:
		w.event("operator_deadline", map[string]string{"after": w.timeouts.Operator.String()})
		return false
	case retry:
		w.event("retry_verification", map[string]string{"by": sig.By})
		w.to(StateVerifying, "verifying", map[string]string{"attempt": fmt.Sprint(attempt)})
		return true
	}
	w.event("abandoned", map[string]string{"by": sig.By, "reason": sig.Reason})
	return false
}

// verifyOnce starts a preview, verifies it, asks the runtime gate, stops the preview and
// decides.
func (w *contractRun) verifyOnce(attempt, try int, exec activities.ExecResult) outcome {
	o := outcome{commit: exec.CommitSHA, diff: exec.DiffSummary, gate: contracts.GateResult{Source: "page-errors", Errors: []string{}}}
	w.phase("building preview")
	var prev activities.PreviewResult
	err := workflow.ExecuteActivity(executeCtx(w.work, w.timeouts, 20*time.Minute), activities.StartPreviewName, activities.PreviewRequest{
		ContractID: w.contract.ContractID, Attempt: attempt, Try: try, Repo: w.contract.Repo, CommitSHA: exec.CommitSHA, Stack: w.contract.Stack,
	}).Get(w.work, &prev)
	defer w.stopPreview(prev.PreviewID)
	if err != nil {
		o.decision = capabilityFailure("preview", err)
		return o
	}
	o.build = prev.Build
	w.event("preview_built", map[string]string{"attempt": fmt.Sprint(attempt), "build_passed": fmt.Sprint(prev.Build.Passed)})
	exp := policy.Expectation{
		ContractHash: w.st.ContractHash, ImplementationSHA: exec.CommitSHA, VerifierPublicKey: w.in.Trust.VerifierPublicKey,
		VerifierDigest: w.in.Trust.VerifierDigest, Build: prev.Build, Gate: o.gate,
	}
	if !prev.Build.Passed {
		o.decision = policy.Decide(w.contract, exp, nil)
		return o
	}
	w.notify("build", fmt.Sprintf("Attempt %d: build passed; verifying in a real browser.", attempt))
	w.to(StateVerifying, "verifying", map[string]string{"attempt": fmt.Sprint(attempt), "try": fmt.Sprint(try)})
	w.phase("verifying")
	started := workflow.Now(w.root).UTC()
	var vr activities.VerifyResult
	err = workflow.ExecuteActivity(verifyCtx(w.work, w.timeouts), activities.VerifyName, activities.VerifyRequest{
		ContractID: w.contract.ContractID, ContractHash: w.st.ContractHash, Attempt: attempt, Try: try,
		Criteria: w.contract.Criteria, EvidencePolicy: w.contract.EvidencePolicy.Required, Verifier: w.contract.Verifier,
		ExpectedSHA: exec.CommitSHA, PreviewURL: prev.URL,
	}).Get(w.work, &vr)
	if err != nil {
		o.decision = capabilityFailure("verifier", err)
		return o
	}
	o.proofDir, o.evidenceDigest = vr.ProofDir, vr.EvidenceDigest
	if vr.Evidence != nil {
		o.artifacts = vr.Evidence.Artifacts
	}
	var gate contracts.GateResult
	err = workflow.ExecuteActivity(verifyCtx(w.work, w.timeouts), activities.RuntimeGateName, activities.GateRequest{
		ContractID: w.contract.ContractID, Attempt: attempt,
		From: started.Format(time.RFC3339), To: workflow.Now(w.root).UTC().Format(time.RFC3339),
	}).Get(w.work, &gate)
	if err != nil {
		o.decision = capabilityFailure("runtime gate", err)
		return o
	}
	o.gate = gate
	exp.Gate = gate
	exp.ArtifactProblems = vr.ArtifactProblems
	exp.Timeline = w.chain.Events
	o.decision = policy.Decide(w.contract, exp, vr.Evidence)
	return o
}

func (w *contractRun) stopPreview(id string) {
	if id == "" {
		return
	}
	ctx, _ := workflow.NewDisconnectedContext(w.root)
	if err := workflow.ExecuteActivity(executeCtx(ctx, w.timeouts, 2*time.Minute), activities.StopPreviewName, id).Get(ctx, nil); err != nil {
		w.event("preview_stop_error", map[string]string{"preview": id, "error": errText(err)})
	}
}

// recordVerdict appends the verdict to the timeline and writes the signed bundle.
func (w *contractRun) recordVerdict(attempt, try int, o outcome) {
	d := o.decision
	state := map[string]string{contracts.Satisfied: StateSatisfied, contracts.NotSatisfied: StateNotSatisfied,
		contracts.VerificationError: StateVerificationError}[d.Verdict]
	w.to(state, "verdict", map[string]string{"attempt": fmt.Sprint(attempt), "try": fmt.Sprint(try), "commit": o.commit,
		"verdict": d.Verdict, "summary": d.Summary()})
	w.st.Verdict = d.Verdict
	rec := AttemptRecord{Attempt: attempt, Try: try, CommitSHA: o.commit, Verdict: d.Verdict, Reasons: d.Reasons,
		ProofDir: o.proofDir, EvidenceDigest: o.evidenceDigest, DiffSummary: o.diff}
	if o.artifacts == nil {
		o.artifacts = []contracts.Artifact{}
	}
	if o.build.Steps == nil {
		o.build.Steps = []contracts.BuildStep{}
	}
	b := contracts.Bundle{
		SchemaVersion: contracts.BundleSchemaVersion, ContractID: w.contract.ContractID, ContractHash: w.st.ContractHash,
		Goal: w.contract.Goal, Attempt: attempt, Try: try, BaseSHA: w.contract.Repo.BaseCommitSHA, ImplementationSHA: o.commit, EvidenceDigest: o.evidenceDigest,
		Verdict: d.Verdict, Reasons: d.Reasons, Timeline: w.chain.Events, TimelineHead: w.chain.Head(),
		Payment: w.paymentRef(),
		PR:      w.st.PR, Build: o.build, Gate: o.gate, Artifacts: o.artifacts,
	}
	var res activities.RecordResult
	err := workflow.ExecuteActivity(controlCtx(w.root, w.timeouts), activities.RecordAttemptName, activities.RecordRequest{Bundle: b, Contract: w.contract,
		Final: d.Verdict != contracts.NotSatisfied || attempt == w.contract.MaxAttempts}).Get(w.root, &res)
	if err != nil {
		w.event("record_error", map[string]string{"error": errText(err)})
	} else {
		rec.BundleDigest = res.BundleDigest
		if rec.ProofDir == "" {
			rec.ProofDir = res.ProofDir
		}
	}
	w.st.Attempts = append(w.st.Attempts, rec)
	w.index()
	w.notify("verdict", verdictNotice(attempt, d))
}

// settle moves the money: capture only on satisfied, cancel the authorization otherwise.
func (w *contractRun) settle(verdict string) {
	ctx, _ := workflow.NewDisconnectedContext(w.root)
	action := activities.PaymentAction{ContractID: w.contract.ContractID, ContractHash: w.st.ContractHash,
		PaymentIntentID: w.st.Payment.PaymentIntentID, SessionID: w.st.Payment.CheckoutSessionID}
	if w.cancel != nil {
		w.to(StateCancelled, "cancelled", map[string]string{"by": w.cancel.By, "reason": w.cancel.Reason})
		action.Reason = "cancelled by " + w.cancel.By
	} else if verdict == contracts.Satisfied {
		w.capturing = true
		var ps activities.PaymentState
		err := workflow.ExecuteActivity(controlCtx(ctx, w.timeouts), activities.CapturePaymentName, action).Get(ctx, &ps)
		if err == nil {
			w.st.Payment = ps
			w.to(StatePaymentCaptured, "payment_captured", map[string]string{"payment_intent": ps.PaymentIntentID})
			w.notify("captured", "Payment captured: the contract is satisfied.")
			w.checkMergeEligible(ctx)
			w.recordSettlement(ctx)
			w.st.Final = true
			w.index()
			return
		}
		// A capture the provider refuses (an expired authorization) ends honestly: cancel.
		w.event("capture_refused", map[string]string{"error": errText(err)})
		action.Reason = "capture refused"
	} else {
		action.Reason = "verdict " + verdict
	}
	if w.st.Payment.CheckoutSessionID != "" || w.st.Payment.PaymentIntentID != "" {
		var ps activities.PaymentState
		if err := workflow.ExecuteActivity(controlCtx(ctx, w.timeouts), activities.CancelPaymentName, action).Get(ctx, &ps); err != nil {
			w.event("payment_cancel_error", map[string]string{"error": errText(err)})
		} else {
			w.st.Payment = ps
			w.to(StatePaymentCancelled, "payment_cancelled", map[string]string{"reason": action.Reason})
			w.notify("cancelled", "Authorization cancelled: no payment was taken ("+action.Reason+").")
		}
	}
	if w.cancel != nil {
		w.st.State = StateCancelled
	}
	w.recordSettlement(ctx)
	w.st.Final = true
	w.index()
}

func (w *contractRun) paymentRef() contracts.PaymentRef {
	return contracts.PaymentRef{Provider: w.st.Payment.Provider, CheckoutSessionID: w.st.Payment.CheckoutSessionID,
		PaymentIntentID: w.st.Payment.PaymentIntentID, State: w.st.Payment.State, Local: w.st.Payment.Local}
}

// recordSettlement has the control worker sign how the contract ended, beside the last
// attempt's bundle: bundles are signed before the payment settles, so the final payment
// state needs a signed record of its own. Contracts that ended before any verification have
// no proof to settle against. Workflows started before this step existed skip it (version).
func (w *contractRun) recordSettlement(ctx workflow.Context) {
	if workflow.GetVersion(ctx, "signed-settlement", workflow.DefaultVersion, 1) == workflow.DefaultVersion || len(w.st.Attempts) == 0 {
		return
	}
	last := w.st.Attempts[len(w.st.Attempts)-1]
	s := contracts.Settlement{ContractID: w.contract.ContractID, ContractHash: w.st.ContractHash, Verdict: w.st.Verdict,
		State: w.st.State, Payment: w.paymentRef(), Attempt: last.Attempt, Try: last.Try, BundleDigest: last.BundleDigest,
		Timeline: w.chain.Events, TimelineHead: w.chain.Head()}
	var path string
	if err := workflow.ExecuteActivity(controlCtx(ctx, w.timeouts), activities.RecordSettlementName, s).Get(ctx, &path); err != nil {
		w.event("settlement_record_error", map[string]string{"error": errText(err)})
		return
	}
	w.event("settlement_recorded", map[string]string{"payment": s.Payment.State, "path": path})
}

// checkMergeEligible declares the PR merge-eligible only while its head is the verified SHA.
func (w *contractRun) checkMergeEligible(ctx workflow.Context) {
	verified := w.lastCommit()
	var head string
	err := workflow.ExecuteActivity(controlCtx(ctx, w.timeouts), activities.PRHeadName, activities.HeadRequest{
		ContractID: w.contract.ContractID, Repo: w.contract.Repo, Branch: w.st.PR.Branch,
	}).Get(ctx, &head)
	switch {
	case err != nil:
		w.event("merge_eligibility_unknown", map[string]string{"error": errText(err)})
	case head != verified:
		w.event("merge_ineligible", map[string]string{"head": head, "verified": verified})
	default:
		w.st.MergeEligible = true
		w.to(StateMergeEligible, "merge_eligible", map[string]string{"head": head})
	}
}

// watchPR keeps eligibility honest after the verdict: a new head revokes it.
func (w *contractRun) watchPR() {
	if !w.st.MergeEligible || w.timeouts.WatchPR <= 0 {
		return
	}
	ch := workflow.GetSignalChannel(w.root, SignalPRHeadChanged)
	deadline := workflow.NewTimer(w.root, w.timeouts.WatchPR)
	for w.st.MergeEligible {
		var sig PRHeadChanged
		got := false
		sel := workflow.NewSelector(w.root)
		sel.AddReceive(ch, func(c workflow.ReceiveChannel, _ bool) { c.Receive(w.root, &sig); got = true })
		sel.AddFuture(deadline, func(workflow.Future) {})
		sel.Select(w.root)
		if !got {
			w.event("pr_watch_ended", map[string]string{"after": w.timeouts.WatchPR.String()})
			return
		}
		// Re-read the head rather than trusting the signal's payload.
		var head string
		err := workflow.ExecuteActivity(controlCtx(w.root, w.timeouts), activities.PRHeadName, activities.HeadRequest{
			ContractID: w.contract.ContractID, Repo: w.contract.Repo, Branch: w.st.PR.Branch,
		}).Get(w.root, &head)
		if err == nil && head != w.lastCommit() {
			w.st.MergeEligible = false
			w.to(StatePaymentCaptured, "merge_eligibility_revoked", map[string]string{"head": head, "verified": w.lastCommit(),
				"why": "the PR head moved after verification; the new commit was not verified"})
			w.notify("revoked", fmt.Sprintf("Merge eligibility revoked: the PR head moved to %s, which was not verified.", short(head)))
			w.index()
		}
	}
}

func (w *contractRun) lastCommit() string {
	for i := len(w.st.Attempts) - 1; i >= 0; i-- {
		if w.st.Attempts[i].CommitSHA != "" {
			return w.st.Attempts[i].CommitSHA
		}
	}
	return ""
}

func (w *contractRun) end() Status {
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
	e := activities.IndexEntry{ContractID: w.contract.ContractID, ContractHash: w.st.ContractHash,
		WorkflowID: workflow.GetInfo(w.root).WorkflowExecution.ID, Repo: w.st.Repo, Goal: w.contract.Goal,
		State: w.st.State, Verdict: w.st.Verdict, Attempts: w.st.Attempt, ProofDir: proof, PR: w.st.PR.URL,
		UpdatedAt: workflow.Now(w.root).UTC().Format(time.RFC3339)}
	if err := workflow.ExecuteActivity(controlCtx(ctx, w.timeouts), activities.UpdateIndexName, e).Get(ctx, nil); err != nil {
		w.event("index_error", map[string]string{"error": errText(err)})
	}
}

func (w *contractRun) notify(kind, text string) {
	ctx, _ := workflow.NewDisconnectedContext(w.root)
	n := activities.Notice{ContractID: w.contract.ContractID, Requester: w.in.Quote.Requester, Channel: w.in.Channel, Kind: kind, Text: text}
	_ = workflow.ExecuteActivity(controlCtx(ctx, w.timeouts), activities.NotifyName, n).Get(ctx, nil)
}

// capabilityFailure turns an activity that could not do its job into verification_error: a
// missing or broken capability is never a pass and never blamed on the code.
func capabilityFailure(capability string, err error) policy.Decision {
	code := "capability_failed"
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.Type() == activities.ErrTypeNotConfigured {
		code = "not_configured"
	}
	return policy.Decision{Verdict: contracts.VerificationError, Reasons: []contracts.Reason{{Rule: policy.RuleIntegrity,
		Code: code, Message: fmt.Sprintf("%s: %s", capability, errText(err))}}}
}

func verdictNotice(attempt int, d policy.Decision) string {
	switch d.Verdict {
	case contracts.Satisfied:
		return fmt.Sprintf("Attempt %d: satisfied. Every criterion passed on the deployed commit.", attempt)
	case contracts.NotSatisfied:
		return fmt.Sprintf("Attempt %d: not satisfied. %s", attempt, firstMessage(d))
	}
	return fmt.Sprintf("Attempt %d: verification error. %s", attempt, firstMessage(d))
}

func firstMessage(d policy.Decision) string {
	if len(d.Reasons) == 0 {
		return ""
	}
	return d.Reasons[0].Message
}

func errText(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Error()
	}
	return err.Error()
}

func repoKey(r contracts.Repo) string { return r.Owner + "/" + r.Name }

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func formatPrice(p contracts.Price) string {
	return fmt.Sprintf("%d.%02d %s", p.Amount/100, p.Amount%100, p.Currency)
}
