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

// storageState seeds localStorage for the preview's origin; the browser applies it before
// any of the app's scripts run, and only once, so the app's own writes are not clobbered.
// A JSON string value is stored as the string itself; anything else as its compact JSON text.
func (r *run) storageState(seed *contracts.Seed) (*playwright.OptionalStorageState, error) {
	if seed == nil || len(seed.LocalStorage) == 0 {
		return nil, nil
	}
	keys := make([]string, 0, len(seed.LocalStorage))
	for k := range seed.LocalStorage {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var items []playwright.NameValue
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
		items = append(items, playwright.NameValue{Name: k, Value: s})
	}
	origin := r.base.Scheme + "://" + r.base.Host
	return &playwright.OptionalStorageState{Origins: []playwright.Origin{{Origin: origin, LocalStorage: items}}}, nil
}
