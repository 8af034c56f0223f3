package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
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
		err = loc.Click(playwright.LocatorClickOptions{Timeout: playwright.Float(ms)})
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

// seedStorage writes the seed into the preview origin's localStorage from the page itself,
// before the app is loaded, and only once, so the app's own writes are never clobbered. The
// page opens the origin's root on a blank document the verifier serves (the app's server is
// not asked and none of its scripts run), writes the items, goes back to about:blank and
// forgets both visits, so its history is an unseeded page's. It runs before the origin guard
// is installed: from then on every request is the app's. Playwright's storage state does the
// same on a page of its own, which cost every seeded context another renderer, 0.7 to 1.1 s
// of a W1 page's 2.6 to 3.3 s.
func (r *run) seedStorage(page playwright.Page, cdp playwright.CDPSession, items [][2]string, deadline time.Time) error {
	blank := r.base.Scheme + "://" + r.base.Host + "/"
	serve := func(rt playwright.Route) {
		_ = rt.Fulfill(playwright.RouteFulfillOptions{Status: playwright.Int(200),
			ContentType: playwright.String("text/html; charset=utf-8"), Body: "<html></html>"})
	}
	if err := page.Route(blank, serve, 1); err != nil {
		return fmt.Errorf("seed localStorage: %w", err)
	}
	ms, err := budgetMS(deadline, 0)
	if err != nil {
		return err
	}
	if _, err := page.Goto(blank, playwright.PageGotoOptions{Timeout: playwright.Float(ms)}); err != nil {
		return classify(fmt.Errorf("seed localStorage: open %s: %w", blank, err), deadline)
	}
	arg, err := json.Marshal(items) // [["key", "value"], ...]: a string crosses to the page as it is
	if err != nil {
		return fmt.Errorf("seed localStorage: %w", err)
	}
	n, err := page.Evaluate(`json => {
		localStorage.clear();
		for (const [k, v] of JSON.parse(json)) localStorage.setItem(k, v);
		return localStorage.length;
	}`, string(arg))
	if err != nil {
		return fmt.Errorf("seed localStorage: %w", err)
	}
	if got, _ := n.(int); got != len(items) {
		return fmt.Errorf("seed localStorage: %v items stored, want %d", n, len(items))
	}
	// Back to the blank page a new page starts on (from the page itself, which keeps its
	// renderer: from the browser, about:blank is a new one), and that one visit forgotten:
	// the page's history is what an unseeded page's is.
	if _, err := page.Evaluate(`() => { location.href = "about:blank" }`); err != nil {
		return fmt.Errorf("seed localStorage: leave %s: %w", blank, err)
	}
	if ms, err = budgetMS(deadline, 0); err != nil {
		return err
	}
	if err := page.WaitForURL("about:blank", playwright.PageWaitForURLOptions{Timeout: playwright.Float(ms)}); err != nil {
		return classify(fmt.Errorf("seed localStorage: leave %s: %w", blank, err), deadline)
	}
	if _, err := cdp.Send("Page.resetNavigationHistory", nil); err != nil {
		return fmt.Errorf("seed localStorage: forget the blank page: %w", err)
	}
	return nil
}
