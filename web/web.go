// Package web is Signoff's HTTP face: a loopback listener for people on this machine (the
// contract index, the local checkout page, proof pages) and a public listener for machines
// (payment webhooks, the chat endpoint). Every handler reaches workflows only by signal.
package web

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.temporal.io/sdk/converter"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/activities/ledger"
	"github.com/signoff/signoff/activities/payment/localstripe"
	"github.com/signoff/signoff/workflows"
)

//go:embed templates/*.html
var templateFS embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{"short": short}).ParseFS(templateFS, "templates/*.html"))

// Signaler is the part of the Temporal client the web face uses.
type Signaler interface {
	SignalWorkflow(ctx context.Context, workflowID, runID, signalName string, arg any) error
}

// Index lists contracts.
type Index interface {
	List() ([]activities.IndexEntry, error)
}

// Loopback serves people on this machine.
type Loopback struct {
	Index  Index
	Ledger *ledger.Ledger // nil when a payment provider is configured
	// CheckoutBase, with no ledger, is the local Stripe test double: /checkout/<session>
	// here redirects to its checkout page.
	CheckoutBase string
	Signal       Signaler
	UIURL        string // Temporal Web UI, "" when off
	Namespace    string
	Log          *slog.Logger
	// Extra handlers mounted by later parts (proof pages).
	Extra map[string]http.Handler
}

// Handler returns the loopback mux.
func (l *Loopback) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", l.index)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /checkout/{session}", l.checkoutPage)
	mux.HandleFunc("POST /checkout/{session}", l.checkoutPay)
	for p, h := range l.Extra {
		mux.Handle(p, h)
	}
	return securityHeaders(mux)
}

func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Referrer-Policy", "no-referrer")
		h.ServeHTTP(w, r)
	})
}

type indexRow struct {
	activities.IndexEntry
	UILink string
}

func (l *Loopback) index(w http.ResponseWriter, r *http.Request) {
	entries, err := l.Index.List()
	if err != nil {
		http.Error(w, "contract index unreadable: "+err.Error(), http.StatusInternalServerError)
		return
	}
	rows := make([]indexRow, 0, len(entries))
	for _, e := range entries {
		row := indexRow{IndexEntry: e}
		if l.UIURL != "" {
			row.UILink = fmt.Sprintf("%s/namespaces/%s/workflows/%s", strings.TrimRight(l.UIURL, "/"),
				url.PathEscape(l.Namespace), url.PathEscape(e.WorkflowID))
		}
		rows = append(rows, row)
	}
	render(w, "index.html", map[string]any{"Rows": rows, "UIURL": l.UIURL})
}

func (l *Loopback) checkoutEntry(session string) (*ledger.Entry, error) {
	if l.Ledger == nil {
		return nil, fmt.Errorf("the local ledger is not in use: payments go to the configured provider")
	}
	entries, err := l.Ledger.Entries()
	if err != nil {
		return nil, err
	}
	for i := range entries {
		if entries[i].SessionID == session {
			return &entries[i], nil
		}
	}
	return nil, fmt.Errorf("no checkout %q", session)
}

func (l *Loopback) checkoutPage(w http.ResponseWriter, r *http.Request) {
	if l.Ledger == nil && l.CheckoutBase != "" {
		http.Redirect(w, r, strings.TrimRight(l.CheckoutBase, "/")+"/checkout/"+url.PathEscape(r.PathValue("session")), http.StatusSeeOther)
		return
	}
	e, err := l.checkoutEntry(r.PathValue("session"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	render(w, "checkout.html", map[string]any{"E": e, "Label": ledger.Label, "Amount": formatAmount(e.Amount, e.Currency)})
}

// checkoutPay completes the local checkout: the ledger marks the authorization and the
// workflow is told. Same-origin only: a form posted from another site is refused.
func (l *Loopback) checkoutPay(w http.ResponseWriter, r *http.Request) {
	if o := r.Header.Get("Origin"); o != "" && !sameHost(o, r.Host) {
		http.Error(w, "cross-site request refused", http.StatusForbidden)
		return
	}
	session := r.PathValue("session")
	e, err := l.checkoutEntry(session)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	if err := AuthorizeLocal(r.Context(), l.Ledger, l.Signal, e.ContractID); err != nil {
		http.Error(w, err.Error(), http.StatusConflict)
		return
	}
	if l.Log != nil {
		l.Log.Info("local checkout authorized ("+ledger.Label+")", "contract", e.ContractID, "session", session)
	}
	http.Redirect(w, r, "/checkout/"+url.PathEscape(session), http.StatusSeeOther)
}

// AuthorizeLocal completes a contract's local checkout: with a ledger, it marks the ledger's
// checkout authorized and signals the workflow; with none (the product's default), it pays
// the local Stripe test double's checkout (CompleteTestCheckout), whose webhook or the
// workflow's poll then tells the workflow. s must then also read status (a Temporal client).
func AuthorizeLocal(ctx context.Context, l *ledger.Ledger, s Signaler, contractID string) error {
	if l == nil {
		q, ok := s.(StatusQuerier)
		if !ok {
			return errors.New("the local Stripe test double's checkout needs a client that reads workflow status")
		}
		_, err := CompleteTestCheckout(ctx, q, contractID)
		return err
	}
	ps, err := l.MarkAuthorized(contractID)
	if err != nil {
		return err
	}
	return s.SignalWorkflow(ctx, workflows.WorkflowID(contractID), "", workflows.SignalPaymentAuthorized,
		workflows.PaymentAuthorized{SessionID: ps.CheckoutSessionID, PaymentIntentID: ps.PaymentIntentID, Source: "local-checkout"})
}

// StatusQuerier is the part of the Temporal client that reads a contract's status.
type StatusQuerier interface {
	QueryWorkflow(ctx context.Context, workflowID, runID, queryType string, args ...interface{}) (converter.EncodedValue, error)
}

// CompleteTestCheckout pays a contract's checkout on the local Stripe test double, as the
// payer pressing "Authorize" on its page would: a test card, no browser, no money. The link
// comes from the workflow's status; it waits (within ctx) until the workflow has created the
// checkout. A checkout on real Stripe is refused: a person pays that one in a browser. The
// double's signed webhook then tells the workflow, or the workflow's poll finds the payment.
func CompleteTestCheckout(ctx context.Context, q StatusQuerier, contractID string) (localstripe.PaidSession, error) {
	var st workflows.Status
	for {
		v, err := q.QueryWorkflow(ctx, workflows.WorkflowID(contractID), "", workflows.QueryStatus)
		if err == nil {
			err = v.Get(&st)
		}
		if err != nil {
			return localstripe.PaidSession{}, fmt.Errorf("read %s's status: %w", contractID, err)
		}
		if st.Payment.CheckoutURL != "" {
			break
		}
		if st.State != workflows.StateQuoted && st.State != workflows.StateApproved {
			return localstripe.PaidSession{}, fmt.Errorf("contract %s is %s and has no checkout", contractID, st.State)
		}
		select {
		case <-ctx.Done():
			return localstripe.PaidSession{}, fmt.Errorf("contract %s has no checkout yet (state %s): %w", contractID, st.State, ctx.Err())
		case <-time.After(100 * time.Millisecond): // polling a query until the checkout exists
		}
	}
	if !st.Payment.Local {
		return localstripe.PaidSession{}, errors.New("this checkout is on Stripe, not the local test double: open " + st.Payment.CheckoutURL + " in a browser")
	}
	return localstripe.MarkPaid(ctx, st.Payment.CheckoutURL)
}

func sameHost(origin, host string) bool {
	u, err := url.Parse(origin)
	return err == nil && u.Host == host
}

func render(w http.ResponseWriter, name string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := pages.ExecuteTemplate(w, name, data); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

func formatAmount(minor int64, currency string) string {
	return fmt.Sprintf("%d.%02d %s", minor/100, minor%100, strings.ToUpper(currency))
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}
