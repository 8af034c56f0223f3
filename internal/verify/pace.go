package verify

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// The app's server keeps the wall clock, and the page can ask it. The page clock runs ahead of
// the wall clock (virtual time fast-forwards through idle stretches), so a page that asks its
// server every second would be told "only 50 ms have passed" at page second five: a server
// that answers by the wall clock could show the verifier one page and a person, who waits the
// real five seconds, another.
//
// Two rules close that, and cost nothing for a page that asks nothing once it is watched:
//
//   - A page that asked its server while its clock ran ahead of the wall clock (early) is
//     measured again on the wall clock, from the start (observe ends with errWallClock): its
//     server is then asked when a person's page would ask it, and a page that compares its
//     clock with its server's finds them the same.
//   - A person's pass comes after the budget: what the page asks from the pass on leaves for
//     the server no earlier than the budget's end in real time (gate).
//
// Requests are never held while the page is watched before its pass: a held request keeps
// the page clock (which waits on fetches) near the wall clock, where Chromium, on a busy
// host, stopped giving such pages frames.

// earlyMS is how far ahead of the wall clock the page clock must be when the page makes a
// request for that request to count as early: the page clock runs a little ahead as soon as
// it is watched (catch-up margins), and a page finishing its load is not asking a server for
// the time.
const earlyMS = 1000

// pacer follows one page's clock against the wall clock, for the requests it makes.
type pacer struct {
	mu sync.Mutex
	// origin is the document's time origin in real time, at the latest. Zero while the page
	// runs on the wall clock (before the first answer, after a navigation).
	origin  time.Time
	ceiling float64 // page time (ms) the page may have reached
	early   int     // requests made while the page clock ran ahead (earlyMS)
	// gate: from a person's pass on, requests are held until then (zero: none held), but
	// never past until, nor past closing.
	gate    time.Time
	held    int // requests held now
	gated   int // requests held at the gate so far
	until   time.Time
	closing <-chan struct{}
	log     *slog.Logger
}

func newPacer(until time.Time, closing <-chan struct{}, log *slog.Logger) *pacer {
	return &pacer{until: until, closing: closing, log: log}
}

// answered records the page time a probe answer carried, while the page clock stood still
// there, and origin, the document's time origin as the clock has it.
func (p *pacer) answered(origin time.Time, pageMS float64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.origin, p.ceiling = origin, pageMS
}

// granted raises the ceiling by the page time just granted.
func (p *pacer) granted(ms int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ceiling += float64(ms)
}

// restart: the page navigated, and its new document runs on the wall clock until answered.
func (p *pacer) restart() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.origin, p.ceiling, p.early = time.Time{}, 0, 0
}

// earlyRequests is how many requests the page made while its clock ran ahead of the wall
// clock.
func (p *pacer) earlyRequests() int {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.early
}

// pageEnd is when endMS of page time will have passed in real time since the document's time
// origin (zero before the first answer), at most until.
func (p *pacer) pageEnd(endMS float64) time.Time {
	if p == nil {
		return time.Time{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.origin.IsZero() {
		return time.Time{}
	}
	return minTime(p.origin.Add(time.Duration(endMS*float64(time.Millisecond))), p.until)
}

// holdFrom holds every request the page makes from now on until t (a person's pass, which a
// person makes only once the budget has passed).
func (p *pacer) holdFrom(t time.Time) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gate = minTime(t, p.until)
}

// holding reports whether a request is being held: the page clock then waits on the pacer,
// not on a fetch that does not complete.
func (p *pacer) holding() bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held > 0
}

// awaitGate waits, when the page has a request held now, until the gate lets it go. It
// reports whether it waited.
func (p *pacer) awaitGate(ctx context.Context) (bool, error) {
	if p == nil {
		return false, nil
	}
	p.mu.Lock()
	d := time.Until(minTime(p.gate, p.until))
	held := p.held > 0
	p.mu.Unlock()
	if !held || d <= 0 {
		return false, nil
	}
	return true, sleepCtx(ctx, d)
}

// gatedAny reports whether the gate has held any request: what the pass asked then reached
// the page's server only at the gate.
func (p *pacer) gatedAny() bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.gated > 0
}

// request is told of every request the page makes to a fetchable origin, before it leaves:
// it counts the early ones, and holds it until the gate, or the page closes.
func (p *pacer) request(url string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	now := time.Now()
	if !p.origin.IsZero() && p.origin.Add(time.Duration((p.ceiling-earlyMS)*float64(time.Millisecond))).After(now) {
		p.early++
	}
	d := p.gate.Sub(now)
	if p.gate.IsZero() || d <= 0 {
		p.mu.Unlock()
		return
	}
	p.held++
	p.gated++
	p.mu.Unlock()
	p.log.Debug("request held until the page's budget has passed in real time", "url", clip(url, 300), "hold_ms", d.Milliseconds())
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-p.closing:
		t.Stop()
	}
	p.mu.Lock()
	p.held--
	p.mu.Unlock()
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
