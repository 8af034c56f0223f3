package verify

import (
	"log/slog"
	"testing"
	"time"
)

// A request is early when the page clock may be more than earlyMS ahead of the wall clock
// counted from the page's time origin: never before the first answer, nor after a navigation.
func TestPacerCountsEarlyRequests(t *testing.T) {
	until := time.Now().Add(time.Hour)
	p := newPacer(until, nil, slog.New(slog.DiscardHandler))
	p.request("/load")
	if n := p.earlyRequests(); n != 0 {
		t.Fatalf("%d early requests before the first answer; the page runs on the wall clock", n)
	}
	origin := time.Now()
	p.answered(origin, 100)
	p.request("/data")
	if n := p.earlyRequests(); n != 0 {
		t.Fatalf("%d early requests with the page clock 100 ms from its origin", n)
	}
	p.granted(500)
	p.granted(5000) // the clock ran through an idle stretch
	p.request("/api/mode")
	if n := p.earlyRequests(); n != 1 {
		t.Fatalf("%d early requests with the page clock 5.6 s ahead, want 1", n)
	}
	if end := p.pageEnd(30000); !end.Equal(origin.Add(30 * time.Second)) {
		t.Fatalf("page end %v from the origin, want 30 s", end.Sub(origin))
	}
	if end := p.pageEnd(float64((2 * time.Hour).Milliseconds())); !end.Equal(until) {
		t.Fatalf("page end %v past the page's real budget %v", end, until)
	}
	p.restart()
	if n, end := p.earlyRequests(), p.pageEnd(30000); n != 0 || !end.IsZero() {
		t.Fatalf("after a navigation: %d early requests, page end %v; the new document starts afresh", n, end)
	}
}

// From a person's pass on, a request is held until the gate, and the page closing releases it.
func TestPacerHoldsFromThePassUntilClose(t *testing.T) {
	closing := make(chan struct{})
	p := newPacer(time.Now().Add(time.Hour), closing, slog.New(slog.DiscardHandler))
	p.holdFrom(time.Now().Add(-time.Second)) // a gate already passed holds nothing
	p.request("/now")
	if p.holding() {
		t.Fatal("holding behind a gate that has passed")
	}
	p.holdFrom(time.Now().Add(time.Hour))
	released := make(chan struct{})
	go func() { p.request("/touch"); close(released) }()
	for !p.holding() {
		select {
		case <-released:
			t.Fatal("released before the gate")
		case <-time.After(time.Millisecond):
		}
	}
	close(closing)
	<-released
	if p.holding() {
		t.Fatal("still holding after the page closed")
	}
	var none *pacer // a page on the wall clock has none
	none.request("/x")
	if none.holding() || none.earlyRequests() != 0 || !none.pageEnd(1000).IsZero() {
		t.Fatal("a nil pacer paces")
	}
}
