// Package transport moves envelopes over HTTP the way uagents does: an inbound /submit handler
// with the reference server's checks, status codes and bodies (uagents/asgi.py), and a sender
// that signs, resolves and POSTs with bounded retries (communication.py).
package transport

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/signoff/signoff/chatbridge/chatproto"
	"github.com/signoff/signoff/chatbridge/envelope"
	"github.com/signoff/signoff/chatbridge/identity"
	"github.com/signoff/signoff/chatbridge/internal/pyjson"
)

// DefaultMaxBody caps inbound envelope bodies. The reference has no limit; ours is stated so a
// peer cannot make us buffer arbitrary amounts (chat envelopes are a few KiB).
const DefaultMaxBody = 256 << 10

// ResponseTimeHint is RESPONSE_TIME_HINT_SECONDS, advertised on readiness probes.
const ResponseTimeHint = 5

// Reference response bodies (Python json.dumps, hence the space after the colon).
const (
	BodyOK             = `{}`
	BodyNotFound       = `{"error": "not found"}`
	BodyMissingCT      = `{"error": "missing header: content-type"}`
	BodyRunning        = `{"status": "OK - Agent is running"}`
	BodyInvalidCT      = `{"error": "invalid content-type"}`
	BodyInvalidPayload = `{"error": "empty or invalid payload"}`
	BodySchema         = `{"error": "contents do not match envelope schema"}`
	BodyUnroutable     = `{"error": "unable to route envelope"}`
	BodyTooLarge       = `{"error": "payload too large"}`
	BodyBusy           = `{"error": "agent busy, retry later"}` // ours: queue full or shutting down
)

// Inbox is the /submit endpoint of an agent. Checks run in the reference's order; only an
// envelope that passes all of them reaches Deliver, after which the sender gets 200 {} and
// handling continues asynchronously.
type Inbox struct {
	// Hosts reports whether envelopes for address are served here (dispatcher.contains).
	Hosts func(address string) bool
	// Deliver receives each accepted envelope. It must not block for long: the HTTP reply
	// waits for it. An error (e.g. a full work queue) answers 503 so the sender retries.
	Deliver func(ctx context.Context, env *envelope.Envelope) error
	// Respond, when set, takes the place of Deliver for an envelope sent on a sync connection
	// (header x-uagents-connection: sync, as uagents' send_sync_message sends): it returns the
	// encoded response envelope the reference puts in the 200 body, or nil for {}. An error
	// answers 503 as Deliver's does.
	Respond func(ctx context.Context, env *envelope.Envelope) ([]byte, error)
	// Path is the submit path; default "/submit".
	Path string
	// MaxBody caps the request body; default DefaultMaxBody. Larger bodies get 413.
	MaxBody int64
	// Ready reports readiness for HEAD probes (false during shutdown); nil means ready.
	Ready func() bool
}

// The header a uagents sender sets to wait for the reply on the same connection.
const (
	HeaderConnection = "X-Uagents-Connection"
	ConnectionSync   = "sync"
)

// ErrRetryLater marks a refusal that is temporary (a full queue, shutdown): the envelope
// should be offered again later rather than dropped.
var ErrRetryLater = errors.New("retry later")

// ErrorBody renders {"error": msg} exactly as the reference's json.dumps does.
func ErrorBody(msg string) string {
	b, _ := pyjson.Marshal(pyjson.Obj{{K: "error", V: msg}}, pyjson.Spaced)
	return string(b)
}

func (in *Inbox) path() string {
	if in.Path == "" {
		return "/submit"
	}
	return in.Path
}

// ServeHTTP implements the reference's ASGI server for agent messages.
func (in *Inbox) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "*")
	h.Set("Access-Control-Allow-Credentials", "false")

	if r.Method == http.MethodOptions {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if r.URL.Path != in.path() {
		writeJSON(w, http.StatusNotFound, BodyNotFound)
		return
	}
	if r.Method == http.MethodHead {
		in.readiness(w, r)
		return
	}
	ct, hasCT := r.Header["Content-Type"]
	if !hasCT {
		if _, browser := r.Header["User-Agent"]; browser {
			writeJSON(w, http.StatusOK, BodyRunning)
			return
		}
		writeJSON(w, http.StatusBadRequest, BodyMissingCT)
		return
	}
	if !strings.Contains(strings.Join(ct, ","), "application/json") {
		writeJSON(w, http.StatusBadRequest, BodyInvalidCT)
		return
	}
	limit := in.MaxBody
	if limit <= 0 {
		limit = DefaultMaxBody
	}
	if r.ContentLength > limit {
		writeJSON(w, http.StatusRequestEntityTooLarge, BodyTooLarge)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeJSON(w, http.StatusRequestEntityTooLarge, BodyTooLarge)
			return
		}
		writeJSON(w, http.StatusBadRequest, BodyInvalidPayload)
		return
	}
	env, err := envelope.Decode(body)
	switch {
	case errors.Is(err, envelope.ErrInvalidJSON):
		writeJSON(w, http.StatusBadRequest, BodyInvalidPayload)
		return
	case err != nil:
		writeJSON(w, http.StatusBadRequest, BodySchema)
		return
	}
	if !identity.IsUserAddress(env.Sender) {
		if err := env.Verify(); err != nil {
			writeJSON(w, http.StatusBadRequest, ErrorBody(chatproto.PeerText(err)))
			return
		}
	}
	if in.Hosts == nil || !in.Hosts(env.Target) {
		writeJSON(w, http.StatusBadRequest, BodyUnroutable)
		return
	}
	if in.Respond != nil && r.Header.Get(HeaderConnection) == ConnectionSync {
		reply, err := in.Respond(r.Context(), env)
		if err != nil {
			writeJSON(w, http.StatusServiceUnavailable, BodyBusy)
			return
		}
		if reply != nil {
			writeJSON(w, http.StatusOK, string(reply))
			return
		}
		writeJSON(w, http.StatusOK, BodyOK)
		return
	}
	if in.Deliver != nil {
		if err := in.Deliver(r.Context(), env); err != nil {
			writeJSON(w, http.StatusServiceUnavailable, BodyBusy)
			return
		}
	}
	writeJSON(w, http.StatusOK, BodyOK)
}

func (in *Inbox) readiness(w http.ResponseWriter, r *http.Request) {
	switch addr, ok := r.Header["X-Uagents-Address"]; {
	case in.Ready != nil && !in.Ready():
		w.Header().Set("x-uagents-status", "not-ready")
	case !ok:
		w.Header().Set("x-uagents-status", "indeterminate")
	case in.Hosts == nil || !in.Hosts(strings.Join(addr, ",")):
		w.Header().Set("x-uagents-status", "not-ready")
	default:
		w.Header().Set("x-uagents-status", "ready")
		w.Header().Set("x-uagents-response-time-hint", strconv.Itoa(ResponseTimeHint))
	}
	w.WriteHeader(http.StatusOK)
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}
