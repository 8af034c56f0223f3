package verify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/mxschmitt/playwright-go"
)

// tapWorld is the isolated world a tap's watch runs in: the page's scripts do not see it.
const tapWorld = "signoff-tap"

// tapWatch, run in tapWorld before the touch, resolves once the tap has had its effect: "click"
// when the click the touch makes reaches the window, "none" when the page cancelled the touch
// (no click follows, for a person either), "quiet" when neither came in a second of the
// page's time after the touch ended.
const tapWatch = `globalThis.signoffTap = new Promise((resolve) => {
	addEventListener("click", () => resolve("click"), { capture: true, once: true });
	const cancelled = (e) => setTimeout(() => { if (e.defaultPrevented) resolve("none"); }, 0);
	addEventListener("touchstart", cancelled, { capture: true, once: true });
	addEventListener("touchend", (e) => { cancelled(e); setTimeout(() => resolve("quiet"), 1000); }, { capture: true, once: true });
}), 0`

// tap is a person's tap on a phone at (x, y) of the viewport: a touch held for tapHold, from
// which the browser makes the pointer, touch and compatibility mouse events and the click
// (pointerType "touch"), as for a finger. It returns once the click has been dispatched and,
// when the click started loading a new document, once that document has replaced the old one,
// so what comes next (a read, a goto) neither reads the old page nor aborts the new one.
// Playwright waits so for the navigations its own input starts, not for a touch made here.
func tap(log *slog.Logger, page playwright.Page, x, y float64, end time.Time) error {
	s, err := page.Context().NewCDPSession(page)
	if err != nil {
		return fmt.Errorf("tap: open cdp session: %w", err)
	}
	defer func() { _ = s.Detach() }()
	send := func(method string, params map[string]any) (any, error) {
		res, err := cdpSend(log, s, method, params)
		if err != nil {
			return nil, worldErr(method, err)
		}
		return res, nil
	}
	frameID, ctxID, err := isolatedWorld(log, s, tapWorld)
	if err != nil {
		return fmt.Errorf("tap: %w", err)
	}
	// Done once Playwright has the main frame's next document.
	nav, navigated := context.WithCancel(context.Background())
	defer navigated()
	committed := nav.Done()
	main := page.MainFrame()
	onNav := func(f playwright.Frame) {
		if f == main {
			navigated()
		}
	}
	page.OnFrameNavigated(onNav)
	defer page.RemoveListener("framenavigated", onNav)
	var requested atomic.Bool
	stopped := make(chan struct{}, 1)
	s.On("Page.frameRequestedNavigation", func(ev map[string]any) {
		if ev["frameId"] == frameID && ev["disposition"] == "currentTab" {
			requested.Store(true)
		}
	})
	s.On("Page.frameStoppedLoading", func(ev map[string]any) {
		if ev["frameId"] == frameID {
			select {
			case stopped <- struct{}{}:
			default:
			}
		}
	})
	if _, err := send("Page.enable", nil); err != nil {
		return err
	}
	res, err := send("Runtime.evaluate", map[string]any{"expression": tapWatch, "contextId": ctxID, "silent": true})
	if err != nil {
		return err
	}
	if err := exception(res); err != nil {
		return fmt.Errorf("tap: %w", err)
	}
	pt := []map[string]any{{"x": x, "y": y, "radiusX": 11, "radiusY": 11, "force": 1, "id": 1}}
	if _, err := send("Input.dispatchTouchEvent", map[string]any{"type": "touchStart", "touchPoints": pt}); err != nil {
		return err
	}
	time.Sleep(time.Duration(tapHold) * time.Millisecond) // the finger stays down
	if _, err := send("Input.dispatchTouchEvent", map[string]any{"type": "touchEnd", "touchPoints": []any{}}); err != nil {
		return err
	}
	// The new document in place of the old, or the navigation ended without one (a download,
	// a 204, cancelled).
	arrived := func(why string) error {
		select {
		case <-committed:
		case <-stopped:
		case <-time.After(time.Until(end)):
			return fmt.Errorf("tap: %s, and no new document came within the action's timeout", why)
		}
		return nil
	}
	// The click, or word that none comes. A world gone with its document means the click
	// navigated.
	err = guard(nav, end, func() error {
		// Not through cdpSend: this call waits for the page on purpose.
		res, err := s.Send("Runtime.evaluate", map[string]any{"expression": "globalThis.signoffTap", "contextId": ctxID, "awaitPromise": true, "silent": true})
		if err == nil {
			err = exception(res)
		}
		return err
	})
	switch {
	case errors.Is(err, context.Canceled): // the new document is in
		return nil
	case errors.Is(err, errDeadline):
		return errors.New("tap: no click within the action's timeout")
	case err != nil:
		return arrived("the page went while its click was awaited (" + firstLine(err.Error()) + ")")
	}
	// A navigation the click asked for is reported on this session before the answer to a
	// call made after the click's task.
	if _, err := send("Runtime.evaluate", map[string]any{"expression": "0", "contextId": ctxID, "silent": true}); err != nil {
		return arrived("the page went after its click (" + firstLine(err.Error()) + ")")
	}
	if !requested.Load() {
		return nil
	}
	return arrived("its click started a navigation")
}
