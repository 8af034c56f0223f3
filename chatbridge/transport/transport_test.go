package transport

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signoff/signoff/chatbridge/chatproto"
	"github.com/signoff/signoff/chatbridge/envelope"
	"github.com/signoff/signoff/chatbridge/identity"
	"github.com/signoff/signoff/chatbridge/internal/uuid4"
)

func ids(t *testing.T) (alice, bob *identity.Identity) {
	t.Helper()
	a, err := identity.FromSeed("alice recovery password", 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := identity.FromSeed("bob recovery password", 0)
	if err != nil {
		t.Fatal(err)
	}
	return a, b
}

type recorder struct {
	mu  sync.Mutex
	got []*envelope.Envelope
}

func (r *recorder) deliver(_ context.Context, e *envelope.Envelope) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, e)
	return nil
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

func TestInboxMatchesReferenceResponses(t *testing.T) {
	alice, bob := ids(t)
	rec := &recorder{}
	inbox := &Inbox{Hosts: func(a string) bool { return a == bob.Address() }, Deliver: rec.deliver, MaxBody: 4096}
	srv := httptest.NewServer(inbox)
	defer srv.Close()

	sender := &Sender{Identity: alice}
	good, err := sender.Seal(bob.Address(), uuid4.New(), chatproto.ChatMessage{MsgID: uuid4.New(), Timestamp: time.Now(), Content: []chatproto.Content{chatproto.TextContent{Text: "hi"}}}, chatproto.ProtocolDigest)
	if err != nil {
		t.Fatal(err)
	}
	goodBody, _ := good.Encode()

	wrongTarget, _ := sender.Seal(alice.Address(), uuid4.New(), chatproto.ErrorMessage{Error: "x"}, "")
	wrongTargetBody, _ := wrongTarget.Encode()

	forged := *good
	forgedSig, _ := bob.SignDigest(make([]byte, 32))
	forged.Signature = &forgedSig
	forgedBody, _ := forged.Encode()

	unsigned := *good
	unsigned.Signature = nil
	unsignedBody, _ := unsigned.Encode()

	userSender := *good
	userSender.Sender, _ = identity.NewUserAddress()
	userSender.Signature = nil
	userBody, _ := userSender.Encode()

	nonV4 := strings.Replace(string(goodBody), good.Session, "6f1c2a3b-4d5e-1f60-8a7b-9c0d1e2f3a4b", 1)

	type tc struct {
		name, method, path, ct, body string
		ua                           bool
		status                       int
		want                         string
		delivered                    bool
	}
	cases := []tc{
		{"valid", "POST", "/submit", "application/json", string(goodBody), false, 200, `{}`, true},
		{"charset content-type", "POST", "/submit", "application/json; charset=utf-8", string(goodBody), false, 200, `{}`, true},
		{"user sender skips signature", "POST", "/submit", "application/json", string(userBody), false, 200, `{}`, true},
		{"other path", "POST", "/other", "application/json", string(goodBody), false, 404, `{"error": "not found"}`, false},
		{"no content-type", "POST", "/submit", "", string(goodBody), false, 400, `{"error": "missing header: content-type"}`, false},
		{"browser probe", "GET", "/submit", "", "", true, 200, `{"status": "OK - Agent is running"}`, false},
		{"text content-type", "POST", "/submit", "text/plain", string(goodBody), false, 400, `{"error": "invalid content-type"}`, false},
		{"invalid json", "POST", "/submit", "application/json", `{"version":`, false, 400, `{"error": "empty or invalid payload"}`, false},
		{"empty body", "POST", "/submit", "application/json", ``, false, 400, `{"error": "empty or invalid payload"}`, false},
		{"non-v4 session", "POST", "/submit", "application/json", nonV4, false, 400, `{"error": "contents do not match envelope schema"}`, false},
		{"forged signature", "POST", "/submit", "application/json", string(forgedBody), false, 400, `{"error": "Signature verification failed"}`, false},
		{"missing signature", "POST", "/submit", "application/json", string(unsignedBody), false, 400, `{"error": "Envelope signature is missing"}`, false},
		{"wrong target", "POST", "/submit", "application/json", string(wrongTargetBody), false, 400, `{"error": "unable to route envelope"}`, false},
		{"too large", "POST", "/submit", "application/json", `{"pad":"` + strings.Repeat("x", 5000) + `"}`, false, 413, `{"error": "payload too large"}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := rec.count()
			req, _ := http.NewRequest(c.method, srv.URL+c.path, strings.NewReader(c.body))
			req.Header.Del("User-Agent")
			if c.ua {
				req.Header.Set("User-Agent", "Mozilla/5.0")
			} else {
				req.Header.Set("User-Agent", "") // Go's client omits an empty User-Agent
			}
			if c.ct != "" {
				req.Header.Set("Content-Type", c.ct)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.status || string(b) != c.want {
				t.Fatalf("got %d %s, want %d %s", resp.StatusCode, b, c.status, c.want)
			}
			if resp.Header.Get("Access-Control-Allow-Origin") != "*" {
				t.Fatal("CORS header missing")
			}
			if delivered := rec.count() > before; delivered != c.delivered {
				t.Fatalf("delivered = %v, want %v", delivered, c.delivered)
			}
		})
	}
}

func TestInboxHeadAndOptions(t *testing.T) {
	_, bob := ids(t)
	ready := true
	inbox := &Inbox{Hosts: func(a string) bool { return a == bob.Address() }, Ready: func() bool { return ready }}
	srv := httptest.NewServer(inbox)
	defer srv.Close()
	probe := func(addr string) (int, string, string) {
		req, _ := http.NewRequest(http.MethodHead, srv.URL+"/submit", nil)
		if addr != "" {
			req.Header.Set("x-uagents-address", addr)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("x-uagents-status"), resp.Header.Get("x-uagents-response-time-hint")
	}
	if c, s, h := probe(bob.Address()); c != 200 || s != "ready" || h != "5" {
		t.Fatalf("ready probe: %d %q %q", c, s, h)
	}
	if _, s, _ := probe(""); s != "indeterminate" {
		t.Fatalf("no address: %q", s)
	}
	if _, s, _ := probe("agent1qqq"); s != "not-ready" {
		t.Fatalf("unknown address: %q", s)
	}
	ready = false
	if _, s, _ := probe(bob.Address()); s != "not-ready" {
		t.Fatalf("shutting down: %q", s)
	}
	req, _ := http.NewRequest(http.MethodOptions, srv.URL+"/anything", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 {
		t.Fatalf("OPTIONS: %d", resp.StatusCode)
	}
}

func TestSenderRetriesThenDelivers(t *testing.T) {
	alice, bob := ids(t)
	var calls atomic.Int32
	rec := &recorder{}
	inbox := &Inbox{Hosts: func(string) bool { return true }, Deliver: rec.deliver}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		inbox.ServeHTTP(w, r)
	}))
	defer srv.Close()
	s := &Sender{Identity: alice, Resolver: Static{bob.Address(): {srv.URL + "/submit"}}, Retry: Retry{Attempts: 4, Initial: time.Millisecond}}
	env, err := s.Send(context.Background(), bob.Address(), uuid4.New(), chatproto.ErrorMessage{Error: "x"}, "")
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	if calls.Load() != 3 || rec.count() != 1 || *rec.got[0].Signature != *env.Signature {
		t.Fatalf("calls=%d delivered=%d", calls.Load(), rec.count())
	}
	if env.ProtocolDigest != nil || env.Expires == nil {
		t.Fatalf("proactive send should have null protocol_digest and an expiry: %+v", env)
	}
}

func TestSenderStopsOnRejectionAndGivesUp(t *testing.T) {
	alice, bob := ids(t)
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, BodyUnroutable)
	}))
	defer srv.Close()
	s := &Sender{Identity: alice, Resolver: Static{bob.Address(): {srv.URL}}, Retry: Retry{Attempts: 5, Initial: time.Millisecond}}
	_, err := s.Send(context.Background(), bob.Address(), uuid4.New(), chatproto.ErrorMessage{Error: "x"}, "")
	var rej *RejectedError
	if !errors.As(err, &rej) || rej.Status != 400 || calls.Load() != 1 {
		t.Fatalf("err=%v calls=%d", err, calls.Load())
	}

	// Nothing resolvable: bounded attempts, then an error.
	var resolves atomic.Int32
	counting := resolverFunc(func(ctx context.Context, a string) ([]string, error) {
		resolves.Add(1)
		return nil, errors.New("unknown")
	})
	s2 := &Sender{Identity: alice, Resolver: FirstOf{counting, Static{}}, Retry: Retry{Attempts: 3, Initial: time.Millisecond}}
	if _, err := s2.Send(context.Background(), bob.Address(), uuid4.New(), chatproto.ErrorMessage{Error: "x"}, ""); err == nil || resolves.Load() != 3 {
		t.Fatalf("err=%v resolves=%d", err, resolves.Load())
	}
}

type resolverFunc func(ctx context.Context, a string) ([]string, error)

func (f resolverFunc) Resolve(ctx context.Context, a string) ([]string, error) { return f(ctx, a) }
