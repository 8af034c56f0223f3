package payment_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/payment"
	"github.com/signoff/signoff/internal/payment/localstripe"
)

func adapter(e *env) *payment.Payments {
	return &payment.Payments{Client: e.pc, Provider: payment.ProviderLocal, Local: true, ReturnURL: "http://127.0.0.1:9/"}
}

func authorizeReq(id string) capability.AuthorizeRequest {
	return capability.AuthorizeRequest{ContractID: id, ContractHash: testHash, Goal: "dark mode",
		Price: contracts.Price{Amount: 4900, Currency: "USD"}}
}

// appErr asserts err is a non-retryable Temporal application error of typ.
// appErr: the activities adapter turns a classified error into a non-retryable application
// error of its class (activities.ApplicationError); here the class is what is checked.
func appErr(t *testing.T, err, class error) {
	t.Helper()
	if !errors.Is(err, class) {
		t.Fatalf("error = %v, want one classified %v", err, class)
	}
}

func TestPaymentsAuthorizeCaptureAsTheWorkflowSeesIt(t *testing.T) {
	e := newEnv(t, envOpts{noWebhook: true})
	p, ctx := adapter(e), context.Background()
	ps, err := p.Authorize(ctx, authorizeReq("ct-adapt"))
	if err != nil {
		t.Fatal(err)
	}
	if ps.State != capability.PaymentPending || !ps.Local || ps.Provider != payment.ProviderLocal || ps.CheckoutURL == "" {
		t.Fatalf("authorize: %+v", ps)
	}
	// A retried Authorize (same contract hash) is the same checkout.
	again, err := p.Authorize(ctx, authorizeReq("ct-adapt"))
	if err != nil || again.CheckoutSessionID != ps.CheckoutSessionID {
		t.Fatalf("retried authorize: %+v, %v", again, err)
	}
	if st, err := p.Status(ctx, testHash, ps.CheckoutSessionID); err != nil || st.State != capability.PaymentPending {
		t.Fatalf("status before paying: %+v, %v", st, err)
	}
	if _, err := localstripe.MarkPaid(ctx, ps.CheckoutURL); err != nil {
		t.Fatal(err)
	}
	st, err := p.Status(ctx, testHash, ps.CheckoutSessionID)
	if err != nil || st.State != capability.PaymentAuthorized || st.PaymentIntentID == "" || st.AuthorizedAt == "" {
		t.Fatalf("status after paying: %+v, %v", st, err)
	}
	// Status of another contract's checkout is refused, not reported.
	_, err = p.Status(ctx, "0000000000000000000000000000000000000000000000000000000000000000", ps.CheckoutSessionID)
	appErr(t, err, capability.ErrRefused)

	// The workflow may not have learnt the PaymentIntent (webhook lost): capture finds it.
	act := capability.PaymentAction{ContractID: "ct-adapt", ContractHash: testHash, SessionID: ps.CheckoutSessionID}
	cap1, err := p.Capture(ctx, act)
	if err != nil || cap1.State != capability.PaymentCaptured || cap1.CheckoutSessionID != ps.CheckoutSessionID {
		t.Fatalf("capture: %+v, %v", cap1, err)
	}
	act.PaymentIntentID = st.PaymentIntentID
	if cap2, err := p.Capture(ctx, act); err != nil || cap2.State != capability.PaymentCaptured {
		t.Fatalf("retried capture: %+v, %v", cap2, err)
	}
	pi, err := e.stripe().PaymentIntents.Get(st.PaymentIntentID, nil)
	if err != nil || pi.AmountReceived != 4900 {
		t.Fatalf("captured amount: %+v, %v", pi, err)
	}
	// Cancelling a captured payment is a state refusal: the workflow must not retry it.
	_, err = p.Cancel(ctx, act)
	appErr(t, err, capability.ErrPaymentState)
}

func TestPaymentsCancelThenCaptureIsAStateRefusal(t *testing.T) {
	e := newEnv(t, envOpts{noWebhook: true})
	p, ctx := adapter(e), context.Background()
	ps, err := p.Authorize(ctx, authorizeReq("ct-cancel"))
	if err != nil {
		t.Fatal(err)
	}
	paid, err := localstripe.MarkPaid(ctx, ps.CheckoutURL)
	if err != nil {
		t.Fatal(err)
	}
	act := capability.PaymentAction{ContractID: "ct-cancel", ContractHash: testHash, SessionID: ps.CheckoutSessionID,
		PaymentIntentID: paid.PaymentIntentID, Reason: "verdict not_satisfied"}
	for i := 0; i < 2; i++ { // a retried cancel is the same cancel
		st, err := p.Cancel(ctx, act)
		if err != nil || st.State != capability.PaymentCanceled {
			t.Fatalf("cancel #%d: %+v, %v", i+1, st, err)
		}
	}
	_, err = p.Capture(ctx, act)
	appErr(t, err, capability.ErrPaymentState)
	pi, err := e.stripe().PaymentIntents.Get(paid.PaymentIntentID, nil)
	if err != nil || pi.AmountReceived != 0 || pi.CancellationReason != "abandoned" {
		t.Fatalf("after cancel then capture: %+v, %v", pi, err)
	}
}

func TestPaymentsCancelUnpaidCheckout(t *testing.T) {
	e := newEnv(t, envOpts{noWebhook: true})
	p, ctx := adapter(e), context.Background()
	ps, err := p.Authorize(ctx, authorizeReq("ct-unpaid"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := p.Cancel(ctx, capability.PaymentAction{ContractID: "ct-unpaid", ContractHash: testHash,
		SessionID: ps.CheckoutSessionID, Reason: "cancelled by alice"})
	if err != nil || st.State != capability.PaymentExpired {
		t.Fatalf("cancel of an unpaid checkout: %+v, %v", st, err)
	}
	if _, err := localstripe.MarkPaid(ctx, ps.CheckoutURL); err == nil {
		t.Fatal("a cancelled checkout could still be paid")
	}
	// Capture with nothing authorized is a state refusal, not a retry loop.
	_, err = p.Capture(ctx, capability.PaymentAction{ContractID: "ct-unpaid", ContractHash: testHash, SessionID: ps.CheckoutSessionID})
	appErr(t, err, capability.ErrPaymentState)
}

// An authorization near its expiry is never captured: the refusal is a PaymentStateError,
// which the workflow answers by cancelling the authorization and telling the requester.
func TestPaymentsNearExpiryIsAStateRefusal(t *testing.T) {
	e := newEnv(t, envOpts{noWebhook: true, client: func(c *payment.Config) {
		c.Now = func() time.Time { return time.Now().Add(7*24*time.Hour - time.Hour) }
	}})
	p, ctx := adapter(e), context.Background()
	ps, err := p.Authorize(ctx, authorizeReq("ct-expiring"))
	if err != nil {
		t.Fatal(err)
	}
	paid, err := localstripe.MarkPaid(ctx, ps.CheckoutURL)
	if err != nil {
		t.Fatal(err)
	}
	act := capability.PaymentAction{ContractID: "ct-expiring", ContractHash: testHash, SessionID: ps.CheckoutSessionID, PaymentIntentID: paid.PaymentIntentID}
	_, err = p.Capture(ctx, act)
	appErr(t, err, capability.ErrPaymentState)
	if !errors.Is(err, payment.ErrAuthorizationExpiring) {
		t.Fatalf("the cause is lost: %v", err)
	}
	if st, err := p.Cancel(ctx, act); err != nil || st.State != capability.PaymentCanceled {
		t.Fatalf("cancel after the refused capture: %+v, %v", st, err)
	}
}

func TestPaymentsRefusesBadInput(t *testing.T) {
	e := newEnv(t, envOpts{noWebhook: true})
	p, ctx := adapter(e), context.Background()
	req := authorizeReq("ct-bad")
	req.Price.Amount = 0
	_, err := p.Authorize(ctx, req)
	appErr(t, err, capability.ErrRefused)
	_, err = p.Cancel(ctx, capability.PaymentAction{ContractHash: testHash})
	appErr(t, err, capability.ErrRefused)
	_, err = p.Status(ctx, testHash, "cs_doesnotexist")
	appErr(t, err, capability.ErrRefused)
}
