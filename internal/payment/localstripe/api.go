package localstripe

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v76"
)

// maxRequestBody caps an API request body; Stripe's own requests are a few KB.
const maxRequestBody = 1 << 20

// mockKey is the key shown to stripe-mock, which accepts any key shaped like a test key.
const mockKey = "sk_test_123"

// idempotencyTTL is how long a key's response is replayed (Stripe: at least 24 hours).
const idempotencyTTL = 24 * time.Hour

// apiReply is what a route produces: a status and a JSON body.
type apiReply struct {
	status int
	body   any
	// keep marks a reply Stripe would store under the idempotency key: the endpoint ran.
	keep bool
}

// apiRequest is one parsed API call.
type apiRequest struct {
	method   string
	path     string
	params   url.Values
	expand   []string
	idemKey  string
	mockBody []byte // stripe-mock's 2xx JSON for this same request: the response template
}

// serveAPI handles /v1/*: authenticate, check the request with stripe-mock (its 4xx answers
// pass through unchanged), replay idempotent retries, then apply the double's state.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	reqID := "req_" + randToken(14)
	w.Header().Set("Request-Id", reqID)
	w.Header().Set("Stripe-Version", stripe.APIVersion)
	w.Header().Set("X-Local-Test-Double", "no real Stripe, no money moves")

	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBody))
	if err != nil {
		writeStripeError(w, http.StatusRequestEntityTooLarge, stripeErr{Type: "invalid_request_error",
			Message: fmt.Sprintf("Request body is larger than %d bytes (local Stripe test double limit).", maxRequestBody)})
		return
	}

	s.mu.Lock()
	apiKey := s.st.APIKey
	s.mu.Unlock()
	key, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if user, _, ok := r.BasicAuth(); ok {
		key = user // curl -u sk_test_...: works on Stripe too
	}
	if key != "" && subtle.ConstantTimeCompare([]byte(key), []byte(apiKey)) != 1 {
		writeStripeError(w, http.StatusUnauthorized, stripeErr{Type: "invalid_request_error",
			Message: "Invalid API Key provided: " + maskKey(key)})
		return
	}
	// An empty key falls through to stripe-mock, which answers with Stripe's own 401.

	var params url.Values
	if r.Method == http.MethodPost {
		params, err = url.ParseQuery(string(body))
	} else {
		params = r.URL.Query()
	}
	if err != nil {
		writeStripeError(w, http.StatusBadRequest, stripeErr{Type: "invalid_request_error",
			Message: "Invalid request body: " + err.Error()})
		return
	}
	req := &apiRequest{method: r.Method, path: r.URL.Path, params: params, expand: expandPaths(params)}
	if r.Method == http.MethodPost {
		req.idemKey = strings.TrimSpace(r.Header.Get("Idempotency-Key"))
	}

	// One request at a time: the state is small and this keeps idempotency exact.
	s.mu.Lock()
	defer s.mu.Unlock()

	fp := fingerprint(r.Method, r.URL.Path, params)
	scope := ""
	if req.idemKey != "" {
		scope = apiKey + "\x00" + req.idemKey
		if rec, ok := s.st.Idempotency[scope]; ok && s.now().Unix()-rec.Created < int64(idempotencyTTL/time.Second) {
			if rec.Fingerprint != fp {
				writeStripeError(w, http.StatusBadRequest, stripeErr{Type: "idempotency_error",
					Message: fmt.Sprintf("Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '%s' if you meant to execute a different request.", req.idemKey)})
				return
			}
			w.Header().Set("Idempotency-Key", req.idemKey)
			w.Header().Set("Idempotent-Replayed", "true")
			writeRaw(w, rec.Status, rec.Body)
			s.logf(slog.LevelInfo, "idempotent replay", "method", r.Method, "path", r.URL.Path, "status", rec.Status)
			return
		}
		w.Header().Set("Idempotency-Key", req.idemKey)
	}

	status, mockBody, err := s.forward(r, body)
	if err != nil {
		s.logf(slog.LevelError, "stripe-mock unreachable", "err", err)
		writeStripeError(w, http.StatusBadGateway, stripeErr{Type: "api_error",
			Message: "The local Stripe test double could not reach stripe-mock: " + err.Error()})
		return
	}
	if status >= 400 && status < 500 {
		writeRaw(w, status, mockBody) // Stripe's own validation verdict, unchanged
		s.logf(slog.LevelInfo, "request refused by stripe-mock validation", "method", r.Method, "path", r.URL.Path, "status", status)
		return
	}
	if status >= 300 {
		writeStripeError(w, http.StatusBadGateway, stripeErr{Type: "api_error",
			Message: fmt.Sprintf("stripe-mock answered HTTP %d", status)})
		return
	}
	req.mockBody = mockBody

	s.advanceClock()
	reply := s.route(req)
	out, err := json.Marshal(reply.body)
	if err != nil {
		writeStripeError(w, http.StatusInternalServerError, stripeErr{Type: "api_error", Message: "encode response: " + err.Error()})
		return
	}
	if scope != "" && reply.keep {
		s.st.Idempotency[scope] = &idemRec{Created: s.now().Unix(), Fingerprint: fp, Status: reply.status, Body: out}
	}
	if r.Method == http.MethodPost || len(s.outbox) > 0 {
		s.pruneIdempotency()
		if err := s.commit(); err != nil {
			writeStripeError(w, http.StatusInternalServerError, stripeErr{Type: "api_error", Message: "The local Stripe test double could not save its state."})
			return
		}
	}
	s.logf(slog.LevelInfo, "request", "method", r.Method, "path", r.URL.Path, "status", reply.status)
	writeRaw(w, reply.status, out)
}

// forward sends the request unchanged to stripe-mock, which validates it against Stripe's
// OpenAPI spec, and returns its status and body.
func (s *Server) forward(r *http.Request, body []byte) (int, []byte, error) {
	u := s.mockURL + r.URL.Path
	if r.URL.RawQuery != "" {
		u += "?" + r.URL.RawQuery
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, u, bytes.NewReader(body))
	if err != nil {
		return 0, nil, fmt.Errorf("build stripe-mock request: %w", err)
	}
	for _, h := range []string{"Content-Type", "Stripe-Version"} {
		if v := r.Header.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	// The double has already checked the key; stripe-mock only wants one that looks like a
	// test key, and its own 401 is kept for a request that sent none.
	if r.Header.Get("Authorization") != "" {
		req.Header.Set("Authorization", "Bearer "+mockKey)
	}
	return s.doMock(req)
}

// mockTemplate fetches stripe-mock's fixture for a resource, used as the template for an
// object the double creates outside a request that has one (e.g. on checkout completion).
func (s *Server) mockTemplate(path string) (json.RawMessage, error) {
	req, err := http.NewRequest(http.MethodGet, s.mockURL+path, nil)
	if err != nil {
		return nil, fmt.Errorf("build stripe-mock request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+mockKey)
	status, body, err := s.doMock(req)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("stripe-mock GET %s: HTTP %d", path, status)
	}
	return body, nil
}

func (s *Server) doMock(req *http.Request) (int, []byte, error) {
	resp, err := s.fwd.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("stripe-mock %s %s: %w", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return 0, nil, fmt.Errorf("read stripe-mock response: %w", err)
	}
	return resp.StatusCode, b, nil
}

// route dispatches a validated request to the stateful handlers.
func (s *Server) route(req *apiRequest) apiReply {
	parts := strings.Split(strings.Trim(req.path, "/"), "/") // ["v1", ...]
	p := parts[1:]
	switch {
	case req.method == http.MethodPost && len(p) == 2 && p[0] == "checkout" && p[1] == "sessions":
		return s.createSession(req)
	case req.method == http.MethodGet && len(p) == 3 && p[0] == "checkout" && p[1] == "sessions":
		return s.getSession(p[2], req)
	case req.method == http.MethodPost && len(p) == 4 && p[0] == "checkout" && p[1] == "sessions" && p[3] == "expire":
		return s.expireSession(p[2], req)
	case req.method == http.MethodPost && len(p) == 1 && p[0] == "payment_intents":
		return s.createIntent(req)
	case req.method == http.MethodGet && len(p) == 2 && p[0] == "payment_intents":
		return s.getIntent(p[1], req)
	case req.method == http.MethodPost && len(p) == 3 && p[0] == "payment_intents" && p[2] == "capture":
		return s.captureIntent(p[1], req)
	case req.method == http.MethodPost && len(p) == 3 && p[0] == "payment_intents" && p[2] == "cancel":
		return s.cancelIntent(p[1], req)
	case req.method == http.MethodGet && len(p) == 2 && p[0] == "charges":
		return s.getCharge(p[1], req)
	}
	return errReply(http.StatusNotFound, stripeErr{Type: "invalid_request_error",
		Message: fmt.Sprintf("The local Stripe test double does not model %s %s (it models Checkout Sessions in payment mode, PaymentIntents and their charges). %s", req.method, req.path, noticeText)})
}

// expandPaths collects expand[] / expand[N] parameters.
func expandPaths(params url.Values) []string {
	var out []string
	for k, vs := range params {
		if k == "expand" || strings.HasPrefix(k, "expand[") {
			out = append(out, vs...)
		}
	}
	sort.Strings(out)
	return out
}

// subExpand returns the expansions below field ("payment_intent.latest_charge" ->
// "latest_charge") and whether field itself is expanded.
func subExpand(expand []string, field string) ([]string, bool) {
	var sub []string
	hit := false
	for _, e := range expand {
		if e == field {
			hit = true
		} else if rest, ok := strings.CutPrefix(e, field+"."); ok {
			hit = true
			sub = append(sub, rest)
		}
	}
	return sub, hit
}

// fingerprint identifies a request's parameters for idempotency (url.Values.Encode sorts keys).
func fingerprint(method, path string, params url.Values) string {
	h := sha256.Sum256([]byte(method + " " + path + "\n" + params.Encode()))
	return hex.EncodeToString(h[:])
}

func (s *Server) pruneIdempotency() {
	cut := s.now().Add(-idempotencyTTL).Unix()
	for k, rec := range s.st.Idempotency {
		if rec.Created < cut {
			delete(s.st.Idempotency, k)
		}
	}
}

// stripeErr is Stripe's error object; extra fields (payment_intent) are added when relevant.
type stripeErr struct {
	Type          string         `json:"type"`
	Code          string         `json:"code,omitempty"`
	DocURL        string         `json:"doc_url,omitempty"`
	Message       string         `json:"message"`
	Param         string         `json:"param,omitempty"`
	PaymentIntent map[string]any `json:"payment_intent,omitempty"`
}

func errReply(status int, e stripeErr) apiReply {
	if e.Code != "" && e.DocURL == "" {
		e.DocURL = "https://stripe.com/docs/error-codes/" + strings.ReplaceAll(e.Code, "_", "-")
	}
	return apiReply{status: status, body: map[string]any{"error": e}}
}

// notFound is Stripe's 404 resource_missing.
func notFound(kind, param, id string) apiReply {
	return errReply(http.StatusNotFound, stripeErr{Type: "invalid_request_error", Code: "resource_missing",
		Param: param, Message: fmt.Sprintf("No such %s: '%s'", kind, id)})
}

func writeStripeError(w http.ResponseWriter, status int, e stripeErr) {
	b, _ := json.Marshal(errReply(status, e).body)
	writeRaw(w, status, b)
}

func writeRaw(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// maskKey shows only a key's prefix and last four characters, like Stripe's own message.
func maskKey(k string) string {
	if len(k) <= 12 {
		return "****"
	}
	return k[:8] + "****" + k[len(k)-4:]
}

// commit saves the state and then sends the events the change produced. Events of a change
// that could not be saved are dropped rather than announced. Callers hold s.mu.
func (s *Server) commit() error {
	if err := saveState(s.cfg.DataDir, s.st); err != nil {
		s.outbox = nil
		s.logf(slog.LevelError, "could not persist state", "err", err)
		return err
	}
	s.flushEvents()
	return nil
}
