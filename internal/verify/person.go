package verify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/signoff/signoff/contracts"
)

// What happens to a page outside its own clock, and what a person does to it. The page clock
// (Chromium's virtual time) covers the page's timers, but not a dedicated worker's timers nor
// a response that takes its time in the real world; and a person on a phone scrolls, swipes
// and taps before they are done looking. Both can change what the page shows.

// touchStepMS is how much page time passes after each of a person's gestures, so the page's
// handlers (scroll events come with the next frame) run before the next one.
const touchStepMS = 300

// touches decides whether a criterion is read again after a person's pass: at a phone's
// width, for a criterion about what the page shows on load (one with no input of its own: a
// tap on an empty area would close the dialog its click opened).
func touches(c contracts.Criterion, vp contracts.Viewport) bool {
	return contracts.IsPhone(vp) && !slices.ContainsFunc(c.Actions, isInput)
}

// touch is a person's pass over a settled page: a scroll to the bottom and back, a wheel
// down and up, a tap on a spot with nothing to tap on, and a key press. The page clock runs a
// little after each, so what the page does in answer is on screen at the next read.
func (r *run) touch(ctx context.Context, w *world, clk pageClock, call func(map[string]any) (map[string]any, error), settleMS float64, deadline time.Time) error {
	p, err := loadParams()
	if err != nil {
		return err
	}
	step := func(ms int) error { return clk.advance(ctx, ms, deadline) }
	send := func(method string, args map[string]any) error {
		return guard(ctx, deadline, func() error {
			if _, err := w.sendPainted(method, args); err != nil {
				return worldErr(method, err)
			}
			return nil
		})
	}
	// To the bottom, then back where the page was (a page may have scrolled itself).
	res, err := call(map[string]any{"op": "scroll", "to": "bottom", "params": p.raw})
	if err != nil {
		return fmt.Errorf("scroll to the bottom: %w", err)
	}
	if err := step(touchStepMS); err != nil {
		return err
	}
	before, _ := res["before"].(float64)
	if _, err := call(map[string]any{"op": "scroll", "to": before, "params": p.raw}); err != nil {
		return fmt.Errorf("scroll back: %w", err)
	}
	if err := step(touchStepMS); err != nil {
		return err
	}
	spot, err := call(map[string]any{"op": "spot", "params": p.raw})
	if err != nil {
		return fmt.Errorf("find an empty spot: %w", err)
	}
	x, _ := dig(spot, "spot", "x").(float64)
	y, _ := dig(spot, "spot", "y").(float64)
	if dig(spot, "spot") == nil {
		x, y = 1, 1
	}
	for _, dy := range []float64{120, -120} {
		if err := send("Input.dispatchMouseEvent", map[string]any{"type": "mouseWheel", "x": x, "y": y, "deltaX": 0, "deltaY": dy}); err != nil {
			return err
		}
		if err := step(touchStepMS); err != nil {
			return err
		}
	}
	if dig(spot, "spot") != nil {
		pt := []map[string]any{{"x": x, "y": y, "radiusX": 4, "radiusY": 4, "force": 1, "id": 1}}
		if err := send("Input.dispatchTouchEvent", map[string]any{"type": "touchStart", "touchPoints": pt}); err != nil {
			return err
		}
		if err := send("Input.dispatchTouchEvent", map[string]any{"type": "touchEnd", "touchPoints": []any{}}); err != nil {
			return err
		}
	}
	for _, typ := range []string{"keyDown", "keyUp"} {
		if err := send("Input.dispatchKeyEvent", map[string]any{"type": typ, "key": "Shift", "code": "ShiftLeft", "windowsVirtualKeyCode": 16}); err != nil {
			return err
		}
	}
	return step(int(math.Ceil(settleMS)))
}

// pendingLog tracks the page's fetches and XHRs in flight, as Playwright sees them, and whether
// it opened a WebSocket or an event stream.
type pendingLog struct {
	mu      sync.Mutex
	open    map[playwright.Request]string
	streams atomic.Bool
	changed chan struct{}
	shared  *sharedWorkers // nil: not asked
}

func newPendingLog(page playwright.Page, shared *sharedWorkers) *pendingLog {
	l := &pendingLog{open: map[playwright.Request]string{}, changed: make(chan struct{}, 1), shared: shared}
	page.OnWebSocket(func(playwright.WebSocket) { l.streams.Store(true) })
	page.OnRequest(func(req playwright.Request) {
		t := req.ResourceType()
		if t == "eventsource" {
			l.streams.Store(true)
		}
		if t != "fetch" && t != "xhr" {
			return
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		if len(l.open) < maxLoggedRequests {
			l.open[req] = req.Method() + " " + clip(req.URL(), 300)
		}
	})
	end := func(req playwright.Request) {
		l.mu.Lock()
		delete(l.open, req)
		l.mu.Unlock()
		select {
		case l.changed <- struct{}{}:
		default:
		}
	}
	page.OnRequestFinished(end)
	page.OnRequestFailed(end)
	return l
}

// pending lists the requests in flight, of only those when only is not nil.
func (l *pendingLog) pending(only map[playwright.Request]bool) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.open))
	for req, s := range l.open {
		if only == nil || only[req] {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// inFlight is the set of requests in flight now.
func (l *pendingLog) inFlight() map[playwright.Request]bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := make(map[playwright.Request]bool, len(l.open))
	for req := range l.open {
		m[req] = true
	}
	return m
}

// outside reports whether the page has a clock of its own outside the page clock: a dedicated
// or shared worker (its timers run on the wall clock), a WebSocket or an event stream (its
// server may push, or answer what the page asks, on the wall clock).
func (l *pendingLog) outside(page playwright.Page) bool {
	return l.streams.Load() || len(page.Workers()) > 0 || l.shared.any()
}

// sharedWorkers finds the shared workers of a page's browser context. A shared worker belongs
// to the browser, not to the page: Page.Workers does not list it and the page's virtual clock
// does not govern its timers, so the browser's targets are asked.
type sharedWorkers struct {
	browser func() (playwright.CDPSession, error) // the browser target's session (run)
	page    playwright.CDPSession
	log     *slog.Logger
	once    sync.Once
	context string // the page's browser context id
	err     error
	found   atomic.Bool // a shared worker was seen; a worker found stays found
}

// any reports whether the page's browser context runs a shared worker. When the browser
// cannot say, the answer is yes: the page is then watched in real time, never judged on a
// clock that may not govern it.
func (s *sharedWorkers) any() bool {
	if s == nil {
		return false
	}
	if s.found.Load() {
		return true
	}
	s.once.Do(func() {
		res, err := cdpSend(s.log, s.page, "Target.getTargetInfo", nil)
		s.context, _ = dig(res, "targetInfo", "browserContextId").(string)
		if err == nil && s.context == "" {
			err = errors.New("no browser context id")
		}
		s.err = err
	})
	err := s.err
	if err == nil {
		var bs playwright.CDPSession
		if bs, err = s.browser(); err == nil {
			var res any
			if res, err = cdpSend(s.log, bs, "Target.getTargets", map[string]any{"filter": []map[string]any{{"type": "shared_worker"}}}); err == nil {
				infos, _ := dig(res, "targetInfos").([]any)
				for _, t := range infos {
					if id, _ := dig(t, "browserContextId").(string); id == s.context {
						s.found.Store(true)
						return true
					}
				}
			}
		}
	}
	if err != nil {
		s.log.Warn("cannot list the browser's shared workers; the page is watched as if it had one", "error", err)
		return true
	}
	return false
}

// holdMargin is what the hold leaves of the real budget for the read after it, the
// screenshot and the trace.
const holdMargin = 3 * time.Second

// errPending: the budget ended with requests still in flight. The page's answer to them was
// never seen, so nothing can be said about it: an error, never a pass.
var errPending = fmt.Errorf("requests still pending at the end of the budget")

// hold waits in real time, at the final read, for what the page clock does not cover: a page
// with workers, a WebSocket or an event stream (opened at a person's pass: one opened before
// has the page measured on the wall clock) until its budget has passed in real time since it
// loaded, and every fetch or XHR until it completes. On the wall clock (wall), the page's
// timers keep running while it waits, and a page that polls always has a fetch in flight: it
// waits for those in flight when it is called, not for the ones the page starts after.
func (l *pendingLog) hold(page playwright.Page, loaded time.Time, budget time.Duration, wall bool) func(context.Context, time.Time) (bool, error) {
	return func(ctx context.Context, deadline time.Time) (bool, error) {
		var only map[playwright.Request]bool
		if wall {
			only = l.inFlight()
		}
		until := deadline.Add(-holdMargin)
		waited := false
		if l.outside(page) {
			end := loaded.Add(budget)
			if end.After(until) {
				end = until
			}
			if d := time.Until(end); d > 0 {
				if err := sleepCtx(ctx, d); err != nil {
					return false, err
				}
				waited = true
			}
		}
		for {
			open := l.pending(only)
			if len(open) == 0 {
				return waited, nil
			}
			waited = true
			left := time.Until(until)
			if left <= 0 {
				if len(open) > 5 {
					open = append(open[:5], fmt.Sprintf("and %d more", len(open)-5))
				}
				return false, fmt.Errorf("%w: %s", errPending, strings.Join(open, ", "))
			}
			t := time.NewTimer(left)
			select {
			case <-l.changed:
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return false, ctx.Err()
			}
			t.Stop()
		}
	}
}
