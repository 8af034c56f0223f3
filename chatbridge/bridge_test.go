package chatbridge

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff/signoff/chatbridge/chatproto"
	"github.com/signoff/signoff/chatbridge/envelope"
	"github.com/signoff/signoff/chatbridge/identity"
	"github.com/signoff/signoff/chatbridge/internal/uuid4"
	"github.com/signoff/signoff/chatbridge/transport"
)

const waitFor = 10 * time.Second

// fakeConversation records calls and answers "got: <text>", or fails on request.
type fakeConversation struct {
	mu      sync.Mutex
	calls   []Inbound
	acks    chan Ack
	entered chan struct{} // one send per OnText call, before it waits on gate
	gate    chan struct{} // when non-nil, OnText waits for it
	err     error
}

func newFake() *fakeConversation {
	return &fakeConversation{acks: make(chan Ack, 16), entered: make(chan struct{}, 64)}
}

func (f *fakeConversation) OnText(ctx context.Context, in Inbound) ([]string, error) {
	f.mu.Lock()
	f.calls = append(f.calls, in)
	gate, err := f.gate, f.err
	f.mu.Unlock()
	select {
	case f.entered <- struct{}{}:
	default:
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if err != nil {
		return nil, err
	}
	return []string{"got: " + in.Text, "second reply"}, nil
}

func (f *fakeConversation) set(gate chan struct{}, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gate, f.err = gate, err
}

func (f *fakeConversation) OnAck(_ context.Context, a Ack) { f.acks <- a }

func (f *fakeConversation) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

// peer is a minimal Go agent standing in for ASI:One or another uagents peer.
type peer struct {
	id     *identity.Identity
	srv    *httptest.Server
	got    chan *envelope.Envelope
	sender *transport.Sender
	extra  sync.Map // extra addresses this inbox hosts (user... senders)
}

func newPeer(t *testing.T) *peer {
	t.Helper()
	id, err := identity.Generate()
	if err != nil {
		t.Fatal(err)
	}
	p := &peer{id: id, got: make(chan *envelope.Envelope, 64)}
	inbox := &transport.Inbox{
		Hosts: func(a string) bool {
			_, extra := p.extra.Load(a)
			return a == id.Address() || extra
		},
		Deliver: func(_ context.Context, e *envelope.Envelope) error {
			p.got <- e
			return nil
		},
	}
	p.srv = httptest.NewServer(inbox)
	t.Cleanup(p.srv.Close)
	return p
}

func (p *peer) url() string { return p.srv.URL + "/submit" }

func (p *peer) next(t *testing.T) *envelope.Envelope {
	t.Helper()
	select {
	case e := <-p.got:
		if !identity.IsUserAddress(e.Target) {
			if err := e.Verify(); err != nil {
				t.Fatalf("envelope from bridge does not verify: %v", err)
			}
		}
		return e
	case <-time.After(waitFor):
		t.Fatal("timed out waiting for an envelope from the bridge")
		return nil
	}
}

type fixture struct {
	bridge *Bridge
	srv    *httptest.Server
	conv   *fakeConversation
	peer   *peer
}

func newFixture(t *testing.T, mutate func(*Config, *peer)) *fixture {
	t.Helper()
	p := newPeer(t)
	id, err := identity.FromSeed("signoff test bridge", 0)
	if err != nil {
		t.Fatal(err)
	}
	conv := newFake()
	static := transport.Static{p.id.Address(): {p.url()}}
	cfg := Config{Identity: id, Conversation: conv, Resolver: static, Retry: transport.Retry{Attempts: 3, Initial: time.Millisecond}}
	if mutate != nil {
		mutate(&cfg, p)
	}
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(b)
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		_ = b.Close(ctx)
	})
	p.sender = &transport.Sender{Identity: p.id, Resolver: transport.Static{id.Address(): {srv.URL + "/submit"}}, Retry: transport.Retry{Attempts: 1}}
	return &fixture{bridge: b, srv: srv, conv: conv, peer: p}
}

func chatMsg(text string, extra ...chatproto.Content) chatproto.ChatMessage {
	return chatproto.ChatMessage{Timestamp: time.Now(), MsgID: uuid4.New(), Content: append([]chatproto.Content{chatproto.TextContent{Text: text}}, extra...)}
}

func decodeChat(t *testing.T, e *envelope.Envelope) *chatproto.ChatMessage {
	t.Helper()
	if e.SchemaDigest != chatproto.ChatMessageDigest {
		t.Fatalf("expected a ChatMessage, got schema %s", e.SchemaDigest)
	}
	p, _ := e.DecodePayload()
	m, err := chatproto.DecodeChatMessage(p)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func decodeAck(t *testing.T, e *envelope.Envelope) *chatproto.ChatAcknowledgement {
	t.Helper()
	if e.SchemaDigest != chatproto.ChatAcknowledgementDigest {
		t.Fatalf("expected a ChatAcknowledgement, got schema %s", e.SchemaDigest)
	}
	p, _ := e.DecodePayload()
	a, err := chatproto.DecodeAcknowledgement(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestChatRoundTripAckThenReplies(t *testing.T) {
	f := newFixture(t, nil)
	session := uuid4.New()
	msg := chatMsg("hello bridge", chatproto.StartSessionContent{}, chatproto.MetadataContent{Metadata: map[string]string{"k": "v"}})
	if _, err := f.peer.sender.Send(context.Background(), f.bridge.Address(), session, msg, chatproto.ProtocolDigest); err != nil {
		t.Fatal(err)
	}
	ackEnv := f.peer.next(t)
	ack := decodeAck(t, ackEnv)
	if ack.AcknowledgedMsgID != msg.MsgID || ackEnv.Session != session || ackEnv.Sender != f.bridge.Address() {
		t.Fatalf("ack mismatch: %+v %+v", ack, ackEnv)
	}
	if ackEnv.ProtocolDigest == nil || *ackEnv.ProtocolDigest != chatproto.ProtocolDigest || ackEnv.Expires == nil {
		t.Fatalf("ack envelope should carry the chat protocol digest and an expiry: %+v", ackEnv)
	}
	for _, want := range []string{"got: hello bridge", "second reply"} {
		e := f.peer.next(t)
		reply := decodeChat(t, e)
		if reply.Text() != want || e.Session != session || reply.MsgID == msg.MsgID {
			t.Fatalf("reply %q (session %s), want %q", reply.Text(), e.Session, want)
		}
	}
	if f.conv.callCount() != 1 {
		t.Fatalf("conversation called %d times", f.conv.callCount())
	}
	in := f.conv.calls[0]
	if in.Sender != f.peer.id.Address() || in.Session != session || in.MsgID != msg.MsgID || in.Text != "hello bridge" ||
		!in.StartSession || in.EndSession || in.Metadata["k"] != "v" {
		t.Fatalf("inbound = %+v", in)
	}
}

func TestDuplicateMsgIDIsNotHandledTwice(t *testing.T) {
	f := newFixture(t, func(c *Config, _ *peer) { c.Workers = 1 })
	session := uuid4.New()
	env, err := f.peer.sender.Seal(f.bridge.Address(), session, chatMsg("once"), chatproto.ProtocolDigest)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := f.peer.sender.Deliver(context.Background(), env); err != nil {
			t.Fatal(err)
		}
	}
	// The same msg_id re-signed in a fresh envelope is a duplicate too.
	p, _ := env.DecodePayload()
	again, _ := envelope.New(f.peer.id.Address(), f.bridge.Address(), session, chatproto.ChatMessageDigest, p)
	_ = again.Sign(f.peer.id)
	if err := f.peer.sender.Deliver(context.Background(), again); err != nil {
		t.Fatal(err)
	}
	// Barrier: with one worker, jobs run in order, so once this message's replies arrive any
	// duplicate would already have been handled.
	if _, err := f.peer.sender.Send(context.Background(), f.bridge.Address(), session, chatMsg("barrier"), ""); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for range 6 { // 2 acks + 4 replies
		e := f.peer.next(t)
		kinds[e.SchemaDigest]++
	}
	if f.conv.callCount() != 2 || kinds[chatproto.ChatAcknowledgementDigest] != 2 {
		t.Fatalf("calls=%d kinds=%v", f.conv.callCount(), kinds)
	}
	select {
	case e := <-f.peer.got:
		t.Fatalf("unexpected extra envelope %s", e.SchemaDigest)
	default:
	}
}

func postRaw(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestBadInputStartsNothing(t *testing.T) {
	// A user... sender passes the HTTP layer unsigned; its ErrorMessage is routed to the peer.
	user, _ := identity.NewUserAddress()
	f := newFixture(t, func(c *Config, p *peer) {
		c.Workers = 1
		c.Resolver.(transport.Static)[user] = []string{p.url()}
		p.extra.Store(user, true)
	})
	url := f.srv.URL + "/submit"
	session := uuid4.New()
	good, err := f.peer.sender.Seal(f.bridge.Address(), session, chatMsg("must not run"), chatproto.ProtocolDigest)
	if err != nil {
		t.Fatal(err)
	}
	goodJSON, _ := good.Encode()

	forged := *good
	other, _ := identity.Generate()
	d, _ := good.Digest()
	sig, _ := other.SignDigest(d)
	forged.Signature = &sig
	forgedJSON, _ := forged.Encode()

	wrongTarget, _ := f.peer.sender.Seal(f.peer.id.Address(), session, chatMsg("x"), "")
	wrongTargetJSON, _ := wrongTarget.Encode()

	nonV4 := strings.Replace(string(goodJSON), session, "6f1c2a3b-4d5e-1f60-8a7b-9c0d1e2f3a4b", 1)

	cases := []struct {
		name, body string
		status     int
		want       string
	}{
		{"forged signature", string(forgedJSON), 400, `{"error": "Signature verification failed"}`},
		{"wrong target", string(wrongTargetJSON), 400, `{"error": "unable to route envelope"}`},
		{"non-v4 session", nonV4, 400, `{"error": "contents do not match envelope schema"}`},
		{"invalid JSON", `{"version": 1, "sender": `, 400, `{"error": "empty or invalid payload"}`},
		{"over 256 KiB", `{"version":1,"pad":"` + strings.Repeat("a", 300<<10) + `"}`, 413, `{"error": "payload too large"}`},
	}
	for _, c := range cases {
		if code, body := postRaw(t, url, c.body); code != c.status || body != c.want {
			t.Errorf("%s: got %d %s, want %d %s", c.name, code, body, c.status, c.want)
		}
	}

	// Unknown content type: accepted at the HTTP level (200 {}), answered with an ErrorMessage.
	payload := `{"timestamp": "2025-01-02T03:04:05+00:00", "msg_id": "` + uuid4.New() + `", "content": [{"type": "image", "url": "x"}]}`
	unknown, _ := envelope.New(f.peer.id.Address(), f.bridge.Address(), session, chatproto.ChatMessageDigest, []byte(payload))
	_ = unknown.Sign(f.peer.id)
	unknownJSON, _ := unknown.Encode()
	if code, body := postRaw(t, url, string(unknownJSON)); code != 200 || body != `{}` {
		t.Fatalf("unknown content type: %d %s", code, body)
	}
	e := f.peer.next(t)
	if e.SchemaDigest != chatproto.ErrorMessageDigest || e.Session != session {
		t.Fatalf("expected ErrorMessage, got %s", e.SchemaDigest)
	}
	p, _ := e.DecodePayload()
	em, err := chatproto.DecodeErrorMessage(p)
	if err != nil || !strings.HasPrefix(em.Error, "Message does not conform to expected schema: ") || !strings.Contains(em.Error, `"image"`) {
		t.Fatalf("error message: %+v %v", em, err)
	}

	// The user... sender gets 200 {} but chat handlers require agents.
	fromUser, _ := envelope.New(user, f.bridge.Address(), session, chatproto.ChatMessageDigest, []byte(`{"content": [{"type": "text", "text": "hi"}]}`))
	fromUserJSON, _ := fromUser.Encode()
	if code, body := postRaw(t, url, string(fromUserJSON)); code != 200 || body != `{}` {
		t.Fatalf("user sender: %d %s", code, body)
	}
	e = f.peer.next(t)
	p, _ = e.DecodePayload()
	if em, _ := chatproto.DecodeErrorMessage(p); em == nil || em.Error != UnverifiedSenderText || e.Target != user {
		t.Fatalf("user sender answer: %s", p)
	}

	if n := f.conv.callCount(); n != 0 {
		t.Fatalf("conversation was called %d times by bad input", n)
	}
	// The good envelope still works afterwards (state intact), and is the only call.
	if code, body := postRaw(t, url, string(goodJSON)); code != 200 || body != `{}` {
		t.Fatalf("good envelope after bad ones: %d %s", code, body)
	}
	decodeAck(t, f.peer.next(t))
	decodeChat(t, f.peer.next(t))
	if n := f.conv.callCount(); n != 1 {
		t.Fatalf("conversation calls = %d, want 1", n)
	}
}

func TestSendProgressAndAckObserved(t *testing.T) {
	f := newFixture(t, nil)
	session := uuid4.New()
	id, err := f.bridge.Send(context.Background(), f.peer.id.Address(), session, "Verification running: 2 of 5 criteria passed")
	if err != nil {
		t.Fatal(err)
	}
	e := f.peer.next(t)
	m := decodeChat(t, e)
	if m.MsgID != id || m.Text() != "Verification running: 2 of 5 criteria passed" || e.Session != session {
		t.Fatalf("progress message: %+v", m)
	}
	ack := chatproto.ChatAcknowledgement{Timestamp: time.Now(), AcknowledgedMsgID: id}
	if _, err := f.peer.sender.Send(context.Background(), f.bridge.Address(), session, ack, chatproto.ProtocolDigest); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-f.conv.acks:
		if a.MsgID != id || a.Sender != f.peer.id.Address() || a.Session != session {
			t.Fatalf("ack observed: %+v", a)
		}
	case <-time.After(waitFor):
		t.Fatal("ack not observed")
	}
	// A caller-chosen stable id (idempotent retries) is kept.
	stable := MessageID("contract-42/progress/1")
	if err := f.bridge.SendMessage(context.Background(), f.peer.id.Address(), session, chatproto.ChatMessage{MsgID: stable,
		Content: []chatproto.Content{chatproto.TextContent{Text: "again"}}}); err != nil {
		t.Fatal(err)
	}
	if m := decodeChat(t, f.peer.next(t)); m.MsgID != stable || m.Timestamp.IsZero() {
		t.Fatalf("stable id message: %+v", m)
	}
	if err := f.bridge.SendMessage(context.Background(), f.peer.id.Address(), session, chatproto.ChatMessage{MsgID: "not-a-uuid"}); err == nil {
		t.Fatal("bad msg_id accepted")
	}
	if _, err := f.bridge.Send(context.Background(), "agent1qunknown", session, "x"); err == nil {
		t.Fatal("send to an unresolvable agent succeeded")
	}
}

func TestConversationErrors(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{&UserError{Msg: "No contract with id abc."}, "No contract with id abc."},
		{errors.New("temporal: connection refused to 10.0.0.3"), GenericFailure},
	} {
		f := newFixture(t, nil)
		f.conv.set(nil, c.err)
		if _, err := f.peer.sender.Send(context.Background(), f.bridge.Address(), uuid4.New(), chatMsg("status abc"), ""); err != nil {
			t.Fatal(err)
		}
		decodeAck(t, f.peer.next(t))
		if got := decodeChat(t, f.peer.next(t)).Text(); got != c.want {
			t.Fatalf("reply %q, want %q", got, c.want)
		}
	}
}

func TestBusyQueueAnswers503AndRecovers(t *testing.T) {
	gate := make(chan struct{})
	f := newFixture(t, func(c *Config, _ *peer) { c.Workers = 1; c.Queue = 1 })
	f.conv.set(gate, nil)
	send := func() (int, string) {
		env, _ := f.peer.sender.Seal(f.bridge.Address(), uuid4.New(), chatMsg("x"), "")
		b, _ := env.Encode()
		return postRaw(t, f.srv.URL+"/submit", string(b))
	}
	// One message occupies the worker, one fills the queue; then 503.
	got503 := false
	for range 4 {
		if code, body := send(); code == http.StatusServiceUnavailable {
			got503 = body == transport.BodyBusy
			break
		}
	}
	if !got503 {
		t.Fatal("full queue did not answer 503")
	}
	close(gate)
	// Drains: every accepted message gets its ack.
	deadline := time.After(waitFor)
	for acks := 0; acks < 2; {
		select {
		case e := <-f.peer.got:
			if e.SchemaDigest == chatproto.ChatAcknowledgementDigest {
				acks++
			}
		case <-deadline:
			t.Fatal("queue did not drain")
		}
	}
}

func TestCloseStopsAccepting(t *testing.T) {
	f := newFixture(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := f.bridge.Close(ctx); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodHead, f.srv.URL+"/submit", nil)
	req.Header.Set("x-uagents-address", f.bridge.Address())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("x-uagents-status") != "not-ready" {
		t.Fatalf("readiness after close: %q", resp.Header.Get("x-uagents-status"))
	}
	if _, err := f.bridge.Send(context.Background(), f.peer.id.Address(), uuid4.New(), "x"); !errors.Is(err, ErrClosed) {
		t.Fatalf("send after close: %v", err)
	}
	env, _ := f.peer.sender.Seal(f.bridge.Address(), uuid4.New(), chatMsg("late"), "")
	b, _ := env.Encode()
	if code, _ := postRaw(t, f.srv.URL+"/submit", string(b)); code != http.StatusServiceUnavailable {
		t.Fatalf("submit after close: %d", code)
	}
	if f.conv.callCount() != 0 {
		t.Fatal("conversation called after close")
	}
}

// postEnv posts an encoded envelope to a bridge, optionally on a sync connection.
func postEnv(t *testing.T, url string, env *envelope.Envelope, sync bool) (int, string) {
	t.Helper()
	b, err := env.Encode()
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	if sync {
		req.Header.Set("x-uagents-connection", "sync")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func mustPayload(t *testing.T, m chatproto.ChatMessage) []byte {
	t.Helper()
	b, err := m.MarshalPython()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
