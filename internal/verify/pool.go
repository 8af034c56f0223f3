package verify

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/mxschmitt/playwright-go"
)

// Pool shares one browser among the runs that measure the same preview at the same time.
// Base checks of one tree (every quote on one repository and base commit) measure one shared
// preview that runs only the base commit's code, so their runs can share the browser too:
// each still gets browser contexts of its own, and the browser is closed when the last run
// lets go (or Linger later). Attempts never go through a Pool: each contract's own code gets a browser of its
// own.
type Pool struct {
	// Linger keeps a browser no run holds open this long for the next run (a quote's base
	// check and its lazy variants come one after another). Zero: closed at once.
	Linger time.Duration

	mu     sync.Mutex
	open   map[string]*pooled
	opened int
	closed bool // after Close, nothing lingers
}

// pooled is one shared browser and the runs holding it. ready is closed once sess or err is
// set; the runs that arrive while it opens wait on it instead of launching another.
type pooled struct {
	ready chan struct{}
	sess  *BrowserSession
	err   error
	refs  int
	idle  *time.Timer // set while no run holds it and it lingers
}

// Open returns the browser shared under key, opening one from src when none is open (or the
// open one disconnected). Closing the returned session lets go of it.
func (p *Pool) Open(ctx context.Context, pw *playwright.Playwright, key string, src BrowserSource) (*BrowserSession, error) {
	for {
		p.mu.Lock()
		if p.open == nil {
			p.open = map[string]*pooled{}
		}
		e := p.open[key]
		if e == nil {
			e = &pooled{ready: make(chan struct{}), refs: 1}
			p.open[key] = e
			p.opened++
			p.mu.Unlock()
			e.sess, e.err = src.Open(ctx, pw)
			close(e.ready)
			if e.err != nil {
				p.letGo(key, e)
				return nil, e.err
			}
			return p.handOut(key, e), nil
		}
		e.refs++
		if e.idle != nil {
			e.idle.Stop() // closeIdle checks refs, so a timer already firing does nothing
			e.idle = nil
		}
		p.mu.Unlock()
		select {
		case <-e.ready:
		case <-ctx.Done():
			p.letGo(key, e)
			return nil, ctx.Err()
		}
		if e.err == nil && e.sess.Browser.IsConnected() {
			return p.handOut(key, e), nil
		}
		// It failed to open or has gone away: take it out of the pool so that the next
		// pass opens another (the runs still holding it let go of it as they finish).
		p.mu.Lock()
		if p.open[key] == e {
			delete(p.open, key)
		}
		p.mu.Unlock()
		p.letGo(key, e)
		if e.err != nil && ctx.Err() == nil && !isRetryableOpen(e.err) {
			return nil, e.err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
}

// isRetryableOpen: another run's failure to launch is this run's too, unless it was that
// run's own context that ended.
func isRetryableOpen(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// handOut is the run's handle on a shared browser.
func (p *Pool) handOut(key string, e *pooled) *BrowserSession {
	var once sync.Once
	return &BrowserSession{Browser: e.sess.Browser, Info: e.sess.Info, release: func() error {
		once.Do(func() { p.letGo(key, e) })
		return nil
	}}
}

// letGo drops one run's hold. When it was the last, the browser is closed after Linger unless
// another run takes it first.
func (p *Pool) letGo(key string, e *pooled) {
	p.mu.Lock()
	e.refs--
	if e.refs > 0 {
		p.mu.Unlock()
		return
	}
	if p.Linger > 0 && !p.closed && e.err == nil && p.open[key] == e {
		e.idle = time.AfterFunc(p.Linger, func() { p.closeIdle(key, e) })
		p.mu.Unlock()
		return
	}
	if p.open[key] == e {
		delete(p.open, key)
	}
	p.mu.Unlock()
	if e.sess != nil {
		_ = e.sess.Close()
	}
}

// closeIdle closes a browser no run took during its linger.
func (p *Pool) closeIdle(key string, e *pooled) {
	p.mu.Lock()
	if e.refs > 0 || p.open[key] != e {
		p.mu.Unlock()
		return
	}
	delete(p.open, key)
	p.mu.Unlock()
	_ = e.sess.Close()
}

// Close closes the browsers no run holds; the rest close as their runs let go.
func (p *Pool) Close() {
	p.mu.Lock()
	var idle []*pooled
	for key, e := range p.open {
		if e.refs == 0 {
			delete(p.open, key)
			idle = append(idle, e)
			if e.idle != nil {
				e.idle.Stop()
			}
		}
	}
	p.closed = true
	p.mu.Unlock()
	for _, e := range idle {
		_ = e.sess.Close()
	}
}

// BaseBrowserLinger is how long a verify worker keeps a base check's browser for the next
// run: longer than the gap between a quote's verifications, short enough that an idle worker
// holds no browser.
const BaseBrowserLinger = 30 * time.Second

// openedCount is how many browsers the pool has opened so far.
func (p *Pool) openedCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.opened
}

// heldCount is how many browsers the pool holds open now.
func (p *Pool) heldCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.open)
}
