package verify

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/signoff/signoff/contracts"
)

// Why a read was made, as evidence records it.
const (
	ReadSettled  = "settled"  // the first read, once the page went quiet
	ReadChanged  = "changed"  // the DOM or the layout changed since the last read
	ReadPeriodic = "periodic" // periodic_read_ms passed without a read
	ReadFinal    = "final"    // the page clock reached the criterion's budget
	ReadTouched  = "touched"  // after a person's scroll to the end and back, wheel, tap and key
)

// watch is what observe does besides the probe's reads.
type watch struct {
	// fill completes each read with what the verifier reads outside the page (the URL,
	// requests, pixels), right after the probe's read and before the clock moves on.
	fill func(w *world, results []any, why string) error
	// hold, at the final read, waits in real time for what runs outside the page clock
	// (pending fetches, workers). It reports whether it waited (the page is then read again)
	// and fails when requests are still pending at the deadline.
	hold func(ctx context.Context, deadline time.Time) (bool, error)
	// touch: after the final read, a person's scroll to the bottom and back, a wheel, a tap
	// on an empty area and a key press, then a read that must hold too.
	touch bool
	// phone: the viewport is a phone's (the probe reads the visual viewport's width).
	phone bool
	// beforeTouch, when set, is called right before the person's pass.
	beforeTouch func()
	// pace, when set, is told the page clock's every answer and grant: it knows when the
	// page's budget passes in real time, and holds what the page asks at a person's pass.
	pace *pacer
	// talks, when set, says whether the page talks to the world outside its clock (it asked
	// its server ahead of the wall clock, opened a socket or a stream, started a worker). Such
	// a page can tell its clock from its server's: on the virtual clock, observe ends with
	// errWallClock at the final read, and the page is measured again on the wall clock.
	talks func() bool
	// wall: the page is watched on the wall clock (realClock), not the virtual one.
	wall bool
}

// errWallClock: the page talks to the world outside its clock, so what it shows may depend on
// how far its clock ran ahead of the wall clock (a page that asks its server the time twice
// knows the verifier's clock from a person's). It is measured again from the start on a new
// page, on the wall clock.
var errWallClock = errors.New("the page talks outside its clock; measure it on the wall clock")

// touchWatch is how long, in real time, a page that talks outside its clock is watched after
// a person's pass: the answers to what the pass asked of a socket, a stream or a worker come
// on the wall clock (a person looking at the page sees them come).
const touchWatch = 3 * time.Second

// pageRead is one full read of a criterion's assertion at one viewport.
type pageRead struct {
	atMS    float64 // page time: ms since the document's time origin
	why     string
	results []any
	url     string // the page's URL at the read
}

// pageClock advances the page's time between polls.
type pageClock interface {
	// advance lets ms of page time pass.
	advance(ctx context.Context, ms int, deadline time.Time) error
	// answered is told the page time of every probe answer.
	answered(pageMS float64)
	// restart is called when the page navigated to a new document.
	restart()
	// release is called once the page is read.
	release()
}

// virtualClock drives the page on Chromium's virtual time: while the verifier waits, timers
// fire as fast as the page can run them and the clock stops while fetches are pending. A page
// is watched for the criterion's whole budget of page time at a fraction of it in real time,
// and what a slow page shows after a second is measured, not missed.
type virtualClock struct {
	// world is the probe's: its session grants the page time, and the page's main thread is
	// asked through it whether it still answers.
	world   *world
	expired chan struct{}
	stall   time.Duration
	policy  string
	log     *slog.Logger
	// origin is the document's time origin in real time (at the latest) and page the page
	// time it has reached, as far as the probe's answers and the grants since tell: what
	// advance compares with the wall clock.
	origin time.Time
	page   float64
	pace   *pacer // told of every answer and grant; while it holds a request, no stall
}

// catchUpMarginMS: advance lets a page clock less than this far ahead of the wall clock catch
// up, to twice this far ahead (more than a read and a screenshot take).
const catchUpMarginMS = 250

// maxCatchUps bounds the grants one catch-up makes: each may meet a fetch that keeps the page
// clock behind again.
const maxCatchUps = 4

const (
	vtWaitForFetches = "pauseIfNetworkFetchesPending"
	vtAdvance        = "advance"
	vtPause          = "pause"
)

func newVirtualClock(w *world, stall time.Duration, pace *pacer, log *slog.Logger) *virtualClock {
	c := &virtualClock{world: w, expired: make(chan struct{}, 1), stall: stall, policy: vtWaitForFetches, pace: pace, log: log}
	w.cdp.On("Emulation.virtualTimeBudgetExpired", func() {
		select {
		case c.expired <- struct{}{}:
		default:
		}
	})
	return c
}

// grant lets the page run ms more of page time under policy. Its answer comes from the page's
// main thread, so it is waited for on the returned channel, beside the page's expiry.
func (c *virtualClock) grant(policy string, ms int) <-chan error {
	select { // a late expiry of an earlier grant
	case <-c.expired:
	default:
	}
	c.pace.granted(ms) // before the page can run into it
	sent := make(chan error, 1)
	go func() {
		_, err := c.world.send("Emulation.setVirtualTimePolicy", map[string]any{"policy": policy, "budget": ms})
		if err != nil {
			err = worldErr("Emulation.setVirtualTimePolicy", err)
		}
		sent <- err
	}()
	return sent
}

// answered records the page time of a probe answer; the first one fixes the origin (the page
// ran on the wall clock until the first grant).
func (c *virtualClock) answered(pageMS float64) {
	if c.origin.IsZero() {
		c.origin = time.Now().Add(-time.Duration(pageMS * float64(time.Millisecond)))
	}
	c.page = pageMS
	c.pace.answered(c.origin, pageMS)
}

// restart forgets the origin: the page navigated, and its new document has its own.
func (c *virtualClock) restart() {
	c.origin = time.Time{}
	c.pace.restart()
}

// advance lets ms of page time pass, then catches the page clock up with the wall clock.
//
// Chromium gave a page no frame while its virtual clock was behind the wall clock: its
// screenshots (clipped or not) and requestAnimationFrame waited until the page clock was let
// run past the lag, which under a paused clock is never (TestSlowFetchesKeepFrames). The clock
// falls behind when it waits on a fetch that takes a second or more of real time (a slow API
// the page polls), since it does not move while the fetch is pending. A person's page would
// have lived through that time, so after such a step the page's timers run on (not waiting on
// fetches) until its clock is ahead of the wall clock again.
func (c *virtualClock) advance(ctx context.Context, ms int, deadline time.Time) error {
	if err := c.step(ctx, c.policy, ms, deadline); err != nil {
		return err
	}
	c.page += float64(ms)
	for i := 0; i < maxCatchUps && !c.origin.IsZero(); i++ {
		lag := float64(time.Since(c.origin).Microseconds())/1000 - c.page
		if lag <= -catchUpMarginMS {
			return nil
		}
		up := int(math.Ceil(lag + 2*catchUpMarginMS))
		c.log.Debug("page clock behind the wall clock; letting it catch up", "lag_ms", int(lag), "grant_ms", up)
		if err := c.step(ctx, vtAdvance, up, deadline); err != nil {
			return err
		}
		c.page += float64(up)
	}
	return nil
}

// errStuck: the page's script did not yield while its clock stood still. On the virtual clock
// no time passes inside one task of the page's script, so a loop that waits for the clock to
// move (a busy wait of a few milliseconds, nothing on a person's phone) never ends, and the
// browser answers nothing more of that page. It is measured again on the wall clock.
var errStuck = fmt.Errorf("%w: its script did not yield while its clock stood still (a loop that waits on the clock)", errWallClock)

// errUnanswered: a read of the page went unanswered until the real budget ran out, its script
// busy all along (on the wall clock too).
var errUnanswered = fmt.Errorf("%w: the page's script never yielded to a read (a loop that does not end)", errDeadline)

// liveWait is how long the page's main thread may leave a question unanswered, once its clock
// stalled, before the page counts as stuck: a busy host answers in far less (frameWait).
const liveWait = 10 * time.Second

// step grants ms of page time under policy and waits until they have passed.
//
// A grant is answered by the page's main thread, so it is sent beside the wait: a page stuck
// in a loop answers neither it nor its expiry. Each time the clock stalls the page is asked
// whether it still answers (live), and a page that does not is errStuck.
func (c *virtualClock) step(ctx context.Context, policy string, ms int, deadline time.Time) error {
	sent := c.grant(policy, ms)
	stall := time.NewTimer(c.stall)
	defer stall.Stop()
	end := time.NewTimer(time.Until(deadline))
	defer end.Stop()
	for {
		select {
		case err := <-sent:
			if err != nil {
				return err
			}
			sent = nil // answered: the expiry comes next
		case <-c.expired:
			return nil
		case <-stall.C:
			if err := c.live(ctx, deadline); err != nil {
				return err
			}
			stall.Reset(c.stall)
			if policy == vtAdvance {
				continue
			}
			if c.pace.holding() {
				// The fetch the clock waits on is held until the page's budget has passed
				// in real time (a person's pass), and then goes.
				continue
			}
			// A fetch that never completes (a long poll, a stream) would stop the clock
			// for good: from here on it runs whatever is pending.
			c.policy, policy = vtAdvance, vtAdvance
			c.log.Debug("virtual clock stalled on pending fetches; letting it run", "step_ms", ms)
			sent = c.grant(policy, ms)
		case <-end.C:
			return errDeadline
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// live asks the page's main thread for an answer (an evaluation of nothing in the probe's
// world): errStuck when none comes within liveWait (or half of what is left of the real budget).
func (c *virtualClock) live(ctx context.Context, deadline time.Time) error {
	// Within half of what is left of the real budget: a page found stuck is measured again,
	// and a short budget leaves it no more.
	until := time.Now().Add(min(liveWait, time.Until(deadline)/2))
	err := guard(ctx, until, func() error {
		_, err := c.world.send("Runtime.evaluate", map[string]any{"expression": "0", "contextId": c.world.contextID})
		return err
	})
	switch {
	case errors.Is(err, errDeadline) && time.Now().Before(deadline):
		c.log.Debug("the page's main thread answers nothing while its clock stands still; measuring it again on the wall clock")
		return errStuck
	case errors.Is(err, errDeadline), ctx.Err() != nil:
		return cmp.Or(ctx.Err(), err)
	}
	return nil // answered, even with an error (the world went with a navigation): not stuck
}

// release stops the page's clock where the last read left it: the screenshot and the trace
// then show the state that was read, and a page with busy timers does not spin on a clock
// that would otherwise fast-forward. A stuck page answers nothing: release does not wait on it.
func (c *virtualClock) release() {
	_ = guard(context.Background(), time.Now().Add(c.stall), func() error {
		_, err := c.world.send("Emulation.setVirtualTimePolicy", map[string]any{"policy": vtPause})
		return err
	})
}

// realClock waits in real time. It serves criteria that hold a route on purpose (delay_route):
// what they check is what the page shows while its data is held, in real time.
type realClock struct{}

func (realClock) advance(ctx context.Context, ms int, deadline time.Time) error {
	if !time.Now().Before(deadline) {
		return errDeadline
	}
	return sleepCtx(ctx, time.Duration(ms)*time.Millisecond)
}
func (realClock) answered(float64) {}
func (realClock) restart()         {}
func (realClock) release()         {}

// maxPageElements bounds the document a criterion is measured on.
const maxPageElements = 100_000

// observation is what observe saw at one viewport.
type observation struct {
	reads []pageRead
}

// observe watches the page and reads the assertion whenever what it shows may have changed,
// from the moment it settles to the end of the criterion's budget of page time.
//
// Settled means: the load event fired, no fetch pending (the virtual clock stops for them, up
// to stall_ms of real time), and no DOM mutation or layout change for quiet_ms of page time;
// geometry assertions also need something rendered. A page that never goes quiet is read from
// busy_fallback_ms on. After the first read, the page clock runs to endMS in steps of
// observe_step_ms, and the assertion is read at every step and at the end. A criterion passes
// only if it holds at every read.
//
// Past share (real time), the page clock jumps to endMS in one step: the final read is never
// skipped, the reads between may be.
//
// With held (a delay_route), the page is watched in real time and read once, after
// held_quiet_ms without a mutation: the check is about the state while the data is held.
// With wo.wall, the page is watched as above with the same steps, on the wall clock
// (errWallClock says when).
//
// wo says what else happens around the reads (see watch).
func (r *run) observe(ctx context.Context, bctx playwright.BrowserContext, page playwright.Page, reads []probeRead, needContent, held bool, endMS float64, deadline, share time.Time, wo watch) (*observation, error) {
	p, err := loadParams()
	if err != nil {
		return nil, err
	}
	if ms, err := budgetMS(deadline, 0); err != nil {
		return nil, err
	} else if err := page.WaitForLoadState(playwright.PageWaitForLoadStateOptions{State: playwright.LoadStateLoad, Timeout: playwright.Float(ms)}); err != nil {
		return nil, classify(fmt.Errorf("wait for load: %w", err), deadline)
	}
	var w *world
	if err := guard(ctx, deadline, func() (err error) { w, err = newWorld(bctx, page, r.log); return err }); err != nil {
		return nil, classify(err, deadline)
	}
	w.frameWait, w.dropFrame = r.v.Config.frameWait, r.v.Config.dropFrame
	defer w.close()

	var clk pageClock = realClock{}
	quietMS, settleStep, observeStep := p.HeldQuietMS, p.HeldPollMS, p.HeldPollMS
	if !held {
		quietMS, settleStep, observeStep = p.QuietMS, p.SettleStepMS, p.ObserveStepMS
		if !wo.wall {
			clk = newVirtualClock(w, time.Duration(p.StallMS)*time.Millisecond, wo.pace, r.log)
		}
	}
	defer clk.release()

	// reset makes the world again in a new document: the page navigated on its own (a
	// client-side redirect), so measuring starts over there.
	reset := func() error {
		return guard(ctx, deadline, func() error {
			ms, err := budgetMS(deadline, 0)
			if err != nil {
				return err
			}
			if err := page.WaitForLoadState(playwright.PageWaitForLoadStateOptions{State: playwright.LoadStateLoad, Timeout: playwright.Float(ms)}); err != nil {
				return err
			}
			return w.create()
		})
	}
	install := map[string]any{"op": "install", "params": p.raw}
	// call runs one probe op, starting over in a new document when the page navigated.
	obs := &observation{}
	call := func(req map[string]any) (map[string]any, error) {
		for {
			var res map[string]any
			asked := time.Now()
			err := guard(ctx, deadline, func() (err error) { res, err = w.call(req, req["op"] != "poll"); return err })
			if errors.Is(err, errDeadline) && time.Since(asked) >= liveWait {
				err = errUnanswered
			}
			if !errors.Is(err, errWorldGone) {
				if err == nil && req["op"] != "install" {
					now, ok := dig(res, "now").(float64)
					if !ok {
						return nil, errors.New("probe: no page clock in the answer")
					}
					clk.answered(now)
				}
				return res, err
			}
			r.log.Debug("the page navigated while being observed; measuring the new document")
			obs.reads = nil
			clk.restart()
			if err := reset(); err != nil {
				return nil, err
			}
			if err := guard(ctx, deadline, func() error { _, err := w.call(install, true); return err }); err != nil && !errors.Is(err, errWorldGone) {
				return nil, err
			}
		}
	}
	if _, err := call(install); err != nil {
		return nil, classify(err, deadline)
	}

	poll := map[string]any{"op": "poll", "params": p.raw}
	read := map[string]any{"op": "read", "params": p.raw, "reads": reads, "content": needContent, "phone": wo.phone}
	var (
		settled   bool
		lastSig   string
		sigSince  float64 // page time the layout signature last changed
		mutations float64 // the quiet clock's count at the last read
		content   any     // whether the last read saw anything rendered
		quiet     float64 // page time since the last mutation, at the last poll
		start     = -1.0
		heldOnce  bool         // the real-time hold at the final read is done
		now       float64      // page time at the last answer
		polls     int          // probe calls answered
		answered  = time.Now() // when the last one was (or observing began)
	)
	// explain says what the page was doing when the budget ran out.
	explain := func(err error) error {
		err = classify(err, deadline)
		if errors.Is(err, errDeadline) {
			// Whether the page clock stopped between answers or an answer never came: on a
			// busy host, pages have waited out their whole budget here without a read.
			r.log.Debug("page out of real time", "settled", settled, "polls", polls, "page_ms", now-start,
				"quiet_ms", quiet, "since_last_answer_ms", time.Since(answered).Milliseconds())
		}
		switch {
		case !errors.Is(err, errDeadline), errors.Is(err, errUnanswered):
			return err
		case needContent && content == false:
			return fmt.Errorf("%w: the page rendered no visible content", errDeadline)
		case !settled:
			return fmt.Errorf("%w: the page did not settle (last DOM mutation %.0f ms of page time before)", errDeadline, quiet)
		}
		return err
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		op := poll
		if settled {
			op = read // after the first read, every step is a read
		}
		res, err := call(op)
		if err != nil {
			return nil, explain(err)
		}
		polls, answered = polls+1, time.Now()
		now, _ = res["now"].(float64)
		quiet, _ = res["quiet_ms"].(float64)
		count, _ := res["mutations"].(float64)
		if start < 0 {
			start = now
		}
		if n, _ := dig(res, "signature", "elements").(float64); n > maxPageElements {
			// Reads walk the whole DOM and fetch it over CDP: a page this large is refused
			// rather than allowed to exhaust the verifier.
			return nil, fmt.Errorf("the page has %.0f elements, more than the %d the verifier measures", n, maxPageElements)
		}
		sigB, _ := json.Marshal(res["signature"])
		sig := string(sigB)
		changed := sig != lastSig || count != mutations
		if sig != lastSig {
			lastSig, sigSince = sig, now
		}
		final := !held && now >= endMS
		// Past its share of real time (a busy host), a page not yet read is read as it is:
		// the clock then jumps to the end and the final read still sees what comes late.
		if !settled && (min(quiet, now-sigSince) >= quietMS || now-start >= p.BusyFallbackMS || final || time.Now().After(share)) {
			if res, err = call(read); err != nil {
				return nil, explain(err)
			}
			now, _ = res["now"].(float64)
			changed = false
		}
		if res["results"] != nil {
			results, _ := res["results"].([]any)
			if len(results) != len(reads) {
				return nil, fmt.Errorf("probe returned %d reads, asked %d", len(results), len(reads))
			}
			mutations, _ = res["mutations"].(float64)
			content = res["content"]
			if !needContent || content == true { // else nothing is rendered yet: not a read of the page
				why := ReadPeriodic
				switch {
				case !settled:
					why = ReadSettled
				case final:
					why = ReadFinal
				case changed:
					why = ReadChanged
				}
				if wo.fill != nil {
					if err := guard(ctx, deadline, func() error { return wo.fill(w, results, why) }); err != nil {
						if errors.Is(err, errWorldGone) {
							continue // the page navigated: the next poll measures the new document
						}
						return nil, explain(err)
					}
				}
				obs.reads = append(obs.reads, pageRead{atMS: now, why: why, results: results, url: page.URL()})
				settled = true
			}
		}
		if settled && final && !held && !wo.wall && wo.talks != nil && wo.talks() {
			r.log.Debug("the page talks outside its clock; measuring it again on the wall clock",
				"early_requests", wo.pace.earlyRequests())
			return nil, errWallClock
		}
		switch {
		case settled && final && !held && !heldOnce && wo.hold != nil:
			// What runs outside the page clock (a fetch still pending, a worker's timer)
			// may still change the page: wait for it in real time, then read again.
			heldOnce = true
			waited, err := wo.hold(ctx, deadline)
			if err != nil {
				return nil, explain(err)
			}
			if waited {
				obs.reads[len(obs.reads)-1].why = ReadPeriodic
				if err := clk.advance(ctx, settleStep, deadline); err != nil {
					return nil, explain(err)
				}
				continue
			}
			fallthrough
		case settled && (held || final):
			if wo.touch && !held {
				if wo.beforeTouch != nil {
					wo.beforeTouch()
				}
				// A person touches the page once its budget has passed: what the page asks
				// from here on reaches its server no earlier in real time (pacer).
				wo.pace.holdFrom(wo.pace.pageEnd(endMS))
				if err := r.touch(ctx, w, clk, call, quietMS, deadline); err != nil {
					return nil, explain(err)
				}
				// What the pass asked is answered and shown before the read: what the gate
				// holds (a socket's tunnel) goes first, then the fetches in flight.
				gateWaited, err := wo.pace.awaitGate(ctx)
				if err != nil {
					return nil, err
				}
				if wo.hold != nil || gateWaited {
					waited := gateWaited
					if wo.hold != nil {
						held, err := wo.hold(ctx, deadline)
						if err != nil {
							return nil, explain(err)
						}
						waited = waited || held
					}
					if waited {
						if err := clk.advance(ctx, settleStep, deadline); err != nil {
							return nil, explain(err)
						}
					}
				}
				readTouched := func() error {
					res, err := call(read)
					if err != nil {
						return explain(err)
					}
					results, _ := res["results"].([]any)
					if len(results) != len(reads) {
						return fmt.Errorf("probe returned %d reads, asked %d", len(results), len(reads))
					}
					now, _ := res["now"].(float64)
					if wo.fill != nil {
						if err := guard(ctx, deadline, func() error { return wo.fill(w, results, ReadTouched) }); err != nil {
							return explain(err)
						}
					}
					obs.reads = append(obs.reads, pageRead{atMS: now, why: ReadTouched, results: results, url: page.URL()})
					return nil
				}
				if err := readTouched(); err != nil {
					return nil, err
				}
				if wo.pace.gatedAny() || (wo.talks != nil && wo.talks()) {
					// What the pass asked outside the page clock (a socket or a stream opened
					// at the touch, a worker) is answered on the wall clock: the page is
					// watched on in real time for touchWatch, read at every step.
					until := minTime(time.Now().Add(touchWatch), deadline.Add(-holdMargin))
					for d := time.Until(until); d > 0; d = time.Until(until) {
						// On the wall clock a step is itself a wait in real time; the
						// virtual clock's is not, so real time is let pass first.
						if !wo.wall {
							if err := sleepCtx(ctx, min(time.Duration(observeStep)*time.Millisecond, d)); err != nil {
								return nil, err
							}
						}
						if err := clk.advance(ctx, observeStep, deadline); err != nil {
							return nil, explain(err)
						}
						if err := readTouched(); err != nil {
							return nil, err
						}
					}
				}
			}
			return obs, nil
		case !settled && final:
			return nil, explain(errDeadline)
		case len(obs.reads) >= p.MaxReads:
			// A page that changes at every step: the reads so far are the evidence, and
			// the last of them stands as the final one.
			obs.reads[len(obs.reads)-1].why = ReadFinal
			return obs, nil
		}
		step := observeStep
		switch {
		case !settled:
			step = settleStep
		case time.Now().After(share):
			// Real time is running short (a slow machine, a slow page): the clock jumps to
			// the end of the budget and the final read follows, the steps between skipped.
			step = max(observeStep, int(math.Ceil(endMS-now)))
		}
		if err := clk.advance(ctx, step, deadline); err != nil {
			return nil, explain(err)
		}
	}
}

// decide picks the read a viewport is judged on and records every read for the evidence: the
// first read at which any of the criterion's checks fails, else the last. So a criterion
// passes only if it held at every read, and the observed values show where it did not.
func decide(c contracts.Criterion, vp contracts.Viewport, lv []leaf, readOf []int, obs *observation) ([]any, []contracts.Read, error) {
	if len(obs.reads) == 0 {
		return nil, nil, errors.New("the page was never read")
	}
	prefix := contracts.ViewportPrefix(vp)
	all, err := contracts.ChecksFor(c)
	if err != nil {
		return nil, nil, err
	}
	var checks []contracts.Check
	for _, ch := range all {
		if strings.HasPrefix(ch.Key, prefix) {
			checks = append(checks, ch)
		}
	}
	chosen := -1
	records := make([]contracts.Read, 0, len(obs.reads))
	for i, rd := range obs.reads {
		m := map[string]any{}
		for li, l := range lv {
			if readOf[li] < 0 {
				continue
			}
			vals, _ := rd.results[readOf[li]].(map[string]any)
			for k, v := range vals {
				m[prefix+l.prefix+k] = v
			}
		}
		failing := []string{}
		for _, ch := range checks {
			if _, measured := m[ch.Key]; !measured {
				continue // not read by the probe (status, errors, measure): judged once, after
			}
			if contracts.EvaluateCheck(ch, m).Outcome == contracts.CheckFail {
				failing = append(failing, ch.Key)
			}
		}
		if len(failing) > 0 && chosen < 0 {
			chosen = i
		}
		records = append(records, contracts.Read{Viewport: vpName(vp), AtMS: int64(math.Round(rd.atMS)), Why: rd.why, Failing: failing, URL: clip(rd.url, 2000)})
	}
	if chosen < 0 {
		chosen = len(obs.reads) - 1
	}
	records[chosen].Decides = true
	return obs.reads[chosen].results, records, nil
}
