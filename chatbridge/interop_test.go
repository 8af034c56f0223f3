package chatbridge_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff/signoff/chatbridge"
	"github.com/signoff/signoff/chatbridge/almanac"
	"github.com/signoff/signoff/chatbridge/chatproto"
	"github.com/signoff/signoff/chatbridge/envelope"
	"github.com/signoff/signoff/chatbridge/identity"
	"github.com/signoff/signoff/chatbridge/internal/uuid4"
	"github.com/signoff/signoff/chatbridge/transport"
	"github.com/signoff/signoff/internal/spareport"
)

const setupHint = "run `go tool task chat:setup` from the repository root (creates .cache/chat-venv with uagents==0.26.1 uagents-core==0.4.12)"

// venvPython finds the project-local venv made by tasks/chat.yml.
func venvPython(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("SIGNOFF_CHAT_VENV"); p != "" {
		return filepath.Join(p, "bin", "python")
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("repository root not found; %s", setupHint)
		}
		dir = parent
	}
	py := filepath.Join(dir, ".cache", "chat-venv", "bin", "python")
	if _, err := os.Stat(py); err != nil {
		t.Fatalf("Python reference peer missing (%s): %s", py, setupHint)
	}
	out, err := exec.Command(py, "-c", "import importlib.metadata as m; print(m.version('uagents'), m.version('uagents-core'))").Output()
	if err != nil || strings.TrimSpace(string(out)) != "0.26.1 0.4.12" {
		t.Fatalf("chat venv has uagents/uagents-core %q (%v), want 0.26.1 0.4.12: %s", strings.TrimSpace(string(out)), err, setupHint)
	}
	return py
}

type peerEvent struct {
	Event        string `json:"event"`
	Address      string `json:"address"`
	Sender       string `json:"sender"`
	MsgID        string `json:"msg_id"`
	Acknowledged string `json:"acknowledged"`
	Text         string `json:"text"`
	Session      string `json:"session"`
	Status       string `json:"status"`
	Host         string `json:"host"`
	Matches      bool   `json:"matches"`
	InSession    bool   `json:"in_session"`
}

type interopConversation struct {
	inbound chan chatbridge.Inbound
	acks    chan chatbridge.Ack
}

func (c *interopConversation) OnText(_ context.Context, in chatbridge.Inbound) ([]string, error) {
	c.inbound <- in
	return []string{"Go bridge got: " + in.Text}, nil
}

func (c *interopConversation) OnAck(_ context.Context, a chatbridge.Ack) { c.acks <- a }

// TestInteropWithPythonReference runs the real uAgents reference (uagents 0.26.1) against the
// bridge on loopback: Python -> Go ChatMessage with ack and reply verified on the Python side,
// then Go -> Python with the Python agent acknowledging. The Agentverse/Almanac URLs of the
// Python agent point at the Go almanac.Registry, which also checks its signed registration,
// status update and manifest.
func TestInteropWithPythonReference(t *testing.T) {
	if testing.Short() {
		t.Skip("interop with the Python uAgents reference skipped in -short mode; " + setupHint + ", then run without -short")
	}
	py := venvPython(t)
	script, err := filepath.Abs(filepath.Join("testdata", "interop_peer.py"))
	if err != nil {
		t.Fatal(err)
	}

	reg := &almanac.Registry{}
	stub := httptest.NewServer(reg)
	defer stub.Close()

	bridgeID, err := identity.FromSeed("signoff interop bridge", 0)
	if err != nil {
		t.Fatal(err)
	}
	conv := &interopConversation{inbound: make(chan chatbridge.Inbound, 4), acks: make(chan chatbridge.Ack, 4)}
	b, err := chatbridge.New(chatbridge.Config{Identity: bridgeID, Conversation: conv, Resolver: reg,
		Retry: transport.Retry{Attempts: 10, Initial: 100 * time.Millisecond, Max: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	bridgeSrv := httptest.NewServer(b)
	defer bridgeSrv.Close()
	defer func() {
		// Undeliverable ErrorMessages to throwaway test senders may still be retrying.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = b.Close(ctx)
	}()
	att, err := almanac.NewAttestation(bridgeID, identity.MainnetPrefix, []string{bridgeSrv.URL + "/submit"}, []string{chatproto.ProtocolDigest}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(att); err != nil {
		t.Fatal(err)
	}

	port, err := spareport.One() // the peer binds it itself, seconds later
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(py, script, "--stub", stub.URL, "--bridge", b.Address(), "--port", strconv.Itoa(port), "--seed", "chatbridge interop python peer")
	cmd.Dir = t.TempDir() // uagents writes its key-value store into the working directory
	// The script's socket guard covers Python sockets; native clients (gRPC C-core, used by
	// cosmpy for the Fetch.ai chain) and proxy-aware ones (requests) are sent to a loopback trap that
	// records any attempt instead of reaching the internet.
	trap := newTrap(t)
	cmd.Env = append(os.Environ(), "PYTHONUNBUFFERED=1",
		"HTTP_PROXY="+trap.url, "HTTPS_PROXY="+trap.url, "http_proxy="+trap.url, "https_proxy="+trap.url,
		"grpc_proxy="+trap.url, "NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var logMu sync.Mutex
	var stderr strings.Builder
	cmd.Stderr = &lockedWriter{mu: &logMu, w: &stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // the process this test started, by its PID
		_ = cmd.Wait()
	})
	events := make(chan peerEvent, 64)
	var transcript strings.Builder
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			logMu.Lock()
			transcript.WriteString(line + "\n")
			logMu.Unlock()
			if rest, ok := strings.CutPrefix(line, "PEER "); ok {
				var e peerEvent
				if json.Unmarshal([]byte(rest), &e) == nil {
					events <- e
				}
			}
		}
		close(events)
	}()
	dump := func() string {
		logMu.Lock()
		defer logMu.Unlock()
		return fmt.Sprintf("\n--- peer stdout ---\n%s--- peer stderr ---\n%s--- stub requests ---\n%s", transcript.String(), stderr.String(), strings.Join(reg.Requests(), "\n"))
	}
	deadline := time.After(90 * time.Second) // first run imports cosmpy and friends
	var pyAddr string
	var seen []peerEvent
	waitEvent := func(what string, match func(peerEvent) bool) peerEvent {
		t.Helper()
		for _, e := range seen {
			if match(e) {
				return e
			}
		}
		for {
			select {
			case e, ok := <-events:
				if !ok {
					t.Fatalf("peer exited while waiting for %s%s", what, dump())
				}
				if e.Event == "blocked" {
					t.Fatalf("the Python peer tried to reach %q (not loopback)%s", e.Host, dump())
				}
				if e.Event == "started" {
					pyAddr = e.Address
				}
				seen = append(seen, e)
				if match(e) {
					return e
				}
			case <-deadline:
				t.Fatalf("timed out waiting for %s%s", what, dump())
			}
		}
	}
	waitGo := func(what string, ch any) any {
		t.Helper()
		switch c := ch.(type) {
		case chan chatbridge.Inbound:
			select {
			case v := <-c:
				return v
			case <-deadline:
			}
		case chan chatbridge.Ack:
			select {
			case v := <-c:
				return v
			case <-deadline:
			}
		}
		t.Fatalf("timed out waiting for %s%s", what, dump())
		return nil
	}

	// Python -> Go.
	started := waitEvent("the peer to start", func(e peerEvent) bool { return e.Event == "started" })
	if !identity.IsAgentAddress(started.Address) {
		t.Fatalf("peer address %q", started.Address)
	}
	in := waitGo("the Python ChatMessage at the bridge", conv.inbound).(chatbridge.Inbound)
	if in.Sender != pyAddr || in.Text != "hello from the python reference" {
		t.Fatalf("inbound from Python = %+v", in)
	}
	sent := waitEvent("the peer's send status", func(e peerEvent) bool { return e.Event == "sent" })
	if sent.Status != "delivered" || sent.MsgID != in.MsgID || sent.Session != in.Session {
		t.Fatalf("peer send = %+v, bridge saw msg %s session %s", sent, in.MsgID, in.Session)
	}
	ack := waitEvent("the peer to receive the bridge's ack", func(e peerEvent) bool { return e.Event == "ack" })
	if !ack.Matches || ack.Sender != b.Address() || ack.Acknowledged != in.MsgID {
		t.Fatalf("ack at peer = %+v", ack)
	}
	reply := waitEvent("the peer to receive the reply", func(e peerEvent) bool {
		return e.Event == "chat" && strings.HasPrefix(e.Text, "Go bridge got: ")
	})
	if reply.Text != "Go bridge got: hello from the python reference" || !reply.InSession || reply.Sender != b.Address() {
		t.Fatalf("reply at peer = %+v", reply)
	}
	if a := waitGo("the peer's ack of the reply", conv.acks).(chatbridge.Ack); a.MsgID != reply.MsgID || a.Sender != pyAddr {
		t.Fatalf("ack at bridge = %+v, want msg %s", a, reply.MsgID)
	}

	// The library's send_sync_message gets the bridge's signed acknowledgement in the HTTP
	// response (the library verifies it, or reports FAILED); the reply follows as usual.
	syncRes := waitEvent("the peer's sync send", func(e peerEvent) bool { return e.Event == "sync" })
	if syncRes.Status != "acknowledged" || syncRes.Acknowledged != syncRes.MsgID {
		t.Fatalf("send_sync_message = %+v%s", syncRes, dump())
	}
	syncIn := waitGo("the sync ChatMessage at the bridge", conv.inbound).(chatbridge.Inbound)
	if syncIn.MsgID != syncRes.MsgID || syncIn.Text != "sync hello from the python reference" {
		t.Fatalf("sync inbound = %+v, peer sent %s", syncIn, syncRes.MsgID)
	}
	waitEvent("the reply to the sync send", func(e peerEvent) bool { return e.Event == "chat" && e.Text == "Go bridge got: "+syncIn.Text })
	if a := waitGo("the peer's ack of the sync reply", conv.acks).(chatbridge.Ack); a.Sender != pyAddr {
		t.Fatalf("ack of the sync reply = %+v", a)
	}

	// Go -> Python: a proactive message, resolved through the stub where the peer registered.
	session := uuid4.New()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pingID, err := b.Send(ctx, pyAddr, session, "ping from the Go bridge")
	if err != nil {
		t.Fatalf("send to Python: %v%s", err, dump())
	}
	ping := waitEvent("the peer to receive the ping", func(e peerEvent) bool { return e.Event == "chat" && e.Text == "ping from the Go bridge" })
	if ping.MsgID != pingID || ping.Session != session {
		t.Fatalf("ping at peer = %+v", ping)
	}
	if a := waitGo("the peer's ack of the ping", conv.acks).(chatbridge.Ack); a.MsgID != pingID || a.Session != session {
		t.Fatalf("ping ack = %+v, want %s", a, pingID)
	}

	// The stub verified the peer's signed registration and status, and its published manifest
	// hashes to the chat protocol digest computed in Go.
	rec, ok := reg.Lookup(pyAddr)
	if !ok || !rec.Active || rec.Prefix != "agent" || len(rec.Endpoints) != 1 || rec.Endpoints[0].URL != fmt.Sprintf("http://127.0.0.1:%d/submit", port) {
		t.Fatalf("peer record = %+v%s", rec, dump())
	}
	if !slices.Contains(rec.Protocols, chatproto.ProtocolDigest) {
		t.Fatalf("peer protocols = %v", rec.Protocols)
	}
	if _, ok := reg.Manifest(chatproto.ProtocolDigest); !ok {
		t.Fatalf("peer's manifest not accepted%s", dump())
	}
	compareRejections(t, bridgeSrv.URL+"/submit", b.Address(), fmt.Sprintf("http://127.0.0.1:%d/submit", port), pyAddr)

	if n := trap.count(); n > 0 {
		t.Fatalf("the Python peer opened %d connection(s) through the proxy trap (an attempt to leave loopback)%s", n, dump())
	}
	for _, r := range reg.Requests() {
		known := r == "POST /v1/almanac/agents" || r == "POST /v1/almanac/manifests" ||
			r == "POST /v1/almanac/agents/"+pyAddr+"/status" || strings.HasPrefix(r, "GET /v1/almanac/agents/")
		if !known {
			t.Errorf("unexpected request to the stub: %s", r)
		}
	}
}

// compareRejections sends the same malformed or hostile requests to the Go bridge and to the
// Python reference server and requires identical statuses and bodies.
func compareRejections(t *testing.T, goURL, goAddr, pyURL, pyAddr string) {
	t.Helper()
	tester, _ := identity.Generate()
	other, _ := identity.Generate()
	type req struct {
		method, ct, body string
		header           map[string]string
	}
	build := func(target string) map[string]req {
		s := &transport.Sender{Identity: tester}
		msg := chatproto.ChatMessage{Timestamp: time.Now(), MsgID: uuid4.New(), Content: []chatproto.Content{chatproto.TextContent{Text: "x"}}}
		good, err := s.Seal(target, uuid4.New(), msg, chatproto.ProtocolDigest)
		if err != nil {
			t.Fatal(err)
		}
		forged := *good
		d, _ := good.Digest()
		sig, _ := other.SignDigest(d)
		forged.Signature = &sig
		unsigned := *good
		unsigned.Signature = nil
		wrongTarget, _ := s.Seal(other.Address(), uuid4.New(), msg, "")
		unknown, _ := envelope.New(tester.Address(), target, uuid4.New(), chatproto.ChatMessageDigest,
			[]byte(`{"timestamp": "2025-01-02T03:04:05+00:00", "msg_id": "`+uuid4.New()+`", "content": [{"type": "image", "url": "x"}]}`))
		_ = unknown.Sign(tester)
		enc := func(e *envelope.Envelope) string { b, _ := e.Encode(); return string(b) }
		goodJSON := enc(good)
		return map[string]req{
			"forged signature":     {"POST", "application/json", enc(&forged), nil},
			"missing signature":    {"POST", "application/json", enc(&unsigned), nil},
			"wrong target":         {"POST", "application/json", enc(wrongTarget), nil},
			"non-v4 session":       {"POST", "application/json", strings.Replace(goodJSON, good.Session, "6f1c2a3b-4d5e-1f60-8a7b-9c0d1e2f3a4b", 1), nil},
			"invalid JSON":         {"POST", "application/json", `{"version": 1,`, nil},
			"empty body":           {"POST", "application/json", ``, nil},
			"wrong content-type":   {"POST", "text/plain", goodJSON, nil},
			"no content-type":      {"POST", "", goodJSON, nil},
			"unknown content type": {"POST", "application/json", enc(unknown), nil},
			"readiness":            {"HEAD", "", "", map[string]string{"x-uagents-address": target}},
			"readiness, stranger":  {"HEAD", "", "", map[string]string{"x-uagents-address": other.Address()}},
			"readiness, anonymous": {"HEAD", "", "", nil},
		}
	}
	do := func(url string, r req) string {
		hr, _ := http.NewRequest(r.method, url, strings.NewReader(r.body))
		hr.Header.Set("User-Agent", "") // Go would otherwise send one; the reference treats it as a browser probe
		if r.ct != "" {
			hr.Header.Set("Content-Type", r.ct)
		}
		for k, v := range r.header {
			hr.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(hr)
		if err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return fmt.Sprintf("%d %s status=%q hint=%q", resp.StatusCode, body, resp.Header.Get("x-uagents-status"), resp.Header.Get("x-uagents-response-time-hint"))
	}
	goReqs, pyReqs := build(goAddr), build(pyAddr)
	for name := range goReqs {
		got, want := do(goURL, goReqs[name]), do(pyURL, pyReqs[name])
		if got != want {
			t.Errorf("%s: Go bridge answered %s, Python reference %s", name, got, want)
		}
	}
	// Paths other than /submit.
	if got, want := do(strings.TrimSuffix(goURL, "/submit")+"/nope", req{method: "POST", ct: "application/json", body: "{}"}),
		do(strings.TrimSuffix(pyURL, "/submit")+"/nope", req{method: "POST", ct: "application/json", body: "{}"}); got != want {
		t.Errorf("unknown path: Go %s, Python %s", got, want)
	}
}

// trap is a loopback listener used as every proxy of the Python process: a connection to it
// means something tried to reach a non-loopback host.
type trap struct {
	url   string
	mu    sync.Mutex
	conns int
}

func newTrap(t *testing.T) *trap {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tr := &trap{url: "http://" + ln.Addr().String()}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			tr.mu.Lock()
			tr.conns++
			tr.mu.Unlock()
			c.Close()
		}
	}()
	return tr
}

func (tr *trap) count() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.conns
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *strings.Builder
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
