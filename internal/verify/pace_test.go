package verify

import (
	"log/slog"
	"testing"
	"time"
)

// A request is due when the wall clock, from the page's time origin, reaches the page time the
// page may have reached: the last answer's plus the grants since. Not held before the first
// answer nor after a navigation, and never past the page's end.
func TestPacerDueAtThePageClock(t *testing.T) {
	until := time.Now().Add(time.Hour)
	p := newPacer(until, nil, slog.New(slog.DiscardHandler))
	if d := p.due(); !d.IsZero() {
		t.Fatalf("due %v before the first answer; the page runs on the wall clock", d)
	}
	origin := time.Now().Add(-time.Second)
	p.answered(origin, 1000)
	if d := p.due(); !d.Equal(origin.Add(time.Second)) {
		t.Fatalf("due %v after an answer at 1000 ms, want the origin plus 1 s", d.Sub(origin))
	}
	p.granted(500)
	p.granted(250) // a grant made again after a stall
	if d := p.due(); !d.Equal(origin.Add(1750 * time.Millisecond)) {
		t.Fatalf("due %v after 750 ms granted, want 1750 ms", d.Sub(origin))
	}
	p.answered(origin, 1600) // the page stood at 1600 ms: the answer is exact
	if d := p.due(); !d.Equal(origin.Add(1600 * time.Millisecond)) {
		t.Fatalf("due %v after an answer at 1600 ms", d.Sub(origin))
	}
	p.granted(int((2 * time.Hour).Milliseconds()))
	if d := p.due(); !d.Equal(until) {
		t.Fatalf("due %v past the page's end %v", d, until)
	}
	p.restart()
	if d := p.due(); !d.IsZero() {
		t.Fatalf("due %v after a navigation; the new document runs on the wall clock", d)
	}
}

// A held request counts as held while it waits, and the page closing releases it.
func TestPacerReleasesOnClose(t *testing.T) {
	closing := make(chan struct{})
	p := newPacer(time.Now().Add(time.Hour), closing, slog.New(slog.DiscardHandler))
	p.answered(time.Now(), 0)
	p.granted(int(time.Hour.Milliseconds()))
	released := make(chan struct{})
	go func() { p.wait("/poll"); close(released) }()
	for !p.holding() {
		select {
		case <-released:
			t.Fatal("released before the page clock's hour had passed")
		case <-time.After(time.Millisecond):
		}
	}
	close(closing)
	<-released
	if p.holding() {
		t.Fatal("still holding after the page closed")
	}
	var none *pacer // a page on the wall clock has none
	none.wait("/x")
	if none.holding() {
		t.Fatal("a nil pacer holds")
	}
}
