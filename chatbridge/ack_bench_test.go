package chatbridge

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signoff/signoff/chatbridge/chatproto"
	"github.com/signoff/signoff/chatbridge/envelope"
	"github.com/signoff/signoff/chatbridge/identity"
	"github.com/signoff/signoff/chatbridge/internal/uuid4"
	"github.com/signoff/signoff/chatbridge/transport"
	"github.com/signoff/signoff/internal/cpuhog"
)

// BenchmarkAckLatency measures how long a burst of ChatMessages from separate peers waits for
// its acknowledgements, with every CPU kept busy by a hog and the journal on disk (fsync per
// message). Each iteration is one burst; the figures are over all messages of all bursts:
//
//   - server_wire: the bridge's receive (submit handler entered) to its ack written to the
//     peer's connection, from Config.OnAcknowledged;
//   - server_done: receive to the peer's answer to the ack;
//   - peer: the peer's own view, from just before it signs and sends to the ack's arrival
//     at its inbox (signature verified).
//
// The Conversation burns CPU for each message (standing in for starting a workflow), so a
// regression that lets handling run before or alongside the ack shows in the figures. In
// "slow peers" every peer takes 100 ms to answer an envelope, as a Python uagents peer
// verifying signatures on a loaded machine does; acks must not queue behind each other.
//
//	go test ./chatbridge -run '^$' -bench AckLatency -benchtime 20x
func BenchmarkAckLatency(b *testing.B) {
	for _, tc := range []struct {
		name  string
		peers int
		slow  time.Duration
	}{
		{"10 peers", 10, 0},
		{"10 slow peers", 10, 100 * time.Millisecond},
	} {
		b.Run(tc.name, func(b *testing.B) { benchAckBurst(b, tc.peers, tc.slow) })
	}
}

// busyConversation spends CPU on every message before answering, like a handler that starts
// a workflow on a loaded server.
type busyConversation struct{ calls atomic.Int64 }

func (c *busyConversation) OnText(context.Context, Inbound) ([]string, error) {
	c.calls.Add(1)
	x := uint64(1)
	for range 5_000_000 {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return []string{fmt.Sprint(x % 7)}, nil
}

type benchPeer struct {
	id     *identity.Identity
	srv    *httptest.Server
	sender *transport.Sender
	mu     sync.Mutex
	acked  map[string]time.Time // msg_id -> ack arrival
	got    chan struct{}
}

func benchAckBurst(b *testing.B, n int, slow time.Duration) {
	var mu sync.Mutex
	var timings []AckTiming
	bridgeID, err := identity.FromSeed("signoff ack benchmark bridge", 0)
	if err != nil {
		b.Fatal(err)
	}
	static := transport.Static{}
	conv := &busyConversation{}
	bridge, err := New(Config{Identity: bridgeID, Conversation: conv, Resolver: static,
		JournalFile: filepath.Join(b.TempDir(), "journal.jsonl"),
		OnAcknowledged: func(t AckTiming) {
			mu.Lock()
			timings = append(timings, t)
			mu.Unlock()
		}})
	if err != nil {
		b.Fatal(err)
	}
	bsrv := httptest.NewServer(bridge)
	b.Cleanup(func() {
		bsrv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = bridge.Close(ctx)
	})
	peers := make([]*benchPeer, n)
	for i := range peers {
		id, err := identity.Generate()
		if err != nil {
			b.Fatal(err)
		}
		p := &benchPeer{id: id, acked: map[string]time.Time{}, got: make(chan struct{}, 1024)}
		inbox := &transport.Inbox{
			Hosts: func(a string) bool { return a == id.Address() },
			Deliver: func(_ context.Context, e *envelope.Envelope) error {
				if e.SchemaDigest == chatproto.ChatAcknowledgementDigest {
					pl, _ := e.DecodePayload()
					if a, err := chatproto.DecodeAcknowledgement(pl); err == nil {
						p.mu.Lock()
						p.acked[a.AcknowledgedMsgID] = time.Now()
						p.mu.Unlock()
						p.got <- struct{}{}
					}
				}
				if slow > 0 {
					time.Sleep(slow) // the peer's own slowness, not synchronisation
				}
				return nil
			},
		}
		p.srv = httptest.NewServer(inbox)
		b.Cleanup(p.srv.Close)
		static[id.Address()] = []string{p.srv.URL + "/submit"}
		p.sender = &transport.Sender{Identity: id, Resolver: transport.Static{bridgeID.Address(): {bsrv.URL + "/submit"}}, Retry: transport.Retry{Attempts: 1}}
		peers[i] = p
	}

	stop := cpuhog.Start()
	defer stop()
	var peerMS []float64
	b.ResetTimer()
	for range b.N {
		var wg sync.WaitGroup
		start := make(chan struct{})
		sent := make([]struct {
			id string
			t0 time.Time
		}, n)
		for i, p := range peers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				msg := chatproto.ChatMessage{Timestamp: time.Now(), MsgID: uuid4.New(), Content: []chatproto.Content{chatproto.TextContent{Text: "make the Watchlist page work on mobile"}}}
				<-start
				sent[i].id, sent[i].t0 = msg.MsgID, time.Now()
				if _, err := p.sender.Send(context.Background(), bridgeID.Address(), uuid4.New(), msg, chatproto.ProtocolDigest); err != nil {
					b.Error(err)
				}
			}()
		}
		close(start)
		wg.Wait()
		for i, p := range peers {
			select {
			case <-p.got:
			case <-time.After(time.Minute): // a hang-catcher, not a speed target
				b.Fatalf("peer %d: no acknowledgement within a minute", i)
			}
			p.mu.Lock()
			at, ok := p.acked[sent[i].id]
			p.mu.Unlock()
			if !ok {
				b.Fatalf("peer %d: the ack received is not for its message", i)
			}
			peerMS = append(peerMS, float64(at.Sub(sent[i].t0).Microseconds())/1000)
		}
	}
	b.StopTimer()
	stop()
	for deadline := time.Now().Add(time.Minute); ; { // the last acks' timings may still be on their way
		mu.Lock()
		have := len(timings)
		mu.Unlock()
		if have >= b.N*n {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d ack timings for %d messages", have, b.N*n)
		}
		runtime.Gosched()
	}
	mu.Lock()
	defer mu.Unlock()
	var wire, done []float64
	for _, t := range timings {
		if t.Err != nil || t.Wire.IsZero() {
			b.Fatalf("ack of %s: wire %v, err %v", t.MsgID, t.Wire, t.Err)
		}
		wire = append(wire, float64(t.Wire.Sub(t.Received).Microseconds())/1000)
		done = append(done, float64(t.Done.Sub(t.Received).Microseconds())/1000)
	}
	for _, m := range []struct {
		name string
		v    []float64
	}{{"server_wire", wire}, {"server_done", done}, {"peer", peerMS}} {
		p50, p99 := percentile(m.v, 50), percentile(m.v, 99)
		b.ReportMetric(p50, m.name+"_p50_ms")
		b.ReportMetric(p99, m.name+"_p99_ms")
		b.Logf("%s ack latency over %d messages, CPU hog on %d CPUs: p50 %.1f ms, p99 %.1f ms, max %.1f ms",
			m.name, len(m.v), runtime.NumCPU(), p50, p99, percentile(m.v, 100))
	}
}

// percentile is the nearest-rank percentile of v (p in 0..100).
func percentile(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	i := int(p/100*float64(len(s))+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}
