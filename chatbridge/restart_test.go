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

func TestJournalExpiryBoundAndRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	t0 := time.Unix(1000, 0)
	j, err := openJournal(path, time.Minute, 3, t0)
	if err != nil {
		t.Fatal(err)
	}
	fresh := func(j *journal, k string, at time.Time) bool {
		t.Helper()
		ok, err := j.accept(k, []byte(`{"k":"`+k+`"}`), at)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !fresh(j, "a", t0) || fresh(j, "a", t0.Add(time.Second)) {
		t.Fatal("duplicate within TTL not detected")
	}
	j.handled("a")
	if !fresh(j, "a", t0.Add(2*time.Minute)) {
		t.Fatal("expired key still remembered")
	}
	j.handled("a")
	for _, k := range []string{"b", "c", "d", "e"} {
		fresh(j, k, t0.Add(2*time.Minute))
		j.handled(k)
	}
	if len(j.entries) > 3 {
		t.Fatalf("journal grew beyond its bound: %d", len(j.entries))
	}
	// Across a restart: the keys stay duplicates, and what was accepted but not handled is
	// handed over again, once.
	fresh(j, "open", t0.Add(2*time.Minute))
	if err := j.close(); err != nil {
		t.Fatal(err)
	}
	j2, err := openJournal(path, time.Minute, 100, t0.Add(2*time.Minute+time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if fresh(j2, "e", t0.Add(2*time.Minute+time.Second)) || fresh(j2, "open", t0.Add(2*time.Minute+time.Second)) {
		t.Fatal("a key accepted before the restart is new again after it")
	}
	if p := j2.pending(); len(p) != 1 || string(p[0]) != `{"k":"open"}` {
		t.Fatalf("pending after restart: %q", p)
	}
	j2.handled("open")
	j2.close()
	j3, err := openJournal(path, time.Minute, 100, t0.Add(2*time.Minute+2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer j3.close()
	if p := j3.pending(); len(p) != 0 {
		t.Fatalf("a handled message is pending again: %q", p)
	}
	// Past the TTL the file forgets, and accepting the key again is allowed.
	j4, err := openJournal(path, time.Minute, 100, t0.Add(10*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer j4.close()
	if len(j4.entries) != 0 {
		t.Fatalf("expired entries survived reopening: %d", len(j4.entries))
	}
}

// TestReplayAcrossRestartChangesNothing: an envelope captured before a restart and posted
// after it, within its expiry and after it, gets the reference's 200 {} and reaches nothing;
// so does a fresh envelope re-signed around the same message, and a message whose own
// timestamp is older than the dedupe window.
func TestReplayAcrossRestartChangesNothing(t *testing.T) {
	journalPath := filepath.Join(t.TempDir(), "journal")
	var clock struct {
		sync.Mutex
		now time.Time
	}
	clock.now = time.Now()
	now := func() time.Time { clock.Lock(); defer clock.Unlock(); return clock.now }
	withJournal := func(c *Config, _ *peer) { c.JournalFile, c.Now = journalPath, now }
	f := newFixture(t, withJournal)
	f.peer.sender.Now = now
	session := uuid4.New()
	msg := chatMsg("cancel")
	captured, err := f.peer.sender.Seal(f.bridge.Address(), session, msg, chatproto.ProtocolDigest)
	if err != nil {
		t.Fatal(err)
	}
	if code, body := postEnv(t, f.srv.URL+"/submit", captured, false); code != http.StatusOK || body != transport.BodyOK {
		t.Fatalf("first delivery: %d %s", code, body)
	}
	decodeAck(t, f.peer.next(t))
	decodeChat(t, f.peer.next(t))
	decodeChat(t, f.peer.next(t))
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := f.bridge.Close(ctx); err != nil {
		t.Fatal(err)
	}

	// The restarted bridge: same key, same journal, a new Conversation.
	g := newFixture(t, func(c *Config, p *peer) {
		withJournal(c, p)
		c.Resolver = transport.Static{f.peer.id.Address(): {f.peer.url()}}
	})
	p, _ := captured.DecodePayload()
	resigned, _ := envelope.New(f.peer.id.Address(), g.bridge.Address(), session, chatproto.ChatMessageDigest, p)
	_ = resigned.Sign(f.peer.id)
	old := chatMsg("cancel")
	old.Timestamp = now().Add(-25 * time.Hour)
	stale, _ := f.peer.sender.Seal(g.bridge.Address(), session, old, chatproto.ProtocolDigest)
	for name, env := range map[string]*envelope.Envelope{"within its expiry": captured, "re-signed": resigned, "stale": stale} {
		if code, body := postEnv(t, g.srv.URL+"/submit", env, false); code != http.StatusOK || body != transport.BodyOK {
			t.Fatalf("replay %s: %d %s", name, code, body)
		}
	}
	fresh := chatMsg("a new message whose envelope expired")
	expired, _ := f.peer.sender.Seal(g.bridge.Address(), session, fresh, chatproto.ProtocolDigest)
	clock.Lock()
	clock.now = clock.now.Add(31 * time.Second) // past both envelopes' expires (30 s)
	clock.Unlock()
	for name, env := range map[string]*envelope.Envelope{"after its expiry": captured, "never seen but expired": expired} {
		if code, body := postEnv(t, g.srv.URL+"/submit", env, false); code != http.StatusOK || body != transport.BodyOK {
			t.Fatalf("replay %s: %d %s", name, code, body)
		}
	}
	// Barrier: a live message in a fresh envelope is handled; by its replies every replay
	// above has been dropped or would have shown.
	live := chatMsg("live")
	liveEnv, _ := f.peer.sender.Seal(g.bridge.Address(), session, live, chatproto.ProtocolDigest)
	if code, _ := postEnv(t, g.srv.URL+"/submit", liveEnv, false); code != http.StatusOK {
		t.Fatalf("live message: %d", code)
	}
	if a := decodeAck(t, f.peer.next(t)); a.AcknowledgedMsgID != live.MsgID {
		t.Fatalf("acknowledged %s, want only the live %s", a.AcknowledgedMsgID, live.MsgID)
	}
	decodeChat(t, f.peer.next(t))
	decodeChat(t, f.peer.next(t))
	if n := g.conv.callCount(); n != 1 || g.conv.calls[0].Text != "live" {
		t.Fatalf("restarted bridge handled %d messages: %+v", n, g.conv.calls)
	}
	select {
	case e := <-f.peer.got:
		t.Fatalf("a replay was answered: %s", e.SchemaDigest)
	default:
	}
}

// TestAcceptedMessageIsHandledAfterRestart: a message acknowledged but not yet handled when the
// bridge stops is handed to the Conversation by the next bridge's Resume.
func TestAcceptedMessageIsHandledAfterRestart(t *testing.T) {
	journalPath := filepath.Join(t.TempDir(), "journal")
	f := newFixture(t, func(c *Config, _ *peer) { c.JournalFile = journalPath })
	f.conv.set(make(chan struct{}), nil) // never opened: the handler is cut off by Close
	msg := chatMsg("run W1")
	session := uuid4.New()
	if _, err := f.peer.sender.Send(context.Background(), f.bridge.Address(), session, msg, chatproto.ProtocolDigest); err != nil {
		t.Fatal(err)
	}
	decodeAck(t, f.peer.next(t))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond) // hang-catcher for a gated handler
	defer cancel()
	_ = f.bridge.Close(ctx)

	g := newFixture(t, func(c *Config, _ *peer) {
		c.JournalFile = journalPath
		c.Resolver = transport.Static{f.peer.id.Address(): {f.peer.url()}}
	})
	g.bridge.Resume()
	for _, want := range []string{"got: run W1", "second reply"} {
		if got := decodeChat(t, f.peer.next(t)).Text(); got != want {
			t.Fatalf("after restart got %q, want %q", got, want)
		}
	}
	if n := g.conv.callCount(); n != 1 || g.conv.calls[0].MsgID != msg.MsgID || g.conv.calls[0].Session != session {
		t.Fatalf("resumed calls: %+v", g.conv.calls)
	}
}

// TestDedupeKeyIsTheNonceWhenThereIsOne: an envelope with a nonce is recognised by
// (sender, session, nonce), across a restart too; without one, by (sender, session, msg_id).
// A replay gets the reference's 200 {} and reaches nothing.
func TestDedupeKeyIsTheNonceWhenThereIsOne(t *testing.T) {
	journalPath := filepath.Join(t.TempDir(), "journal")
	f := newFixture(t, func(c *Config, _ *peer) { c.JournalFile = journalPath })
	session := uuid4.New()
	seal := func(b *Bridge, session string, m chatproto.ChatMessage, nonce *int64) *envelope.Envelope {
		t.Helper()
		env, err := envelope.New(f.peer.id.Address(), b.Address(), session, chatproto.ChatMessageDigest, mustPayload(t, m))
		if err != nil {
			t.Fatal(err)
		}
		exp := time.Now().Add(time.Hour).Unix()
		env.Expires, env.Nonce = &exp, nonce
		if err := env.Sign(f.peer.id); err != nil {
			t.Fatal(err)
		}
		return env
	}
	n7, n8 := int64(7), int64(8)
	first := chatMsg("first")
	post := func(b *Bridge, srv *httptest.Server, name string, env *envelope.Envelope) {
		t.Helper()
		if code, body := postEnv(t, srv.URL+"/submit", env, false); code != http.StatusOK || body != transport.BodyOK {
			t.Fatalf("%s: %d %s", name, code, body)
		}
	}
	// Handled: each acknowledged, then answered twice (the fake's two replies).
	handled := func(want ...string) {
		t.Helper()
		got := map[string]bool{}
		for range 3 * len(want) { // acks and replies of concurrent messages interleave
			if e := f.peer.next(t); e.SchemaDigest == chatproto.ChatAcknowledgementDigest {
				got[decodeAck(t, e).AcknowledgedMsgID] = true
			} else {
				decodeChat(t, e)
			}
		}
		for _, id := range want {
			if !got[id] {
				t.Fatalf("acknowledged %v, want %v", got, want)
			}
		}
	}
	captured := seal(f.bridge, session, first, &n7)
	post(f.bridge, f.srv, "first delivery", captured)
	handled(first.MsgID)
	post(f.bridge, f.srv, "replay", captured)
	other := chatMsg("another message, same nonce")
	post(f.bridge, f.srv, "same nonce, other message", seal(f.bridge, session, other, &n7))
	// New envelopes the sender made: a new nonce (even around the same message) and the same
	// nonce in another session are new to the bridge; the Conversation dedupes by msg_id.
	again := seal(f.bridge, session, first, &n8)
	post(f.bridge, f.srv, "new nonce", again)
	otherSession := uuid4.New()
	elsewhere := chatMsg("same nonce, other session")
	post(f.bridge, f.srv, "other session", seal(f.bridge, otherSession, elsewhere, &n7))
	handled(first.MsgID, elsewhere.MsgID)
	plain := chatMsg("no nonce")
	post(f.bridge, f.srv, "no nonce", seal(f.bridge, session, plain, nil))
	handled(plain.MsgID)
	post(f.bridge, f.srv, "no nonce, re-signed", seal(f.bridge, session, plain, nil))
	if n := f.conv.callCount(); n != 4 {
		t.Fatalf("conversation calls: %d, want 4: %+v", n, f.conv.calls)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := f.bridge.Close(ctx); err != nil {
		t.Fatal(err)
	}

	g := newFixture(t, func(c *Config, p *peer) {
		c.JournalFile = journalPath
		c.Resolver = transport.Static{f.peer.id.Address(): {f.peer.url()}}
	})
	post(g.bridge, g.srv, "replay after a restart", captured)
	post(g.bridge, g.srv, "same nonce, other message, after a restart", seal(g.bridge, session, chatMsg("later"), &n7))
	post(g.bridge, g.srv, "no nonce, after a restart", seal(g.bridge, session, plain, nil))
	live := chatMsg("live")
	post(g.bridge, g.srv, "live", seal(g.bridge, session, live, nil))
	handled(live.MsgID) // a barrier: had a replay been taken, its ack would come first
	if n := g.conv.callCount(); n != 1 {
		t.Fatalf("restarted bridge handled %d messages: %+v", n, g.conv.calls)
	}
}
