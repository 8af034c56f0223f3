// The contract workflow's middle: the repository lock, up to MaxAttempts executions, each
// verified, judged by the policy and recorded.

package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/policy"
	"github.com/signoff/signoff/workflows/contractapi"
)

// acquireLock takes the repo lock: only one contract publishes to a repository at a time
// (before versionLockPublishOnly, only one worked on it at a time).
func (w *contractRun) acquireLock() bool {
	info := workflow.GetInfo(w.root)
	req := capability.LockRequest{
		LockWorkflowID: contractapi.LockWorkflowID(w.st.Repo), LockWorkflowType: contractapi.RepoLockWorkflowName, TaskQueue: contractapi.ControlQueue,
		Signal: contractapi.SignalLockRequest, RepoKey: w.st.Repo, RequesterWorkflowID: info.WorkflowExecution.ID,
	}
	byUpdate := workflow.GetVersion(w.root, versionLockByUpdate, workflow.DefaultVersion, 1) >= 1
	var err error
	granted := false
	if byUpdate {
		w.lockAsks++
		req.Update = contractapi.UpdateLockAcquire
		req.UpdateID = fmt.Sprintf("%s/%s/%d", info.WorkflowExecution.ID, info.WorkflowExecution.RunID, w.lockAsks)
		err = workflow.ExecuteLocalActivity(controlLocalCtx(w.work, w.timeouts), control.AcquireLock, req).Get(w.work, &granted)
	} else {
		err = workflow.ExecuteActivity(controlCtx(w.work, w.timeouts), control.RequestLock, req).Get(w.work, nil)
	}
	if err != nil {
		if w.cancel == nil {
			w.event(contracts.EventLockError, map[string]string{contracts.DataError: errText(err)})
			w.st.Verdict = contracts.VerificationError
		}
		return false
	}
	w.lockHeld = true // requested: release on every path from here, even before the grant
	w.event(contracts.EventLockRequested, map[string]string{contracts.DataRepo: w.st.Repo})
	if granted {
		w.event(contracts.EventLockAcquired, map[string]string{contracts.DataRepo: w.st.Repo})
		return w.cancel == nil
	}
	grants := workflow.GetSignalChannel(w.root, contractapi.SignalLockGranted)
	sel := workflow.NewSelector(w.root)
	got := false
	sel.AddReceive(grants, func(c workflow.ReceiveChannel, _ bool) { var lock string; c.Receive(w.root, &lock); got = true })
	sel.AddReceive(w.work.Done(), func(workflow.ReceiveChannel, bool) {})
	sel.Select(w.root)
	if got {
		w.event(contracts.EventLockAcquired, map[string]string{contracts.DataRepo: w.st.Repo})
	}
	return got && w.cancel == nil
}

func (w *contractRun) releaseLock() {
	if !w.lockHeld {
		return
	}
	ctx, _ := workflow.NewDisconnectedContext(w.root)
	me := workflow.GetInfo(w.root).WorkflowExecution.ID
	var err error
	if workflow.GetVersion(w.root, versionLockByUpdate, workflow.DefaultVersion, 1) >= 1 {
		err = workflow.ExecuteLocalActivity(controlLocalCtx(ctx, w.timeouts), control.ReleaseLock, capability.LockRelease{
			LockWorkflowID: contractapi.LockWorkflowID(w.st.Repo), Signal: contractapi.SignalLockRelease, RequesterWorkflowID: me}).Get(ctx, nil)
	} else {
		err = workflow.SignalExternalWorkflow(ctx, contractapi.LockWorkflowID(w.st.Repo), "", contractapi.SignalLockRelease, me).Get(ctx, nil)
	}
	if err != nil {
		w.event(contracts.EventLockReleaseError, map[string]string{contracts.DataError: errText(err)})
		return
	}
	w.lockHeld = false
	w.event(contracts.EventLockReleased, map[string]string{contracts.DataRepo: w.st.Repo})
}

// attempts runs up to max_attempts executions. Only not_satisfied leads to a repair;
// verification_error re-verifies the same commit and never re-runs the executor.
func (w *contractRun) attempts() string {
	parent := w.contract.Repo.BaseCommitSHA
	var feedback []contracts.Reason
	var elements []contracts.FailedElement
	verdict := contracts.NotSatisfied
	for attempt := 1; attempt <= w.contract.MaxAttempts; attempt++ {
		w.st.Attempt = attempt
		state, phase := contracts.StateBuilding, "executor working"
		if attempt > 1 {
			state, phase = contracts.StateRepairing, "executor repairing"
		}
		w.to(state, contracts.EventAttemptStarted, map[string]string{contracts.DataAttempt: fmt.Sprint(attempt), contracts.DataParent: parent})
		w.phase(phase)
		var exec capability.ExecResult
		err := workflow.ExecuteActivity(executeCtx(w.work, w.timeouts, 30*time.Minute), execute.RunExecutor, capability.ExecRequest{
			ContractID: w.contract.ContractID, ContractHash: w.st.ContractHash, Attempt: attempt, Goal: w.contract.Goal,
			Repo: w.contract.Repo, Criteria: w.contract.Criteria, TestHooks: w.contract.TestHooks, Feedback: feedback, FailedElements: elements, ParentSHA: parent,
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
		w.event(contracts.EventExecuted, map[string]string{contracts.DataAttempt: fmt.Sprint(attempt), contracts.DataCommit: exec.CommitSHA,
			contracts.DataEmpty: fmt.Sprint(exec.Empty), contracts.DataDiff: exec.DiffSummary})
		if exec.Empty {
			d := policy.Decision{Verdict: contracts.NotSatisfied, Reasons: []contracts.Reason{{Rule: policy.RuleBuild,
				Code: policy.CodeEmptyDiff, Message: fmt.Sprintf("attempt %d changed nothing", attempt)}}}
			w.recordVerdict(attempt, 1, outcome{decision: d, commit: exec.CommitSHA})
			feedback, elements = d.Reasons, nil
			continue
		}
		w.notify(contracts.NoticeExecuted, fmt.Sprintf("Attempt %d: executor committed %s (%s).", attempt, contracts.ShortSHA(exec.CommitSHA), exec.DiffSummary))

		if w.lockPublishOnly && !w.acquireLock() {
			return "" // cancelled while waiting, or the lock could not be asked for (recorded)
		}
		var pr contracts.PRRef
		err = workflow.ExecuteActivity(controlCtx(w.work, w.timeouts), control.Publish, capability.PublishRequest{
			ContractID: w.contract.ContractID, ContractHash: w.st.ContractHash, Goal: w.contract.Goal, Repo: w.contract.Repo,
			Criteria: w.contract.Criteria, Branch: exec.Branch, CommitSHA: exec.CommitSHA, Attempt: attempt,
		}).Get(w.work, &pr)
		if w.lockPublishOnly {
			w.releaseLock()
		}
		if err != nil {
			if w.cancel != nil {
				return ""
			}
			o := outcome{decision: capabilityFailure("deliverable", err), commit: exec.CommitSHA, diff: exec.DiffSummary}
			w.recordVerdict(attempt, 1, o)
			return o.decision.Verdict
		}
		w.st.PR = pr
		w.event(contracts.EventPublished, map[string]string{contracts.DataCommit: exec.CommitSHA, contracts.DataBranch: pr.Branch, contracts.DataPR: pr.URL})

		o := w.verifyCommit(attempt, exec)
		d := o.decision
		if w.cancel != nil {
			return ""
		}
		verdict = d.Verdict
		switch d.Verdict {
		case contracts.Satisfied, contracts.VerificationError:
			return d.Verdict
		}
		feedback, elements = d.Reasons, o.elements
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
	// elements are what the failed checks point at, for the repair's feedback.
	elements []contracts.FailedElement
}

// verifyCommit verifies one commit, re-verifying a verification_error a bounded number of
// times and then pausing for an operator's retry or abandon, with a deadline.
func (w *contractRun) verifyCommit(attempt int, exec capability.ExecResult) outcome {
	limit := w.in.ReverifyLimit
	if limit <= 0 {
		limit = contractapi.DefaultReverifyLimit
	}
	for try := 1; ; try++ {
		o := w.verifyOnce(attempt, try, exec)
		d := o.decision
		if w.cancel != nil {
			return o
		}
		w.recordVerdict(attempt, try, o)
		if d.Verdict != contracts.VerificationError {
			return o
		}
		if try <= limit {
			w.event(contracts.EventReverify, map[string]string{contracts.DataAttempt: fmt.Sprint(attempt), contracts.DataTry: fmt.Sprint(try + 1)})
			continue
		}
		if !w.awaitOperator(attempt) {
			return o
		}
	}
}

// awaitOperator pauses a verification_error for a person: true means retry verification.
func (w *contractRun) awaitOperator(attempt int) bool {
	w.to(contracts.StateAwaitingOperator, contracts.EventPausedForOperator, map[string]string{contracts.DataAttempt: fmt.Sprint(attempt),
		contracts.DataDeadline: w.timeouts.Operator.String()})
	w.notify(contracts.NoticePaused, fmt.Sprintf("Verification could not complete for attempt %d. Send retry_verification or abandon within %s.",
		attempt, w.timeouts.Operator))
	retryCh := workflow.GetSignalChannel(w.root, contractapi.SignalRetryVerification)
	abandonCh := workflow.GetSignalChannel(w.root, contractapi.SignalAbandon)
	tctx, spent := workflow.WithCancel(w.work)
	deadline := workflow.NewTimer(tctx, w.timeouts.Operator)
	var sig contractapi.Operator
	retry, done := false, false
	sel := workflow.NewSelector(w.root)
	sel.AddReceive(retryCh, func(c workflow.ReceiveChannel, _ bool) { c.Receive(w.root, &sig); retry, done = true, true })
	sel.AddReceive(abandonCh, func(c workflow.ReceiveChannel, _ bool) { c.Receive(w.root, &sig); done = true })
	sel.AddFuture(deadline, func(workflow.Future) {})
	sel.AddReceive(w.work.Done(), func(workflow.ReceiveChannel, bool) {})
	sel.Select(w.root)
	if done && w.cancel == nil {
		w.spend(spent)
	}
	switch {
	case w.cancel != nil:
		return false
	case !done:
		w.event(contracts.EventOperatorDeadline, map[string]string{contracts.DataAfter: w.timeouts.Operator.String()})
		return false
	case retry:
		w.event(contracts.EventRetryVerification, map[string]string{contracts.DataBy: sig.By})
		w.to(contracts.StateVerifying, contracts.EventVerifying, map[string]string{contracts.DataAttempt: fmt.Sprint(attempt)})
		return true
	}
	w.event(contracts.EventAbandoned, map[string]string{contracts.DataBy: sig.By, contracts.DataReason: sig.Reason})
	return false
}

// verifyOnce starts a preview, verifies it, asks the runtime gate, stops the preview and
// decides.
func (w *contractRun) verifyOnce(attempt, try int, exec capability.ExecResult) outcome {
	o := outcome{commit: exec.CommitSHA, diff: exec.DiffSummary, gate: contracts.GateResult{Source: "page-errors", Errors: []string{}}}
	w.phase("building preview")
	var prev capability.PreviewResult
	err := workflow.ExecuteActivity(executeCtx(w.work, w.timeouts, 20*time.Minute), execute.StartPreview, capability.PreviewRequest{
		ContractID: w.contract.ContractID, Attempt: attempt, Try: try, Repo: w.contract.Repo, CommitSHA: exec.CommitSHA, Stack: w.contract.Stack,
	}).Get(w.work, &prev)
	defer w.stopPreview(prev.PreviewID)
	if err != nil {
		o.decision = capabilityFailure("preview", err)
		return o
	}
	o.build = prev.Build
	w.event(contracts.EventPreviewBuilt, map[string]string{contracts.DataAttempt: fmt.Sprint(attempt), contracts.DataBuildPassed: fmt.Sprint(prev.Build.Passed)})
	exp := policy.Expectation{
		ContractHash: w.st.ContractHash, ImplementationSHA: exec.CommitSHA, VerifierPublicKey: w.in.Trust.VerifierPublicKey,
		VerifierDigest: w.in.Trust.VerifierDigest, Build: prev.Build, Gate: o.gate,
	}
	if !prev.Build.Passed {
		o.decision = policy.Decide(w.contract, exp, nil)
		return o
	}
	w.notify(contracts.NoticeBuild, fmt.Sprintf("Attempt %d: build passed; verifying in a real browser.", attempt))
	w.to(contracts.StateVerifying, contracts.EventVerifying, map[string]string{contracts.DataAttempt: fmt.Sprint(attempt), contracts.DataTry: fmt.Sprint(try)})
	w.phase("verifying")
	started := workflow.Now(w.root).UTC()
	var vr capability.VerifyResult
	err = workflow.ExecuteActivity(verifyCtx(w.work, w.timeouts), verify.Verify, capability.VerifyRequest{
		ContractID: w.contract.ContractID, ContractHash: w.st.ContractHash, Attempt: attempt, Try: try,
		Criteria: w.contract.Criteria, EvidencePolicy: w.contract.EvidencePolicy.Required, Verifier: w.contract.Verifier,
		ExpectedSHA: exec.CommitSHA, PreviewURL: prev.URL, AllowedOrigins: w.contract.AllowedOrigins,
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
	err = workflow.ExecuteActivity(verifyCtx(w.work, w.timeouts), verify.RuntimeGate, capability.GateRequest{
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
	o.elements = contracts.FailedElements(vr.Evidence, o.decision.Reasons)
	return o
}

func (w *contractRun) stopPreview(id string) {
	if id == "" {
		return
	}
	ctx, _ := workflow.NewDisconnectedContext(w.root)
	if err := workflow.ExecuteActivity(executeCtx(ctx, w.timeouts, 2*time.Minute), execute.StopPreview, id).Get(ctx, nil); err != nil {
		w.event(contracts.EventPreviewStopError, map[string]string{contracts.DataPreview: id, contracts.DataError: errText(err)})
	}
}

// recordVerdict appends the verdict to the timeline and writes the signed bundle.
func (w *contractRun) recordVerdict(attempt, try int, o outcome) {
	d := o.decision
	state := map[string]string{contracts.Satisfied: contracts.StateSatisfied, contracts.NotSatisfied: contracts.StateNotSatisfied,
		contracts.VerificationError: contracts.StateVerificationError}[d.Verdict]
	w.to(state, contracts.EventVerdict, map[string]string{contracts.DataAttempt: fmt.Sprint(attempt), contracts.DataTry: fmt.Sprint(try), contracts.DataCommit: o.commit,
		contracts.DataVerdict: d.Verdict, contracts.DataSummary: d.Summary()})
	w.st.Verdict = d.Verdict
	rec := contractapi.AttemptRecord{Attempt: attempt, Try: try, CommitSHA: o.commit, Verdict: d.Verdict, Reasons: d.Reasons,
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
	var res capability.RecordResult
	err := w.controlQuick(w.root, versionLocalRecords, control.RecordAttempt, capability.RecordRequest{Bundle: b, Contract: w.contract,
		Final: d.Verdict != contracts.NotSatisfied || attempt == w.contract.MaxAttempts}).Get(w.root, &res)
	if err != nil {
		w.event(contracts.EventRecordError, map[string]string{contracts.DataError: errText(err)})
	} else {
		rec.BundleDigest = res.BundleDigest
		if rec.ProofDir == "" {
			rec.ProofDir = res.ProofDir
		}
	}
	w.st.Attempts = append(w.st.Attempts, rec)
	w.index()
	w.notify(contracts.NoticeVerdict, verdictNotice(attempt, d))
}

// capabilityFailure turns an activity that could not do its job into verification_error: a
// missing or broken capability is never a pass and never blamed on the code.
func capabilityFailure(capability string, err error) policy.Decision {
	code := policy.CodeCapabilityFailed
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.Type() == activities.ErrTypeNotConfigured {
		code = policy.CodeNotConfigured
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
