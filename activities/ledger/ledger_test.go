package ledger_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/activities/ledger"
	"github.com/signoff/signoff/contracts"
)

var hash = strings.Repeat("ab", 32)

func authorize(t *testing.T, l *ledger.Ledger) activities.PaymentState {
	t.Helper()
	ps, err := l.Authorize(context.Background(), activities.AuthorizeRequest{ContractID: "c1", ContractHash: hash,
		Price: contracts.Price{Amount: 4900, Currency: "usd"}})
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

func TestAuthorizeCaptureOnce(t *testing.T) {
	l := ledger.Open(filepath.Join(t.TempDir(), "ledger.json"), "http://127.0.0.1:1")
	ps := authorize(t, l)
	if ps.State != activities.PaymentPending || !ps.Local || !strings.Contains(ps.CheckoutURL, ps.CheckoutSessionID) {
		t.Fatalf("%+v", ps)
	}
	if again := authorize(t, l); again.CheckoutSessionID != ps.CheckoutSessionID {
		t.Fatal("a second authorize opened another checkout")
	}
	a := activities.PaymentAction{ContractHash: hash, SessionID: ps.CheckoutSessionID}
	if _, err := l.Capture(context.Background(), a); err == nil {
		t.Fatal("captured a checkout that was never authorized")
	}
	if _, err := l.MarkAuthorized("c1"); err != nil {
		t.Fatal(err)
	}
	// Concurrent retries of the same capture apply once.
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := l.Capture(context.Background(), a); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	es, _ := l.Entries()
	if len(es) != 1 || es[0].Captures != 1 || es[0].State != activities.PaymentCaptured {
		t.Fatalf("%+v", es)
	}
	_, err := l.Cancel(context.Background(), a)
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != activities.ErrTypePaymentState {
		t.Fatalf("cancel after capture: %v", err)
	}
}

func TestNoCaptureAfterCancel(t *testing.T) {
	l := ledger.Open(filepath.Join(t.TempDir(), "ledger.json"), "")
	ps := authorize(t, l)
	if _, err := l.MarkAuthorized(ps.CheckoutSessionID); err != nil {
		t.Fatal(err)
	}
	a := activities.PaymentAction{ContractHash: hash, SessionID: ps.CheckoutSessionID}
	if _, err := l.Cancel(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Cancel(context.Background(), a); err != nil {
		t.Fatalf("retried cancel: %v", err)
	}
	_, err := l.Capture(context.Background(), a)
	if !errors.Is(err, ledger.ErrUnexpectedState) {
		t.Fatalf("capture after cancel: %v", err)
	}
	if _, err := l.MarkAuthorized(ps.CheckoutSessionID); err == nil {
		t.Fatal("a cancelled checkout was authorized again")
	}
	es, _ := l.Entries()
	if es[0].Captures != 0 || es[0].State != activities.PaymentCanceled {
		t.Fatalf("%+v", es[0])
	}
}

func TestWrongContractHashRefused(t *testing.T) {
	l := ledger.Open(filepath.Join(t.TempDir(), "ledger.json"), "")
	ps := authorize(t, l)
	_, err := l.Capture(context.Background(), activities.PaymentAction{ContractHash: strings.Repeat("cd", 32), SessionID: ps.CheckoutSessionID})
	if !errors.Is(err, ledger.ErrUnknown) {
		t.Fatalf("%v", err)
	}
}
