package chatbridge

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/signoff/signoff/chatbridge/chatproto"
	"github.com/signoff/signoff/chatbridge/envelope"
	"github.com/signoff/signoff/chatbridge/internal/uuid4"
	"github.com/signoff/signoff/chatbridge/transport"
)

// TestAckComesAtOnceWhileHandlersAreBusy: with the only handler held by a slow message, later
// messages are still acknowledged straight away, and each message's replies follow its ack.
func TestAckComesAtOnceWhileHandlersAreBusy(t *testing.T) {
	f := newFixture(t, func(c *Config, _ *peer) { c.Workers = 1 })
	gate := make(chan struct{})
	f.conv.set(gate, nil)
	session := uuid4.New()
	var ids []string
	for _, text := range []string{"slow", "behind it", "and another"} {
		m := chatMsg(text)
		ids = append(ids, m.MsgID)
		if _, err := f.peer.sender.Send(context.Background(), f.bridge.Address(), session, m, chatproto.ProtocolDigest); err != nil {
			t.Fatal(err)
		}
	}
	acked := map[string]bool{}
	for range ids {
		acked[decodeAck(t, f.peer.next(t)).AcknowledgedMsgID] = true
	}
	for _, id := range ids {
		if !acked[id] {
			t.Fatalf("message %s not acknowledged while the handler was busy: %v", id, acked)
		}
	}
	// The acks may all be out before the one worker has picked up the slow message; wait for
	// it to be inside the handler, then no other message may have reached the handler.
	select {
	case <-f.conv.entered:
	case <-time.After(waitFor):
		t.Fatal("the slow message never reached the handler")
	}
	if n := f.conv.callCount(); n != 1 {
		t.Fatalf("handler calls while gated: %d", n)
	}
	close(gate)
	for range 2 * len(ids) {
		if e := f.peer.next(t); e.SchemaDigest != chatproto.ChatMessageDigest {
			t.Fatalf("after the acks only replies should come, got %s", e.SchemaDigest)
		}
	}
}

// TestSyncConnectionGetsTheSignedAck: on x-uagents-connection: sync the 200 body is a signed
// envelope carrying the acknowledgement, as the reference answers with the handler's first
// send; the replies follow as separate envelopes, and no second acknowledgement is sent.
func TestSyncConnectionGetsTheSignedAck(t *testing.T) {
	f := newFixture(t, nil)
	msg := chatMsg("status W1")
	session := uuid4.New()
	env, _ := f.peer.sender.Seal(f.bridge.Address(), session, msg, chatproto.ProtocolDigest)
	code, body := postEnv(t, f.srv.URL+"/submit", env, true)
	if code != http.StatusOK {
		t.Fatalf("sync post: %d %s", code, body)
	}
	reply, err := envelope.Decode([]byte(body))
	if err != nil {
		t.Fatalf("sync response is not an envelope: %v: %s", err, body)
	}
	if err := reply.Verify(); err != nil || reply.Sender != f.bridge.Address() || reply.Target != f.peer.id.Address() || reply.Session != session {
		t.Fatalf("sync response envelope: %v %+v", err, reply)
	}
	if a := decodeAck(t, reply); a.AcknowledgedMsgID != msg.MsgID {
		t.Fatalf("sync response acknowledges %s, want %s", a.AcknowledgedMsgID, msg.MsgID)
	}
	for _, want := range []string{"got: status W1", "second reply"} {
		if got := decodeChat(t, f.peer.next(t)).Text(); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	// An expired sync envelope gets the reference's ErrorMessage and reaches nothing.
	exp := time.Now().Add(-time.Minute).Unix()
	late, _ := envelope.New(f.peer.id.Address(), f.bridge.Address(), session, chatproto.ChatMessageDigest, mustPayload(t, chatMsg("late")))
	late.Expires = &exp
	_ = late.Sign(f.peer.id)
	code, body = postEnv(t, f.srv.URL+"/submit", late, true)
	lateReply, err := envelope.Decode([]byte(body))
	if code != http.StatusOK || err != nil {
		t.Fatalf("expired sync post: %d %v %s", code, err, body)
	}
	p, _ := lateReply.DecodePayload()
	if em, err := chatproto.DecodeErrorMessage(p); err != nil || em.Error != QueryExpiredText || lateReply.Verify() != nil {
		t.Fatalf("expired sync answer: %+v %v", em, err)
	}
	if n := f.conv.callCount(); n != 1 {
		t.Fatalf("conversation calls: %d", n)
	}
	select {
	case e := <-f.peer.got:
		t.Fatalf("unexpected envelope %s", e.SchemaDigest)
	default:
	}
}

// ackFirstConversation records, for each message it is handed, whether the bridge had
// already reported that message's acknowledgement out.
type ackFirstConversation struct {
	mu      sync.Mutex
	acked   map[string]AckTiming
	early   []string // msg ids handled before their ack was out
	handled chan string
}

func (c *ackFirstConversation) onAck(t AckTiming) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.acked[t.MsgID] = t
}

func (c *ackFirstConversation) OnText(_ context.Context, in Inbound) ([]string, error) {
	c.mu.Lock()
	if _, ok := c.acked[in.MsgID]; !ok {
		c.early = append(c.early, in.MsgID)
	}
	c.mu.Unlock()
	c.handled <- in.MsgID
	return []string{"ok"}, nil
}

// TestAckIsOutBeforeHandlingStarts: the Conversation (where a task starts its workflow) is
// handed a message only after its acknowledgement was delivered, on both connection kinds;
// and while a peer holds the acknowledgement, the message's handling does not start at all.
func TestAckIsOutBeforeHandlingStarts(t *testing.T) {
	conv := &ackFirstConversation{acked: map[string]AckTiming{}, handled: make(chan string, 16)}
	f := newFixture(t, func(c *Config, _ *peer) {
		c.Conversation = conv
		c.OnAcknowledged = conv.onAck
	})
	session := uuid4.New()
	async := chatMsg("make the Watchlist page work on mobile")
	if _, err := f.peer.sender.Send(context.Background(), f.bridge.Address(), session, async, chatproto.ProtocolDigest); err != nil {
		t.Fatal(err)
	}
	syncMsg := chatMsg("status W1")
	env, _ := f.peer.sender.Seal(f.bridge.Address(), session, syncMsg, chatproto.ProtocolDigest)
	if code, body := postEnv(t, f.srv.URL+"/submit", env, true); code != http.StatusOK {
		t.Fatalf("sync post: %d %s", code, body)
	}
	got := map[string]bool{}
	for range 2 {
		select {
		case id := <-conv.handled:
			got[id] = true
		case <-time.After(waitFor):
			t.Fatal("messages not handled")
		}
	}
	conv.mu.Lock()
	early := conv.early
	at := conv.acked[async.MsgID]
	conv.mu.Unlock()
	if !got[async.MsgID] || !got[syncMsg.MsgID] || len(early) > 0 {
		t.Fatalf("handled %v; handled before their ack was out: %v", got, early)
	}
	if at.Err != nil || at.Received.IsZero() || at.Wire.Before(at.Received) || at.Done.Before(at.Wire) {
		t.Fatalf("ack timing %+v", at)
	}

	// A peer that takes the acknowledgement but does not answer: the message is never handed
	// over while it holds it, and is left for the next start (not marked handled).
	holding := make(chan struct{})
	release := make(chan struct{})
	g := newFixture(t, func(c *Config, p *peer) {
		c.Conversation = conv
		c.OnAcknowledged = conv.onAck
		c.JournalFile = filepath.Join(t.TempDir(), "journal")
		c.Resolver = transport.Static{p.id.Address(): {"http://" + holdingServer(t, holding, release) + "/submit"}}
	})
	held := chatMsg("run W1")
	if _, err := g.peer.sender.Send(context.Background(), g.bridge.Address(), session, held, chatproto.ProtocolDigest); err != nil {
		t.Fatal(err)
	}
	select {
	case <-holding:
	case <-time.After(waitFor):
		t.Fatal("the acknowledgement never reached the peer")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond) // cuts the held ack off
	defer cancel()
	_ = g.bridge.Close(ctx)
	close(release)
	select {
	case id := <-conv.handled:
		t.Fatalf("message %s handled while its acknowledgement was held", id)
	default:
	}
	if p := g.bridge.seen.pending(); len(p) != 1 {
		t.Fatalf("the held message should stay pending for the next start: %d pending", len(p))
	}
}

// holdingServer accepts envelopes and answers none until release is closed; holding is
// closed when the first request arrives.
func holdingServer(t *testing.T, holding, release chan struct{}) string {
	t.Helper()
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(holding) })
		select {
		case <-release:
		case <-r.Context().Done():
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}
