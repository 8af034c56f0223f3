package localstripe

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
)

//go:embed templates/page.html
var templateFS embed.FS

var pageTmpl = template.Must(template.ParseFS(templateFS, "templates/page.html"))

// pageData feeds templates/page.html.
type pageData struct {
	Title   string
	Message string
	Session *sessionView
}

type sessionView struct {
	ID, Amount, ContractID, ContractHash, Description, CaptureMethod, Status string
	Open                                                                     bool
	ActionPath, CancelURL                                                    string
}

var (
	errUnknownSession = errors.New("no such checkout session")
	errSessionExpired = errors.New("checkout session has expired")
)

func renderPage(w http.ResponseWriter, status int, d pageData) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	_ = pageTmpl.Execute(w, d)
}

// serveCheckoutPage is the local stand-in for Stripe's hosted checkout page. The session id in
// its URL is long and random, so, as with Stripe's own checkout links, knowing the URL is
// what lets someone open it.
func (s *Server) serveCheckoutPage(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceClock()
	if len(s.outbox) > 0 {
		_ = s.commit()
	}
	cs, ok := s.st.Sessions[r.PathValue("id")]
	if !ok {
		renderPage(w, http.StatusNotFound, pageData{Title: "Checkout not found", Message: "There is no checkout session with this id in the local Stripe test double."})
		return
	}
	title := "Authorize payment"
	switch cs.Status {
	case "complete":
		title = "Payment authorized"
	case "expired":
		title = "Checkout expired"
	}
	renderPage(w, http.StatusOK, pageData{Title: title, Session: s.view(cs)})
}

func (s *Server) view(cs *sessionRec) *sessionView {
	v := &sessionView{
		ID:            cs.ID,
		Amount:        FormatAmount(cs.AmountTotal, cs.Currency),
		ContractID:    cs.Metadata["contract_id"],
		ContractHash:  cs.Metadata["contract_hash"],
		Description:   cs.ProductName,
		CaptureMethod: cs.CaptureMethod,
		Status:        cs.Status,
		Open:          cs.Status == "open",
		ActionPath:    "/checkout/" + cs.ID,
		CancelURL:     cs.CancelURL,
	}
	if cs.CaptureMethod == "manual" {
		v.CaptureMethod = "manual (authorize now, capture later)"
	}
	if pi := s.st.Intents[cs.PaymentIntentID]; pi != nil {
		v.Status = cs.Status + " (payment intent " + pi.Status + ")"
	}
	return v
}

// serveCheckoutAuthorize is the page's "Authorize" button (and MarkPaid's endpoint): it
// completes the session with a test card and sends the signed webhooks.
func (s *Server) serveCheckoutAuthorize(w http.ResponseWriter, r *http.Request) {
	wantJSON := strings.Contains(r.Header.Get("Accept"), "application/json")
	// A browser says where a form post came from; refuse posts from other sites' pages.
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		s.refuse(w, wantJSON, http.StatusForbidden, "cross-site form posts are refused")
		return
	}
	if o := r.Header.Get("Origin"); o != "" && o != s.base {
		s.refuse(w, wantJSON, http.StatusForbidden, "form posts from another origin are refused")
		return
	}
	_, _ = io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, 4<<10))

	s.mu.Lock()
	cs, newly, err := s.pay(r.PathValue("id"))
	var view *sessionView
	var out map[string]any
	if err == nil {
		view = s.view(cs)
		out = map[string]any{"id": cs.ID, "status": cs.Status, "payment_status": cs.PaymentStatus,
			"payment_intent": cs.PaymentIntentID, "newly_authorized": newly, "notice": noticeText}
	}
	s.mu.Unlock()
	switch {
	case errors.Is(err, errUnknownSession):
		s.refuse(w, wantJSON, http.StatusNotFound, err.Error())
		return
	case errors.Is(err, errSessionExpired):
		s.refuse(w, wantJSON, http.StatusConflict, err.Error())
		return
	case err != nil:
		s.logf(slog.LevelError, "checkout authorization failed", "err", err)
		s.refuse(w, wantJSON, http.StatusInternalServerError, "the local Stripe test double could not complete the checkout")
		return
	}
	if wantJSON {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
		return
	}
	if cs.SuccessURL != "" {
		http.Redirect(w, r, strings.ReplaceAll(cs.SuccessURL, "{CHECKOUT_SESSION_ID}", cs.ID), http.StatusSeeOther)
		return
	}
	renderPage(w, http.StatusOK, pageData{Title: "Payment authorized", Message: "The test authorization is in place.", Session: view})
}

func (s *Server) refuse(w http.ResponseWriter, wantJSON bool, status int, msg string) {
	if wantJSON {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"message": msg}, "notice": noticeText})
		return
	}
	renderPage(w, status, pageData{Title: "Checkout refused", Message: msg})
}

// pay completes a session as a test card payment would. Paying a completed session again
// changes nothing (newly reports whether this call did it). Callers hold s.mu.
func (s *Server) pay(id string) (*sessionRec, bool, error) {
	s.advanceClock()
	cs, newly, err := s.completeSession(id)
	if newly || len(s.outbox) > 0 {
		if cerr := s.commit(); cerr != nil && err == nil {
			err = cerr
		}
	}
	return cs, newly, err
}

func (s *Server) completeSession(id string) (*sessionRec, bool, error) {
	cs, ok := s.st.Sessions[id]
	if !ok {
		return nil, false, errUnknownSession
	}
	switch cs.Status {
	case "complete":
		return cs, false, nil
	case "expired":
		return nil, false, errSessionExpired
	}
	tmpl, err := s.mockTemplate("/v1/payment_intents/pi_localtemplate")
	if err != nil {
		return nil, false, fmt.Errorf("payment intent template: %w", err)
	}
	pi := &intentRec{
		ID:            "pi_" + randToken(24),
		Template:      tmpl,
		Created:       s.now().Unix(),
		Amount:        cs.AmountTotal,
		Currency:      cs.Currency,
		CaptureMethod: cs.CaptureMethod,
		Status:        "requires_payment_method",
		Description:   cs.IntentDescription,
		Metadata:      cs.IntentMetadata,
	}
	pi.ClientSecret = pi.ID + "_secret_" + randToken(25)
	if err := s.authorize(pi); err != nil {
		return nil, false, err
	}
	s.st.Intents[pi.ID] = pi
	cs.Status = "complete"
	cs.PaymentIntentID = pi.ID
	cs.PaymentStatus = "paid"
	if pi.CaptureMethod == "manual" {
		cs.PaymentStatus = "unpaid" // Stripe: funds are only held until the capture
	}
	s.emit("checkout.session.completed", s.renderSession(cs, nil))
	if pi.Status == "requires_capture" {
		s.emit("payment_intent.amount_capturable_updated", s.renderIntent(pi, nil))
	} else {
		s.emit("payment_intent.succeeded", s.renderIntent(pi, nil))
	}
	s.logf(slog.LevelInfo, "checkout completed with a test card (no money moves)", "session", cs.ID, "payment_intent", pi.ID, "status", pi.Status)
	return cs, true, nil
}

// PaidSession is MarkPaid's result.
type PaidSession struct {
	SessionID       string `json:"id"`
	Status          string `json:"status"`
	PaymentStatus   string `json:"payment_status"`
	PaymentIntentID string `json:"payment_intent"`
	// NewlyAuthorized is false when the session had already been completed.
	NewlyAuthorized bool `json:"newly_authorized"`
}

// MarkPaid completes a local test checkout without a browser, as if the payer pressed
// "Authorize" on the page at checkoutURL (a session's url). It works only against the local
// test double: real Stripe checkout links are refused.
func MarkPaid(ctx context.Context, checkoutURL string) (PaidSession, error) {
	var out PaidSession
	if err := checkLoopbackURL(checkoutURL); err != nil {
		return out, fmt.Errorf("mark paid: only the local Stripe test double's checkout links can be completed this way: %w", err)
	}
	u, _ := url.Parse(checkoutURL)
	if !strings.HasPrefix(u.Path, "/checkout/cs_") {
		return out, fmt.Errorf("mark paid: %q is not a local checkout link (want .../checkout/cs_...)", checkoutURL)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), nil)
	if err != nil {
		return out, fmt.Errorf("mark paid: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return out, fmt.Errorf("mark paid: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return out, fmt.Errorf("mark paid: read answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct{ Message string } `json:"error"`
		}
		_ = json.Unmarshal(body, &e)
		return out, fmt.Errorf("mark paid: local Stripe test double answered HTTP %d: %s", resp.StatusCode, e.Error.Message)
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return out, fmt.Errorf("mark paid: decode answer: %w", err)
	}
	return out, nil
}

// FormatAmount renders minor units for people, e.g. 1999 usd -> "USD 19.99", 500 jpy -> "JPY 500".
func FormatAmount(minor int64, currency string) string {
	cur := strings.ToUpper(currency)
	digits := 2
	switch strings.ToLower(currency) {
	case "bif", "clp", "djf", "gnf", "jpy", "kmf", "krw", "mga", "pyg", "rwf", "ugx", "vnd", "vuv", "xaf", "xof", "xpf":
		digits = 0
	case "bhd", "jod", "kwd", "omr", "tnd":
		digits = 3
	}
	sign := ""
	if minor < 0 {
		sign, minor = "-", -minor
	}
	if digits == 0 {
		return fmt.Sprintf("%s %s%d", cur, sign, minor)
	}
	div := int64(100)
	if digits == 3 {
		div = 1000
	}
	return fmt.Sprintf("%s %s%d.%0*d", cur, sign, minor/div, digits, minor%div)
}
