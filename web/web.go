// Package web is Signoff's HTTP face: a loopback listener for people on this machine (the
// contract index, the link to the local checkout, proof pages) and a public listener for machines
// (payment webhooks, the chat endpoint). Every handler reaches workflows only by signal.
package web

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/payment/localstripe"
	"github.com/signoff/signoff/workflows/contractapi"
	"github.com/signoff/signoff/workflows/contractclient"
)

//go:embed templates/*.html
var templateFS embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{"short": contracts.ShortSHA}).ParseFS(templateFS, "templates/*.html"))

// Index lists contracts.
type Index interface {
	List() ([]capability.IndexEntry, error)
}

// Loopback serves people on this machine.
type Loopback struct {
	Index Index
	// CheckoutBase is the local Stripe test double: /checkout/<session> here redirects to
	// its checkout page. "" with real Stripe, whose checkout pages are Stripe's.
	CheckoutBase string
	UIURL        string // Temporal Web UI, "" when off
	Namespace    string
	// Extra handlers mounted by later parts (proof pages).
	Extra map[string]http.Handler
}

// Handler returns the loopback mux.
func (l *Loopback) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", l.index)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /checkout/{session}", l.checkoutPage)
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
	capability.IndexEntry
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

// checkoutPage sends the payer on to the local Stripe test double's checkout page, which
// authorizes (test card, no money) and tells the workflow by its signed webhook.
func (l *Loopback) checkoutPage(w http.ResponseWriter, r *http.Request) {
	if l.CheckoutBase == "" {
		http.Error(w, "no local checkout here: payments go to the configured provider; open the checkout link in the contract's status", http.StatusNotFound)
		return
	}
	http.Redirect(w, r, strings.TrimRight(l.CheckoutBase, "/")+"/checkout/"+url.PathEscape(r.PathValue("session")), http.StatusSeeOther)
}

// CompleteTestCheckout pays a contract's checkout on the local Stripe test double, as the
// payer pressing "Authorize" on its page would: a test card, no browser, no money. The link
// comes from the workflow's status; it waits (within ctx) until the workflow has created the
// checkout. A checkout on real Stripe is refused: a person pays that one in a browser. The
// double's signed webhook then tells the workflow, or the workflow's poll finds the payment.
func CompleteTestCheckout(ctx context.Context, q contractclient.Querier, contractID string) (localstripe.PaidSession, error) {
	var st contractapi.Status
	for {
		var err error
		st, err = contractclient.Status(ctx, q, contractID)
		if err != nil {
			return localstripe.PaidSession{}, fmt.Errorf("read %s's status: %w", contractID, err)
		}
		if st.Payment.CheckoutURL != "" {
			break
		}
		if st.State != contracts.StateQuoted && st.State != contracts.StateApproved {
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

func render(w http.ResponseWriter, name string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := pages.ExecuteTemplate(w, name, data); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}
