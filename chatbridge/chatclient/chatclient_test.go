package chatclient_test

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/signoff/signoff/chatbridge"
	"github.com/signoff/signoff/chatbridge/almanac"
	"github.com/signoff/signoff/chatbridge/chatclient"
	"github.com/signoff/signoff/chatbridge/chatproto"
	"github.com/signoff/signoff/chatbridge/identity"
	"github.com/signoff/signoff/chatbridge/transport"
)

const waitFor = 10 * time.Second

type echo struct {
	mu   sync.Mutex
	seen []chatbridge.Inbound
	acks chan chatbridge.Ack
}

func (e *echo) OnText(_ context.Context, in chatbridge.Inbound) ([]string, error) {
	e.mu.Lock()
	e.seen = append(e.seen, in)
	e.mu.Unlock()
	return []string{"Quote for: " + in.Text}, nil
}

func (e *echo) OnAck(_ context.Context, a chatbridge.Ack) { e.acks <- a }

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitFor):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

// The full local story: a registry on loopback, the bridge registered in it, a client that
// registers its own endpoint and resolves the bridge through the Almanac API routes.
func TestRoundTripThroughLocalRegistry(t *testing.T) {
	reg := &almanac.Registry{}
	regSrv := httptest.NewServer(reg)
	defer regSrv.Close()

	bridgeID, err := identity.FromSeed("signoff chatclient test", 0)
	if err != nil {
		t.Fatal(err)
	}
	conv := &echo{acks: make(chan chatbridge.Ack, 8)}
	b, err := chatbridge.New(chatbridge.Config{Identity: bridgeID, Conversation: conv, Resolver: reg,
		Retry: transport.Retry{Attempts: 3, Initial: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	bridgeSrv := httptest.NewServer(b)
	defer bridgeSrv.Close()
	defer func() { _ = b.Close(context.Background()) }()
	att, err := almanac.NewAttestation(bridgeID, identity.MainnetPrefix, []string{bridgeSrv.URL + "/submit"}, []string{chatproto.ProtocolDigest}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(att); err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	c, err := chatclient.Start(ctx, chatclient.Config{Bridge: b.Address(), AlmanacURL: regSrv.URL + "/v1/almanac",
		Retry: transport.Retry{Attempts: 3, Initial: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close(context.Background()) }()
	if rec, ok := reg.Lookup(c.Address()); !ok || rec.Endpoints[0].URL != c.Endpoint() {
		t.Fatalf("client endpoint not registered: %+v", rec)
	}

	id, err := c.Say(ctx, "make the watchlist mobile friendly")
	if err != nil {
		t.Fatal(err)
	}
	if got := recv(t, c.Acks(), "the bridge's ack"); got != id {
		t.Fatalf("ack for %s, want %s", got, id)
	}
	m := recv(t, c.Messages(), "the reply")
	if m.Text != "Quote for: make the watchlist mobile friendly" || m.Session != c.Session() {
		t.Fatalf("reply = %+v", m)
	}
	// The client acknowledged the reply; the bridge saw it.
	if a := recv(t, conv.acks, "the client's ack"); a.MsgID != m.MsgID || a.Sender != c.Address() {
		t.Fatalf("ack at bridge = %+v, want msg %s", a, m.MsgID)
	}
	conv.mu.Lock()
	in := conv.seen[0]
	conv.mu.Unlock()
	if in.Sender != c.Address() || in.Session != c.Session() || in.MsgID != id {
		t.Fatalf("inbound = %+v", in)
	}

	// Progress pushed later by the workflow side reaches the client.
	pid, err := b.Send(ctx, c.Address(), c.Session(), "Verifying commit abc123 (2/5 criteria passed)")
	if err != nil {
		t.Fatal(err)
	}
	p := recv(t, c.Messages(), "the progress message")
	if p.MsgID != pid || p.Text != "Verifying commit abc123 (2/5 criteria passed)" {
		t.Fatalf("progress = %+v", p)
	}
	recv(t, conv.acks, "the progress ack")
}

func TestClientIgnoresOtherSendersAndValidatesConfig(t *testing.T) {
	bridgeID, _ := identity.FromSeed("signoff chatclient test", 0)
	if _, err := chatclient.Start(context.Background(), chatclient.Config{Bridge: "agent1bad", BridgeURL: "http://127.0.0.1:1"}); err == nil {
		t.Fatal("bad bridge address accepted")
	}
	if _, err := chatclient.Start(context.Background(), chatclient.Config{Bridge: bridgeID.Address()}); err == nil {
		t.Fatal("no way to reach the bridge accepted")
	}
	c, err := chatclient.Start(context.Background(), chatclient.Config{Bridge: bridgeID.Address(), BridgeURL: "http://127.0.0.1:1/submit"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close(context.Background()) }()
	stranger, _ := identity.Generate()
	s := &transport.Sender{Identity: stranger, Resolver: transport.Static{c.Address(): {c.Endpoint()}}}
	if _, err := s.Send(context.Background(), c.Address(), c.Session(), chatproto.ChatMessage{Timestamp: time.Now(), MsgID: "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b", Content: []chatproto.Content{chatproto.TextContent{Text: "spoof"}}}, ""); err != nil {
		t.Fatal(err)
	}
	// A genuine bridge message sent after it arrives first on the channel: the spoof was dropped.
	real := &transport.Sender{Identity: bridgeID, Resolver: transport.Static{c.Address(): {c.Endpoint()}}}
	if _, err := real.Send(context.Background(), c.Address(), c.Session(), chatproto.ChatMessage{Timestamp: time.Now(), MsgID: "7f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b", Content: []chatproto.Content{chatproto.TextContent{Text: "real"}}}, ""); err != nil {
		t.Fatal(err)
	}
	if m := recv(t, c.Messages(), "the bridge message"); m.Text != "real" {
		t.Fatalf("got %q: a non-bridge sender was accepted", m.Text)
	}
}
