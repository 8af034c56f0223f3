package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/signoff/signoff/contracts"
)

// mainWorld evaluates a measure expression in the page's own world, on purpose: it measures the
// app as the app sees itself.
func (r *run) mainWorld(ctx context.Context, page playwright.Page, expr string, deadline time.Time) (any, error) {
	var v any
	err := guard(ctx, deadline, func() (err error) { v, err = page.Evaluate(expr); return err })
	if err != nil {
		return nil, classify(err, deadline)
	}
	return v, nil
}

func (r *run) locatorAction(page playwright.Page, a contracts.Action, deadline time.Time) error {
	ms, err := budgetMS(deadline, a.TimeoutMS)
	if err != nil {
		return err
	}
	if a.Type == contracts.ActionPress && a.Selector == "" {
		// On whatever has focus: the keyboard has no timeout of its own.
		err := guard(context.Background(), deadline, func() error { return page.Keyboard().Press(a.Key) })
		if err == nil {
			err = r.afterInput(page, deadline)
		}
		return classify(err, deadline)
	}
	// The first visible match: a selector may match both a desktop and a mobile rendering of
	// the same thing, only one of which is shown.
	loc := page.Locator(a.Selector).Filter(playwright.LocatorFilterOptions{Visible: playwright.Bool(true)}).First()
	switch a.Type {
	case contracts.ActionClick:
		err = personClick(r.log, page, loc, a.Selector, ms)
		if err == nil {
			err = r.afterInput(page, deadline)
		}
	case contracts.ActionPress:
		err = loc.Press(a.Key, playwright.LocatorPressOptions{Timeout: playwright.Float(ms)})
		if err == nil {
			err = r.afterInput(page, deadline)
		}
	case contracts.ActionFill:
		err = loc.Fill(a.Value, playwright.LocatorFillOptions{Timeout: playwright.Float(ms)})
	case contracts.ActionWaitFor:
		err = loc.WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateVisible, Timeout: playwright.Float(ms)})
	}
	return classify(err, deadline)
}

// tapHold is how long a person's finger or mouse button stays down on a click (50 to 150
// ms).
const tapHold = 90.0

// personClick clicks as a person does: held for tapHold, on a spot of the element that is not
// its exact centre; on a phone a touch (tap), on a desktop the mouse moved in first.
// Playwright's click is a mouse press and release at the centre in the same instant, on a
// phone too, which a page can tell from a person's and answer differently (the goal
// adversaries click-only-*). Playwright still decides when the element can take the click
// (visible, stable, enabled, not covered at that spot: a trial click on a phone), and on a
// desktop makes it and waits for a navigation it starts; tap waits so for its own.
func personClick(log *slog.Logger, page playwright.Page, loc playwright.Locator, selector string, ms float64) error {
	// One timeout for the whole click, not one per step.
	end := time.Now().Add(time.Duration(ms) * time.Millisecond)
	left := func() *float64 { return playwright.Float(max(1, float64(time.Until(end).Milliseconds()))) }
	if err := loc.ScrollIntoViewIfNeeded(playwright.LocatorScrollIntoViewIfNeededOptions{Timeout: left()}); err != nil {
		return err
	}
	box, err := loc.BoundingBox(playwright.LocatorBoundingBoxOptions{Timeout: left()})
	if err != nil {
		return err
	}
	if box == nil || box.Width <= 0 || box.Height <= 0 {
		return errors.New("the element has no box to click")
	}
	fx, fy := clickSpot(selector)
	spot := &playwright.Position{X: box.Width * fx, Y: box.Height * fy}
	if vp := page.ViewportSize(); vp != nil && contracts.IsPhone(contracts.Viewport{Width: vp.Width, Height: vp.Height}) {
		if err := loc.Click(playwright.LocatorClickOptions{Trial: playwright.Bool(true), Position: spot, Timeout: left()}); err != nil {
			return err
		}
		// Where the element is now that the trial has waited for it to be still.
		if box, err = loc.BoundingBox(playwright.LocatorBoundingBoxOptions{Timeout: left()}); err != nil {
			return err
		}
		if box == nil {
			return errors.New("the element has no box to click")
		}
		return tap(log, page, box.X+box.Width*fx, box.Y+box.Height*fy, end)
	}
	x, y := box.X+spot.X, box.Y+spot.Y
	m := page.Mouse()
	if err := m.Move(x-37, y-23); err != nil {
		return err
	}
	if err := m.Move(x, y, playwright.MouseMoveOptions{Steps: playwright.Int(5)}); err != nil {
		return err
	}
	return loc.Click(playwright.LocatorClickOptions{Position: spot, Delay: playwright.Float(tapHold), Timeout: left()})
}

// clickSpot is where on an element a click lands, as fractions of its box: off the centre by
// 5 to 15 % each way, the same for the same selector (a verdict does not depend on a draw).
func clickSpot(selector string) (fx, fy float64) {
	h := fnv.New64a()
	h.Write([]byte(selector))
	v := h.Sum64()
	frac := func(bits uint64) float64 {
		f := 0.05 + 0.10*float64(bits%1000)/999 // 0.05 .. 0.15 off the centre
		if bits&(1<<20) != 0 {
			f = -f
		}
		return 0.5 + f
	}
	return frac(v), frac(v >> 32)
}

// afterInput lets a document a click or a key press navigated to load before anything is
// read.
func (r *run) afterInput(page playwright.Page, deadline time.Time) error {
	ms, err := budgetMS(deadline, 0)
	if err != nil {
		return nil // the next step reports the deadline
	}
	return page.WaitForLoadState(playwright.PageWaitForLoadStateOptions{State: playwright.LoadStateLoad, Timeout: playwright.Float(ms)})
}

// delayRoute holds matching requests for DelayMS before letting them through, so a contract
// can check what the app shows while its data is slow (the loading state).
func (r *run) delayRoute(ctx context.Context, bctx playwright.BrowserContext, a contracts.Action, closing <-chan struct{}) error {
	delay := time.Duration(a.DelayMS) * time.Millisecond
	pattern := joinRoute(r.base, a.Route)
	err := bctx.Route(pattern, func(route playwright.Route) {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		case <-closing:
			return
		}
		_ = route.Continue()
	})
	if err != nil {
		return fmt.Errorf("delay_route %s: %w", a.Route, err)
	}
	return nil
}

// seedItems is the seed's localStorage, sorted by key, as [key, value] pairs: a JSON string
// value is stored as the string itself; anything else as its compact JSON text.
func seedItems(seed *contracts.Seed) ([][2]string, error) {
	if seed == nil || len(seed.LocalStorage) == 0 {
		return nil, nil
	}
	keys := make([]string, 0, len(seed.LocalStorage))
	for k := range seed.LocalStorage {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	items := make([][2]string, 0, len(keys))
	for _, k := range keys {
		raw := seed.LocalStorage[k]
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			var buf bytes.Buffer
			if err := json.Compact(&buf, raw); err != nil {
				return nil, fmt.Errorf("seed %q: %w", k, err)
			}
			s = buf.String()
		}
		items = append(items, [2]string{k, s})
	}
	return items, nil
}

// The seed is written by a script of the verifier's own, in a world of its own: the page's
// scripts cannot call its report (seedBinding exists only in seedWorld) nor stop it.
const (
	seedWorld   = "signoff-seed"
	seedBinding = "signoffSeeded"
)

// seeder writes the seed into the preview origin's localStorage from the page's first
// top-level document on that origin, as that document is created: before any of its scripts
// run, with no request of its own and no visit in the page's history. The script is withdrawn
// as soon as that document reports, so the seed is written once and the app's own writes are
// never clobbered. (A document the app replaces within those few milliseconds, before the
// withdrawal lands, is seeded again: that only puts back the contract's own starting state,
// which the app could write itself.) Writing it from a blank page of the origin first cost
// every seeded page a navigation there and back (about 200 ms of W1's phone page);
// Playwright's storage state costs a renderer of its own (0.7 to 1.1 s).
type seeder struct {
	origin string // the preview's, as originGuard has it
	want   int
	id     string
	once   sync.Once
	done   chan struct{} // closed once rep holds the first report
	rep    seedReport
}

// seedReport is what the seed script says of its write.
type seedReport struct {
	Stored int    `json:"n"`    // localStorage.length after the write
	Name   string `json:"name"` // the exception's name when the write threw
	Err    string `json:"err"`
}

// armSeed registers the seed script with the page's CDP session (Runtime.addBinding and
// Page.addScriptToEvaluateOnNewDocument), before the page is navigated to origin.
func armSeed(cdp playwright.CDPSession, origin string, items [][2]string) (*seeder, error) {
	itemsJS, err := json.Marshal(items) // [["key", "value"], ...]: a string crosses as it is
	if err != nil {
		return nil, fmt.Errorf("seed localStorage: %w", err)
	}
	originJS, err := json.Marshal(origin)
	if err != nil {
		return nil, fmt.Errorf("seed localStorage: %w", err)
	}
	s := &seeder{origin: origin, want: len(items), done: make(chan struct{})}
	cdp.On("Runtime.bindingCalled", func(ev map[string]any) {
		if ev["name"] != seedBinding {
			return
		}
		var rep seedReport
		payload, _ := ev["payload"].(string)
		if err := json.Unmarshal([]byte(payload), &rep); err != nil {
			rep = seedReport{Stored: -1, Err: "unreadable report: " + err.Error()}
		}
		s.once.Do(func() {
			s.rep = rep
			close(s.done)
			// Not from the event's own goroutine: a CDP call waits on the connection
			// that delivers events.
			go func() {
				_, _ = cdp.Send("Page.removeScriptToEvaluateOnNewDocument", map[string]any{"identifier": s.id})
				_, _ = cdp.Send("Runtime.disable", nil)
			}()
		})
	})
	// This session's page agent runs its new-document scripts only when enabled, and its
	// runtime installs a binding in new worlds only when enabled: both, until the report.
	for _, m := range []string{"Page.enable", "Runtime.enable"} {
		if _, err := cdp.Send(m, nil); err != nil {
			return nil, fmt.Errorf("seed localStorage: %w", worldErr(m, err))
		}
	}
	if _, err := cdp.Send("Runtime.addBinding", map[string]any{"name": seedBinding, "executionContextName": seedWorld}); err != nil {
		return nil, fmt.Errorf("seed localStorage: %w", worldErr("Runtime.addBinding", err))
	}
	src := fmt.Sprintf(`(() => {
	if (window !== window.top) return;
	let here;
	try { here = new URL(location.href).origin; } catch { return; }
	if (here !== %s) return;
	const rep = { n: -1, name: "", err: "" };
	try {
		localStorage.clear();
		for (const [k, v] of %s) localStorage.setItem(k, v);
		rep.n = localStorage.length;
	} catch (e) {
		rep.name = String((e && e.name) || "");
		rep.err = String((e && e.message) || e);
	}
	const report = globalThis[%q];
	if (typeof report === "function") report(JSON.stringify(rep));
})()`, originJS, itemsJS, seedBinding)
	res, err := cdp.Send("Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": src, "worldName": seedWorld})
	if err != nil {
		return nil, fmt.Errorf("seed localStorage: %w", worldErr("Page.addScriptToEvaluateOnNewDocument", err))
	}
	s.id, _ = dig(res, "identifier").(string)
	if s.id == "" {
		return nil, errors.New("seed localStorage: Page.addScriptToEvaluateOnNewDocument gave no identifier")
	}
	return s, nil
}

// written waits, once the page has loaded a document on the preview's origin, for that
// document's report, and says whether the seed is in place. A document that denies itself
// storage (an opaque origin, as a CSP sandbox makes it) cannot read the seed either: that is
// the app's doing, and the page is measured as it is. A page still elsewhere (a redirect to
// an allowed origin) has not been seeded yet: its first document on the origin will be.
func (s *seeder) written(ctx context.Context, page playwright.Page, deadline time.Time, log *slog.Logger) error {
	if s == nil || contracts.Origin(page.URL()) != s.origin {
		return nil
	}
	end := time.NewTimer(time.Until(deadline))
	defer end.Stop()
	select {
	case <-s.done:
	case <-ctx.Done():
		return ctx.Err()
	case <-end.C:
		return fmt.Errorf("%w: the page's document on %s never reported the seed written", errDeadline, s.origin)
	}
	switch rep := s.rep; {
	case rep.Name == "SecurityError":
		log.Debug("the app's document denies itself localStorage; the seed is not there for it to read", "error", rep.Err)
		return nil
	case rep.Err != "":
		return fmt.Errorf("seed localStorage: %s", rep.Err)
	case rep.Stored != s.want:
		return fmt.Errorf("seed localStorage: %d items stored, want %d", rep.Stored, s.want)
	}
	return nil
}
