package verify

import (
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
// So, while the page is watched, a request it makes leaves for the server no earlier in real
// time than the page could have made it in page time. The page clock moves only while the
// verifier grants it time, so that page time is at most the last probe answer's plus the
// grants since (the ceiling). A held request is a pending fetch, and the page clock waits for
// it. A page that asks nothing while watched costs nothing; one that polls to the end of its
// budget is watched for its budget in real time, as a person would watch it.

// pacer holds one page's requests until the wall clock has caught up with its page clock.
type pacer struct {
	mu sync.Mutex
	// origin is the document's time origin in real time, at the latest. Zero while the page
	// runs on the wall clock (before the first answer, after a navigation): nothing is held.
	origin  time.Time
	ceiling float64 // page time (ms) the page may have reached
	held    int     // requests held now
	// until: nothing is held past it (what is left of the page's real budget after the hold
	// at the final read), nor past closing.
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
	p.origin, p.ceiling = time.Time{}, 0
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

// due is when a request the page makes now may leave: the page's time origin plus the ceiling,
// at most until; zero while the page runs on the wall clock.
func (p *pacer) due() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.origin.IsZero() {
		return time.Time{}
	}
	d := p.origin.Add(time.Duration(p.ceiling * float64(time.Millisecond)))
	if d.After(p.until) {
		return p.until
	}
	return d
}

// wait holds a request the page made (for url) until it is due, or the page closes.
func (p *pacer) wait(url string) {
	if p == nil {
		return
	}
	d := time.Until(p.due())
	if d <= 0 {
		return
	}
	p.mu.Lock()
	p.held++
	p.mu.Unlock()
	p.log.Debug("request held until the wall clock reaches the page clock", "url", clip(url, 300), "hold_ms", d.Milliseconds())
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
