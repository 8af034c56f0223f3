// The contract workflow's end: capture or cancel, the settlement record, merge eligibility,
// and watching the PR head afterwards.

package workflows

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/policy"
	"github.com/signoff/signoff/workflows/contractapi"
)

// settle moves the money: capture only on satisfied, cancel the authorization otherwise.
func (w *contractRun) settle(verdict string) {
	ctx, _ := workflow.NewDisconnectedContext(w.root)
	action := capability.PaymentAction{ContractID: w.contract.ContractID, ContractHash: w.st.ContractHash,
		PaymentIntentID: w.st.Payment.PaymentIntentID, SessionID: w.st.Payment.CheckoutSessionID}
	if w.cancel != nil {
		w.to(contracts.StateCancelled, contracts.EventCancelled, map[string]string{contracts.DataBy: w.cancel.By, contracts.DataReason: w.cancel.Reason})
		action.Reason = policy.CancelledBy(w.cancel.By)
	} else if verdict == contracts.Satisfied {
		w.capturing = true
		var ps capability.PaymentState
		err := workflow.ExecuteActivity(controlCtx(ctx, w.timeouts), control.CapturePayment, action).Get(ctx, &ps)
		if err == nil {
			w.st.Payment = keepPayment(w.st.Payment, ps)
			w.to(contracts.StatePaymentCaptured, contracts.EventPaymentCaptured, map[string]string{contracts.DataPaymentIntent: ps.PaymentIntentID})
			w.notify(contracts.NoticeCaptured, "Payment captured: the contract is satisfied.")
			w.checkMergeEligible(ctx)
			w.recordSettlement(ctx)
			w.st.Final = true
			w.index()
			return
		}
		// A capture the provider refuses (an expired authorization) ends honestly: cancel.
		w.event(contracts.EventCaptureRefused, map[string]string{contracts.DataError: errText(err)})
		action.Reason = policy.CancelCaptureRefused
	} else {
		action.Reason = policy.CancelReason(verdict)
	}
	if w.st.Payment.CheckoutSessionID != "" || w.st.Payment.PaymentIntentID != "" {
		var ps capability.PaymentState
		if err := workflow.ExecuteActivity(controlCtx(ctx, w.timeouts), control.CancelPayment, action).Get(ctx, &ps); err != nil {
			w.event(contracts.EventPaymentCancelError, map[string]string{contracts.DataError: errText(err)})
		} else {
			w.st.Payment = keepPayment(w.st.Payment, ps)
			w.to(contracts.StatePaymentCancelled, contracts.EventPaymentCancelled, map[string]string{contracts.DataReason: action.Reason})
			w.notify(contracts.NoticeCancelled, "Authorization cancelled: no payment was taken ("+action.Reason+").")
		}
	}
	if w.cancel != nil {
		w.st.State = contracts.StateCancelled
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
	if workflow.GetVersion(ctx, versionSignedSettlement, workflow.DefaultVersion, 1) == workflow.DefaultVersion || len(w.st.Attempts) == 0 {
		return
	}
	last := w.st.Attempts[len(w.st.Attempts)-1]
	s := contracts.Settlement{ContractID: w.contract.ContractID, ContractHash: w.st.ContractHash, Verdict: w.st.Verdict,
		State: w.st.State, Payment: w.paymentRef(), Attempt: last.Attempt, Try: last.Try, BundleDigest: last.BundleDigest,
		Timeline: w.chain.Events, TimelineHead: w.chain.Head()}
	var path string
	if err := w.controlQuick(ctx, versionLocalRecords, control.RecordSettlement, s).Get(ctx, &path); err != nil {
		w.event(contracts.EventSettlementRecordError, map[string]string{contracts.DataError: errText(err)})
		return
	}
	w.event(contracts.EventSettlementRecorded, map[string]string{contracts.DataPayment: s.Payment.State, contracts.DataPath: path})
}

// checkMergeEligible declares the PR merge-eligible only while its head is the verified SHA.
func (w *contractRun) checkMergeEligible(ctx workflow.Context) {
	verified := w.lastCommit()
	var head string
	err := w.controlQuick(ctx, versionLocalReads, control.PRHead, capability.HeadRequest{
		ContractID: w.contract.ContractID, Repo: w.contract.Repo, Branch: w.st.PR.Branch,
	}).Get(ctx, &head)
	switch {
	case err != nil:
		w.event(contracts.EventMergeEligibilityUnknown, map[string]string{contracts.DataError: errText(err)})
	case head != verified:
		w.event(contracts.EventMergeIneligible, map[string]string{contracts.DataHead: head, contracts.DataVerified: verified})
	default:
		w.st.MergeEligible = true
		w.to(contracts.StateMergeEligible, contracts.EventMergeEligible, map[string]string{contracts.DataHead: head})
	}
}

// watchPR keeps eligibility honest after the verdict: a new head revokes it.
func (w *contractRun) watchPR() {
	if !w.st.MergeEligible || w.timeouts.WatchPR <= 0 {
		return
	}
	ch := workflow.GetSignalChannel(w.root, contractapi.SignalPRHeadChanged)
	deadline := workflow.NewTimer(w.root, w.timeouts.WatchPR)
	for w.st.MergeEligible {
		var sig contractapi.PRHeadChanged
		got := false
		sel := workflow.NewSelector(w.root)
		sel.AddReceive(ch, func(c workflow.ReceiveChannel, _ bool) { c.Receive(w.root, &sig); got = true })
		sel.AddFuture(deadline, func(workflow.Future) {})
		sel.Select(w.root)
		if !got {
			w.event(contracts.EventPRWatchEnded, map[string]string{contracts.DataAfter: w.timeouts.WatchPR.String()})
			return
		}
		// Re-read the head rather than trusting the signal's payload.
		var head string
		err := w.controlQuick(w.root, versionLocalReads, control.PRHead, capability.HeadRequest{
			ContractID: w.contract.ContractID, Repo: w.contract.Repo, Branch: w.st.PR.Branch,
		}).Get(w.root, &head)
		if err == nil && head != w.lastCommit() {
			w.st.MergeEligible = false
			w.to(contracts.StatePaymentCaptured, contracts.EventMergeEligibilityRevoked, map[string]string{contracts.DataHead: head, contracts.DataVerified: w.lastCommit(),
				contracts.DataWhy: "the PR head moved after verification; the new commit was not verified"})
			w.notify(contracts.NoticeRevoked, fmt.Sprintf("Merge eligibility revoked: the PR head moved to %s, which was not verified.", contracts.ShortSHA(head)))
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
