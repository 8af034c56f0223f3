package localstripe

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// authorizationValidity is how long a card authorization can be captured; Stripe cancels an
// uncaptured card PaymentIntent after about 7 days (cancellation_reason "automatic").
const authorizationValidity = 7 * 24 * time.Hour

// sessionLifetime is how long an unpaid Checkout Session stays open by default (Stripe: 24 h).
const sessionLifetime = 24 * time.Hour

// cancelableStatuses are the PaymentIntent statuses Stripe allows a cancel from.
var cancelableStatuses = []string{"requires_payment_method", "requires_capture", "requires_confirmation", "requires_action", "processing"}

var lineItemKey = regexp.MustCompile(`^line_items\[(\d+)\]\[(.+)\]$`)

// metadataParam collects prefix[key]=value pairs (e.g. metadata[contract_id]).
func metadataParam(params url.Values, prefix string) map[string]string {
	out := map[string]string{}
	for k, vs := range params {
		if rest, ok := strings.CutPrefix(k, prefix+"["); ok && strings.HasSuffix(rest, "]") && len(vs) > 0 {
			key := strings.TrimSuffix(rest, "]")
			if !strings.Contains(key, "[") {
				out[key] = vs[0]
			}
		}
	}
	return out
}

func invalid(param, format string, args ...any) apiReply {
	return errReply(http.StatusBadRequest, stripeErr{Type: "invalid_request_error", Param: param, Message: fmt.Sprintf(format, args...)})
}

// createSession handles POST /v1/checkout/sessions in payment mode with price_data line items.
func (s *Server) createSession(req *apiRequest) apiReply {
	p := req.params
	if mode := p.Get("mode"); mode != "payment" {
		return invalid("mode", "The local Stripe test double models mode=payment only (got %q).", mode)
	}
	// Group line_items[N][...] by index.
	items := map[int]map[string]string{}
	for k, vs := range p {
		m := lineItemKey.FindStringSubmatch(k)
		if m == nil || len(vs) == 0 {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		if items[n] == nil {
			items[n] = map[string]string{}
		}
		items[n][m[2]] = vs[0]
	}
	if len(items) == 0 {
		return invalid("line_items", "line_items is required in payment mode.")
	}
	idx := make([]int, 0, len(items))
	for n := range items {
		idx = append(idx, n)
	}
	sort.Ints(idx)
	var total int64
	currency, name := "", ""
	for _, n := range idx {
		it := items[n]
		if it["price"] != "" || it["price_data][unit_amount"] == "" {
			return invalid(fmt.Sprintf("line_items[%d]", n), "The local Stripe test double needs line_items[%d][price_data][unit_amount] (stored Price objects are not modelled).", n)
		}
		amt, err := strconv.ParseInt(it["price_data][unit_amount"], 10, 64)
		if err != nil || amt < 0 {
			return invalid(fmt.Sprintf("line_items[%d][price_data][unit_amount]", n), "Invalid integer: %s", it["price_data][unit_amount"])
		}
		qty := int64(1)
		if q := it["quantity"]; q != "" {
			if qty, err = strconv.ParseInt(q, 10, 64); err != nil || qty < 1 {
				return invalid(fmt.Sprintf("line_items[%d][quantity]", n), "Invalid quantity: %s", q)
			}
		}
		cur := strings.ToLower(it["price_data][currency"])
		if currency != "" && cur != currency {
			return invalid("line_items", "All line items must use the same currency.")
		}
		currency = cur
		if name == "" {
			name = it["price_data][product_data][name"]
		}
		total += amt * qty
	}
	if total <= 0 {
		return invalid("line_items", "The total amount must be greater than zero.")
	}
	now := s.now()
	expires := now.Add(sessionLifetime).Unix()
	if e := p.Get("expires_at"); e != "" {
		v, err := strconv.ParseInt(e, 10, 64)
		if err != nil || v <= now.Unix() {
			return invalid("expires_at", "expires_at must be a future timestamp.")
		}
		expires = v
	}
	captureMethod := p.Get("payment_intent_data[capture_method]")
	if captureMethod == "" {
		captureMethod = "automatic"
	}
	rec := &sessionRec{
		ID:                "cs_test_" + randToken(56),
		Template:          req.mockBody,
		Created:           now.Unix(),
		ExpiresAt:         expires,
		Status:            "open",
		PaymentStatus:     "unpaid",
		AmountTotal:       total,
		Currency:          currency,
		ProductName:       name,
		Metadata:          metadataParam(p, "metadata"),
		ClientReferenceID: p.Get("client_reference_id"),
		SuccessURL:        p.Get("success_url"),
		CancelURL:         p.Get("cancel_url"),
		CaptureMethod:     captureMethod,
		IntentMetadata:    metadataParam(p, "payment_intent_data[metadata]"),
		IntentDescription: p.Get("payment_intent_data[description]"),
	}
	s.st.Sessions[rec.ID] = rec
	s.logf(slog.LevelInfo, "checkout session created", "id", rec.ID, "amount", rec.AmountTotal, "currency", rec.Currency, "capture_method", rec.CaptureMethod)
	return apiReply{status: http.StatusOK, body: s.renderSession(rec, req.expand), keep: true}
}

func (s *Server) getSession(id string, req *apiRequest) apiReply {
	rec, ok := s.st.Sessions[id]
	if !ok {
		return notFound("checkout.session", "session", id)
	}
	return apiReply{status: http.StatusOK, body: s.renderSession(rec, req.expand)}
}

func (s *Server) expireSession(id string, req *apiRequest) apiReply {
	rec, ok := s.st.Sessions[id]
	if !ok {
		return notFound("checkout.session", "session", id)
	}
	if rec.Status != "open" {
		return apiReply{status: http.StatusBadRequest, keep: true, body: errReply(http.StatusBadRequest, stripeErr{
			Type:    "invalid_request_error",
			Message: fmt.Sprintf("Only Checkout Sessions with a status in [\"open\"] can be expired. This Checkout Session has a status of %q.", rec.Status),
		}).body}
	}
	rec.Status = "expired"
	s.emit("checkout.session.expired", s.renderSession(rec, nil))
	s.logf(slog.LevelInfo, "checkout session expired on request", "id", id)
	return apiReply{status: http.StatusOK, body: s.renderSession(rec, req.expand), keep: true}
}

// createIntent handles POST /v1/payment_intents. With confirm=true and a payment_method the
// card is treated as authorized at once (test cards always succeed here).
func (s *Server) createIntent(req *apiRequest) apiReply {
	p := req.params
	amount, err := strconv.ParseInt(p.Get("amount"), 10, 64)
	if err != nil || amount <= 0 {
		return invalid("amount", "amount must be a positive integer.")
	}
	capture := p.Get("capture_method")
	if capture == "" {
		capture = "automatic"
	}
	rec := &intentRec{
		ID:            "pi_" + randToken(24),
		Template:      req.mockBody,
		Created:       s.now().Unix(),
		Amount:        amount,
		Currency:      strings.ToLower(p.Get("currency")),
		CaptureMethod: capture,
		Status:        "requires_payment_method",
		Description:   p.Get("description"),
		Metadata:      metadataParam(p, "metadata"),
		PaymentMethod: p.Get("payment_method"),
	}
	rec.ClientSecret = rec.ID + "_secret_" + randToken(25)
	if rec.PaymentMethod != "" {
		rec.Status = "requires_confirmation"
		if p.Get("confirm") == "true" {
			if err := s.authorize(rec); err != nil {
				return errReply(http.StatusInternalServerError, stripeErr{Type: "api_error", Message: err.Error()})
			}
		}
	}
	s.st.Intents[rec.ID] = rec
	s.logf(slog.LevelInfo, "payment intent created", "id", rec.ID, "status", rec.Status, "amount", rec.Amount)
	return apiReply{status: http.StatusOK, body: s.renderIntent(rec, req.expand), keep: true}
}

// authorize confirms a PaymentIntent with a test card: a charge is made; with manual capture
// it waits in requires_capture until captured or canceled, otherwise it succeeds at once.
func (s *Server) authorize(pi *intentRec) error {
	tmpl, err := s.mockTemplate("/v1/charges/ch_localtemplate")
	if err != nil {
		return fmt.Errorf("charge template: %w", err)
	}
	now := s.now()
	if pi.PaymentMethod == "" {
		pi.PaymentMethod = "pm_" + randToken(24)
	}
	ch := &chargeRec{
		ID:              "ch_" + randToken(24),
		Template:        tmpl,
		Created:         now.Unix(),
		Amount:          pi.Amount,
		Currency:        pi.Currency,
		PaymentIntentID: pi.ID,
		PaymentMethod:   pi.PaymentMethod,
		Metadata:        pi.Metadata,
	}
	pi.LatestChargeID = ch.ID
	if pi.CaptureMethod == "manual" {
		ch.CaptureBefore = now.Add(authorizationValidity).Unix()
		pi.Status = "requires_capture"
		pi.AmountCapturable = pi.Amount
	} else {
		ch.Captured, ch.AmountCaptured = true, pi.Amount
		pi.Status = "succeeded"
		pi.AmountReceived = pi.Amount
	}
	s.st.Charges[ch.ID] = ch
	return nil
}

func (s *Server) getIntent(id string, req *apiRequest) apiReply {
	rec, ok := s.st.Intents[id]
	if !ok {
		return notFound("payment_intent", "intent", id)
	}
	return apiReply{status: http.StatusOK, body: s.renderIntent(rec, req.expand)}
}

func (s *Server) unexpectedState(pi *intentRec, verb string, allowed []string) apiReply {
	return apiReply{status: http.StatusBadRequest, keep: true, body: errReply(http.StatusBadRequest, stripeErr{
		Type:          "invalid_request_error",
		Code:          "payment_intent_unexpected_state",
		Message:       fmt.Sprintf("This PaymentIntent could not be %s because it has a status of %s. Only a PaymentIntent with one of the following statuses may be %s: %s.", verb, pi.Status, verb, strings.Join(allowed, ", ")),
		PaymentIntent: s.renderIntent(pi, nil),
	}).body}
}

// captureIntent handles POST /v1/payment_intents/{id}/capture.
func (s *Server) captureIntent(id string, req *apiRequest) apiReply {
	pi, ok := s.st.Intents[id]
	if !ok {
		return notFound("payment_intent", "intent", id)
	}
	if pi.Status != "requires_capture" {
		s.logf(slog.LevelWarn, "capture refused", "id", id, "status", pi.Status)
		return s.unexpectedState(pi, "captured", []string{"requires_capture"})
	}
	amount := pi.AmountCapturable
	if v := req.params.Get("amount_to_capture"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return invalid("amount_to_capture", "Invalid integer: %s", v)
		}
		if n > pi.AmountCapturable {
			return errReply(http.StatusBadRequest, stripeErr{Type: "invalid_request_error", Code: "amount_too_large", Param: "amount_to_capture",
				Message: fmt.Sprintf("The amount to capture (%d) is greater than the amount capturable (%d).", n, pi.AmountCapturable)})
		}
		amount = n
	}
	pi.Status = "succeeded"
	pi.AmountReceived = amount
	pi.AmountCapturable = 0
	if ch := s.st.Charges[pi.LatestChargeID]; ch != nil {
		ch.Captured, ch.AmountCaptured = true, amount
	}
	s.emit("payment_intent.succeeded", s.renderIntent(pi, nil))
	s.logf(slog.LevelInfo, "payment intent captured (test: no money moves)", "id", id, "amount", amount)
	return apiReply{status: http.StatusOK, body: s.renderIntent(pi, req.expand), keep: true}
}

// cancelIntent handles POST /v1/payment_intents/{id}/cancel.
func (s *Server) cancelIntent(id string, req *apiRequest) apiReply {
	pi, ok := s.st.Intents[id]
	if !ok {
		return notFound("payment_intent", "intent", id)
	}
	allowed := false
	for _, st := range cancelableStatuses {
		allowed = allowed || pi.Status == st
	}
	if !allowed {
		s.logf(slog.LevelWarn, "cancel refused", "id", id, "status", pi.Status)
		return s.unexpectedState(pi, "canceled", cancelableStatuses)
	}
	s.cancel(pi, req.params.Get("cancellation_reason"), s.now().Unix())
	s.logf(slog.LevelInfo, "authorization canceled (test: no money moves)", "id", id, "reason", pi.CancellationReason)
	return apiReply{status: http.StatusOK, body: s.renderIntent(pi, req.expand), keep: true}
}

func (s *Server) cancel(pi *intentRec, reason string, at int64) {
	pi.Status = "canceled"
	pi.AmountCapturable = 0
	pi.CanceledAt = at
	pi.CancellationReason = reason
	s.emit("payment_intent.canceled", s.renderIntent(pi, nil))
}

func (s *Server) getCharge(id string, req *apiRequest) apiReply {
	ch, ok := s.st.Charges[id]
	if !ok {
		return notFound("charge", "id", id)
	}
	return apiReply{status: http.StatusOK, body: s.renderCharge(ch)}
}

// advanceClock applies what time does on Stripe: open sessions past expires_at expire, and
// uncaptured authorizations past capture_before are canceled automatically.
func (s *Server) advanceClock() {
	now := s.now().Unix()
	for _, cs := range s.st.Sessions {
		if cs.Status == "open" && now >= cs.ExpiresAt {
			cs.Status = "expired"
			s.emit("checkout.session.expired", s.renderSession(cs, nil))
			s.logf(slog.LevelInfo, "checkout session expired", "id", cs.ID)
		}
	}
	for _, pi := range s.st.Intents {
		ch := s.st.Charges[pi.LatestChargeID]
		if pi.Status == "requires_capture" && ch != nil && ch.CaptureBefore > 0 && now >= ch.CaptureBefore {
			s.cancel(pi, "automatic", ch.CaptureBefore)
			s.logf(slog.LevelInfo, "authorization lapsed uncaptured and was canceled automatically", "id", pi.ID)
		}
	}
}

// fromTemplate decodes a stored stripe-mock response; the double's fields are laid over it.
func fromTemplate(raw json.RawMessage) map[string]any {
	m := map[string]any{}
	_ = json.Unmarshal(raw, &m) // a broken template still yields a valid object from the overlay
	return m
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullableTime(t int64) any {
	if t == 0 {
		return nil
	}
	return t
}

// renderSession is stripe-mock's session JSON with the stateful fields replaced.
func (s *Server) renderSession(cs *sessionRec, expand []string) map[string]any {
	m := fromTemplate(cs.Template)
	// Fixture values that would mislead: no conversion, recovery, invoice or customer here.
	for _, k := range []string{"currency_conversion", "after_expiration", "invoice", "subscription", "setup_intent",
		"payment_link", "shipping_cost", "recovered_from", "customer", "customer_email", "client_secret",
		"collected_information", "shipping_details", "customer_details", "payment_method_configuration_details"} {
		m[k] = nil
	}
	m["id"] = cs.ID
	m["object"] = "checkout.session"
	m["mode"] = "payment"
	m["ui_mode"] = "hosted"
	m["livemode"] = false
	m["created"] = cs.Created
	m["expires_at"] = cs.ExpiresAt
	m["status"] = cs.Status
	m["payment_status"] = cs.PaymentStatus
	m["amount_subtotal"] = cs.AmountTotal
	m["amount_total"] = cs.AmountTotal
	m["currency"] = cs.Currency
	m["metadata"] = orEmpty(cs.Metadata)
	m["client_reference_id"] = nullable(cs.ClientReferenceID)
	m["success_url"] = nullable(cs.SuccessURL)
	m["cancel_url"] = nullable(cs.CancelURL)
	m["payment_method_types"] = []string{"card"}
	m["total_details"] = map[string]any{"amount_discount": 0, "amount_shipping": 0, "amount_tax": 0}
	m["url"] = nil
	if cs.Status == "open" {
		m["url"] = s.base + "/checkout/" + cs.ID
	}
	if cs.Status == "complete" {
		m["customer_details"] = map[string]any{"email": nil, "name": "Local test payer", "phone": nil, "tax_exempt": "none", "tax_ids": []any{}, "address": nil}
	}
	m["payment_intent"] = nil
	if cs.PaymentIntentID != "" {
		m["payment_intent"] = cs.PaymentIntentID
		if sub, ok := subExpand(expand, "payment_intent"); ok {
			if pi := s.st.Intents[cs.PaymentIntentID]; pi != nil {
				m["payment_intent"] = s.renderIntent(pi, sub)
			}
		}
	}
	return m
}

// renderIntent is stripe-mock's PaymentIntent JSON with the stateful fields replaced.
func (s *Server) renderIntent(pi *intentRec, expand []string) map[string]any {
	m := fromTemplate(pi.Template)
	for _, k := range []string{"last_payment_error", "next_action", "processing", "transfer_data", "review",
		"shipping", "customer", "application", "on_behalf_of", "invoice", "automatic_payment_methods",
		"payment_method_configuration_details", "receipt_email", "setup_future_usage", "transfer_group"} {
		m[k] = nil
	}
	m["id"] = pi.ID
	m["object"] = "payment_intent"
	m["livemode"] = false
	m["created"] = pi.Created
	m["amount"] = pi.Amount
	m["amount_capturable"] = pi.AmountCapturable
	m["amount_received"] = pi.AmountReceived
	m["currency"] = pi.Currency
	m["capture_method"] = pi.CaptureMethod
	m["confirmation_method"] = "automatic"
	m["status"] = pi.Status
	m["description"] = nullable(pi.Description)
	m["metadata"] = orEmpty(pi.Metadata)
	m["client_secret"] = pi.ClientSecret
	m["canceled_at"] = nullableTime(pi.CanceledAt)
	m["cancellation_reason"] = nullable(pi.CancellationReason)
	m["payment_method"] = nullable(pi.PaymentMethod)
	m["payment_method_types"] = []string{"card"}
	m["latest_charge"] = nil
	if pi.LatestChargeID != "" {
		m["latest_charge"] = pi.LatestChargeID
		if _, ok := subExpand(expand, "latest_charge"); ok {
			if ch := s.st.Charges[pi.LatestChargeID]; ch != nil {
				m["latest_charge"] = s.renderCharge(ch)
			}
		}
	}
	return m
}

// renderCharge is stripe-mock's charge JSON with the stateful fields replaced.
func (s *Server) renderCharge(ch *chargeRec) map[string]any {
	m := fromTemplate(ch.Template)
	for _, k := range []string{"balance_transaction", "receipt_url", "receipt_number", "receipt_email", "review",
		"customer", "description", "failure_code", "failure_message", "application", "application_fee",
		"on_behalf_of", "transfer_data", "transfer_group", "source_transfer", "invoice", "shipping"} {
		m[k] = nil
	}
	m["id"] = ch.ID
	m["object"] = "charge"
	m["livemode"] = false
	m["created"] = ch.Created
	m["amount"] = ch.Amount
	m["amount_captured"] = ch.AmountCaptured
	m["captured"] = ch.Captured
	m["currency"] = ch.Currency
	m["paid"] = true
	m["status"] = "succeeded"
	m["payment_intent"] = ch.PaymentIntentID
	m["payment_method"] = ch.PaymentMethod
	m["metadata"] = orEmpty(ch.Metadata)
	m["billing_details"] = map[string]any{"address": nil, "email": nil, "name": "Local test payer", "phone": nil}
	m["outcome"] = map[string]any{"network_status": "approved_by_network", "reason": nil, "risk_level": "normal",
		"seller_message": "Payment complete.", "type": "authorized"}
	// The fixture lists a returned-funds entry that never happened here; the list is empty.
	m["refunds"] = map[string]any{"object": "list", "data": []any{}, "has_more": false}
	card, _ := nestedMap(m, "payment_method_details", "card")
	card["amount_authorized"] = ch.Amount
	card["brand"] = "visa"
	card["last4"] = "4242"
	card["capture_before"] = nullableTime(ch.CaptureBefore)
	card["wallet"] = nil
	card["overcapture"] = map[string]any{"maximum_amount_capturable": ch.Amount, "status": "unavailable"}
	m["payment_method_details"] = map[string]any{"type": "card", "card": card}
	return m
}

// nestedMap returns m[a][b] as a map, or a new empty map when absent.
func nestedMap(m map[string]any, a, b string) (map[string]any, bool) {
	if outer, ok := m[a].(map[string]any); ok {
		if inner, ok := outer[b].(map[string]any); ok {
			return inner, true
		}
	}
	return map[string]any{}, false
}

func orEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
