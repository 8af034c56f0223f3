// The contract workflow's first chapter: the quote waits for its approval (signal or Update),
// then the payment authorization.

package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/workflows/contractapi"
)

// awaitApproval waits for an approval of exactly this hash by the requester, by the approve
// signal or the approve update. Anything else is refused, recorded, and the quote stays open
// until its deadline.
func (w *contractRun) awaitApproval() bool {
	if w.st.State == contracts.StateApproved {
		return true // the update took it before the wait began
	}
	approveCh := workflow.GetSignalChannel(w.root, contractapi.SignalApprove)
	// The quote's own expiry wins when it is sooner than the approval timeout. Workflows
	// started without one (every history recorded before quotes expired) wait as before.
	wait, why := w.timeouts.Approval, map[string]string{contracts.DataAfter: w.timeouts.Approval.String()}
	if exp := w.in.QuoteExpiresAt; !exp.IsZero() {
		if left := exp.Sub(workflow.Now(w.root)); left < wait {
			wait, why = left, map[string]string{contracts.DataQuoteExpiresAt: exp.UTC().Format(time.RFC3339)}
		}
	}
	if wait <= 0 {
		w.to(contracts.StateExpired, contracts.EventQuoteExpired, why)
		return false
	}
	tctx, spent := workflow.WithCancel(w.work)
	deadline := workflow.NewTimer(tctx, wait)
	for {
		var sig contractapi.Approve
		got, expired := false, false
		sel := workflow.NewSelector(w.root)
		sel.AddReceive(approveCh, func(c workflow.ReceiveChannel, _ bool) { c.Receive(w.root, &sig); got = true })
		sel.AddReceive(w.approvedCh, func(c workflow.ReceiveChannel, _ bool) { c.Receive(w.root, nil) })
		sel.AddFuture(deadline, func(f workflow.Future) { expired = f.Get(w.root, nil) == nil })
		sel.AddReceive(w.work.Done(), func(workflow.ReceiveChannel, bool) {})
		sel.Select(w.root)
		switch {
		case w.cancel != nil:
			w.to(contracts.StateCancelled, contracts.EventCancelled, map[string]string{contracts.DataBy: w.cancel.By, contracts.DataBefore: "approval"})
			return false
		case w.st.State == contracts.StateApproved: // by the update
			w.spend(spent)
			return true
		case expired:
			w.to(contracts.StateExpired, contracts.EventQuoteExpired, why)
			return false
		case got:
			if w.considerApproval(sig) != nil {
				continue
			}
			w.spend(spent)
			return true
		}
	}
}

// considerApproval takes an approval (state approved) or refuses it, recording the refusal;
// the signal and the update both come through here.
func (w *contractRun) considerApproval(sig contractapi.Approve) *contractapi.ApprovalRefusal {
	r := w.refuseApproval(sig)
	if r == nil {
		w.to(contracts.StateApproved, contracts.EventApproved, map[string]string{contracts.DataHash: sig.Hash, contracts.DataApprover: sig.Approver,
			contracts.DataChannel: sig.Channel, contracts.DataMessageID: sig.MessageID})
		return nil
	}
	if sig.Approver != w.in.Quote.Requester &&
		workflow.GetVersion(w.root, versionStrangerRefusals, workflow.DefaultVersion, 1) >= 1 {
		w.st.StrangerRefusals++
		if w.st.StrangerRefusals > 1 {
			return r // counted, not recorded again
		}
	}
	w.st.Refusals = append(w.st.Refusals, r.Reason)
	w.event(contracts.EventApprovalRefused, map[string]string{contracts.DataHash: sig.Hash, contracts.DataApprover: sig.Approver,
		contracts.DataChannel: sig.Channel, contracts.DataMessageID: sig.MessageID, contracts.DataWhy: r.Reason})
	return r
}

func (w *contractRun) refuseApproval(sig contractapi.Approve) *contractapi.ApprovalRefusal {
	switch {
	case sig.Hash != w.st.ContractHash:
		return &contractapi.ApprovalRefusal{Code: contractapi.RefusedWrongHash, Reason: fmt.Sprintf("approval of hash %s refused: the quoted contract's hash is %s",
			contracts.ShortSHA(sig.Hash), contracts.ShortSHA(w.st.ContractHash))}
	case sig.Approver != w.in.Quote.Requester:
		return &contractapi.ApprovalRefusal{Code: contractapi.RefusedNotRequester, Reason: fmt.Sprintf("approval by %q refused: only the requester %q may approve",
			sig.Approver, w.in.Quote.Requester)}
	}
	return nil
}

// approvalClosed says why no approval can be taken now, or nil while the quote is open.
func (w *contractRun) approvalClosed() *contractapi.ApprovalRefusal {
	switch {
	case w.cancel != nil || w.st.State == contracts.StateCancelled:
		return &contractapi.ApprovalRefusal{Code: contractapi.RefusedCancelled, Reason: fmt.Sprintf("contract %s was cancelled", w.contract.ContractID)}
	case w.st.State == contracts.StateExpired || (w.st.State == contracts.StateQuoted && !workflow.Now(w.root).Before(w.st.QuoteExpiresAt)):
		return &contractapi.ApprovalRefusal{Code: contractapi.RefusedExpired, Reason: fmt.Sprintf("the quote of %s expired at %s",
			w.contract.ContractID, w.st.QuoteExpiresAt.UTC().Format(time.RFC3339))}
	case w.st.State != contracts.StateQuoted:
		return &contractapi.ApprovalRefusal{Code: contractapi.RefusedAlreadyApproved, Reason: fmt.Sprintf("contract %s was approved already (it is %s)",
			w.contract.ContractID, w.st.State)}
	}
	return nil
}

// validateApprove rejects, before anything is recorded, an approve update that cannot be
// taken whatever it says: the quote is no longer open.
func (w *contractRun) validateApprove(_ workflow.Context, _ contractapi.Approve) error {
	if r := w.approvalClosed(); r != nil {
		return refusalError(r)
	}
	return nil
}

// approveUpdate is the approve update: the approval is taken or refused at once, and the
// refusal is the update's error.
func (w *contractRun) approveUpdate(_ workflow.Context, sig contractapi.Approve) (contractapi.ApproveResult, error) {
	if r := w.approvalClosed(); r != nil {
		return contractapi.ApproveResult{}, refusalError(r)
	}
	if r := w.considerApproval(sig); r != nil {
		return contractapi.ApproveResult{}, refusalError(r)
	}
	w.approvedCh.SendAsync(true)
	return contractapi.ApproveResult{State: w.st.State}, nil
}

// refusalError is how a refused approve update answers: an ApplicationError of type
// ApprovalRefusedError whose details are the refusal.
func refusalError(r *contractapi.ApprovalRefusal) error {
	return temporal.NewApplicationErrorWithOptions(r.Reason, contractapi.ApprovalRefusedError,
		temporal.ApplicationErrorOptions{NonRetryable: true, Details: []any{*r}})
}

// spend cancels a timer whose wait is over (workflows started before this version leave
// it pending).
func (w *contractRun) spend(cancel workflow.CancelFunc) {
	if workflow.GetVersion(w.root, versionCancelSpentTimers, workflow.DefaultVersion, 1) >= 1 {
		cancel()
	}
}

// authorize creates the checkout and waits until the provider says authorized: on a signal
// (webhook or CLI), confirmed with the provider, or by polling when no signal comes.
func (w *contractRun) authorize() bool {
	var ps capability.PaymentState
	err := workflow.ExecuteActivity(controlCtx(w.work, w.timeouts), control.AuthorizePayment, capability.AuthorizeRequest{
		ContractID: w.contract.ContractID, ContractHash: w.st.ContractHash, Goal: w.contract.Goal, Price: w.contract.Price,
	}).Get(w.work, &ps)
	if err != nil {
		if w.cancel == nil {
			w.st.Verdict = contracts.VerificationError
			w.event(contracts.EventPaymentError, map[string]string{contracts.DataError: errText(err)})
			w.to(contracts.StateCancelled, contracts.EventCancelled, map[string]string{contracts.DataWhy: "payment authorization could not start"})
		}
		return false
	}
	w.st.Payment = ps
	w.event(contracts.EventPaymentRequested, map[string]string{contracts.DataProvider: ps.Provider, contracts.DataSession: ps.CheckoutSessionID, contracts.DataLocal: fmt.Sprint(ps.Local)})
	w.notify(contracts.NoticePayment, fmt.Sprintf("Authorize %s to start (captured only if the contract is satisfied): %s",
		w.contract.Price.String(), ps.CheckoutURL))

	payCh := workflow.GetSignalChannel(w.root, contractapi.SignalPaymentAuthorized)
	dctx, deadlineSpent := workflow.WithCancel(w.work)
	deadline := workflow.NewTimer(dctx, w.timeouts.Payment)
	for ps.State != capability.PaymentAuthorized {
		pctx, pollSpent := workflow.WithCancel(w.work)
		poll := workflow.NewTimer(pctx, w.timeouts.PaymentPoll)
		expired, polled := false, false
		sel := workflow.NewSelector(w.root)
		sel.AddReceive(payCh, func(c workflow.ReceiveChannel, _ bool) {
			var sig contractapi.PaymentAuthorized
			c.Receive(w.root, &sig)
			w.event(contracts.EventPaymentSignal, map[string]string{contracts.DataSource: sig.Source, contracts.DataSession: sig.SessionID})
		})
		sel.AddFuture(poll, func(workflow.Future) { polled = true })
		sel.AddFuture(deadline, func(f workflow.Future) { expired = f.Get(w.root, nil) == nil })
		sel.AddReceive(w.work.Done(), func(workflow.ReceiveChannel, bool) {})
		sel.Select(w.root)
		if !polled && !expired && w.cancel == nil {
			w.spend(pollSpent) // a signal came first: the next turn starts its own poll
		}
		if w.cancel != nil {
			return false
		}
		if expired {
			w.event(contracts.EventPaymentNotAuthorized, map[string]string{contracts.DataAfter: w.timeouts.Payment.String()})
			return false
		}
		var now capability.PaymentState
		if err := w.controlQuick(w.work, versionLocalReads, control.PaymentStatus, w.st.ContractHash, ps.CheckoutSessionID).Get(w.work, &now); err != nil {
			if w.cancel != nil {
				return false
			}
			w.event(contracts.EventPaymentStatusError, map[string]string{contracts.DataError: errText(err)})
			continue
		}
		ps = keepPayment(ps, now)
		w.st.Payment = ps
		if now.State == capability.PaymentCanceled || now.State == capability.PaymentExpired {
			w.event(contracts.EventPaymentNotAuthorized, map[string]string{contracts.DataState: now.State})
			return false
		}
	}
	w.spend(deadlineSpent)
	w.to(contracts.StateAuthorized, contracts.EventPaymentAuthorized, map[string]string{contracts.DataPaymentIntent: ps.PaymentIntentID})
	return true
}

// keepPayment is the provider's latest answer with what it did not repeat kept from before: a
// status read returns no checkout link, and a requester who pays late still needs it.
func keepPayment(prev, now capability.PaymentState) capability.PaymentState {
	if now.Provider == "" {
		now.Provider, now.Local = prev.Provider, prev.Local
	}
	for _, f := range []struct {
		dst *string
		old string
	}{
		{&now.CheckoutSessionID, prev.CheckoutSessionID}, {&now.CheckoutURL, prev.CheckoutURL},
		{&now.PaymentIntentID, prev.PaymentIntentID}, {&now.AuthorizedAt, prev.AuthorizedAt},
	} {
		if *f.dst == "" {
			*f.dst = f.old
		}
	}
	return now
}
