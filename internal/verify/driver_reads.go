package verify

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/png"
	"log/slog"
	"math"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/mxschmitt/playwright-go"

	"github.com/signoff/signoff/contracts"
)

// Reads the verifier makes itself rather than through the probe, at the same moments as the
// probe's reads: the page's URL as the browser driver knows it, the requests the page made as
// Playwright saw them leave, and the pixels painted in an element's box. None of them asks the
// page's own scripts anything.

// requestLog records the page's requests to the preview's origin once it is armed: from the
// criterion's first click, fill or press on (from the navigation when there is none). A
// request the page made on load is not the effect of an input.
//
// Playwright reports a request when the browser holds it for the routes, which can be after
// the page's load event, so after Goto returns and the log is armed: a fetch the page's
// script made while it loaded could count as the click's. So the log also hears, from the
// page's own DevTools session, each request as the renderer issues it (issued), and is armed
// after a round trip on that session (barrier): every request the renderer issued before
// then has been heard. Those Playwright has not reported yet are skipped when it does. A
// worker's request, which the page's session may not hear, counts as before.
type requestLog struct {
	origin string
	mu     sync.Mutex
	armed  bool
	seen   []seenRequest
	// Before arming: how many requests of each kind the renderer issued and Playwright
	// reported; at arming, the difference: reports still to come of requests made before.
	issuedEarly, reportedEarly, owed map[seenRequest]int
}

type seenRequest struct{ method, path string }

func newRequestLog(base *url.URL, armed bool) *requestLog {
	return &requestLog{origin: contracts.URLOrigin(base), armed: armed,
		issuedEarly: map[seenRequest]int{}, reportedEarly: map[seenRequest]int{}, owed: map[seenRequest]int{}}
}

// hear subscribes to the renderer's requests on cdp, the page's own session. Called before
// the navigation.
func (l *requestLog) hear(log *slog.Logger, cdp playwright.CDPSession) error {
	cdp.On("Network.requestWillBeSent", func(ev map[string]any) {
		method, _ := dig(ev, "request", "method").(string)
		raw, _ := dig(ev, "request", "url").(string)
		l.issued(method, raw)
	})
	if _, err := cdpSend(log, cdp, "Network.enable", nil); err != nil {
		return worldErr("Network.enable", err)
	}
	return nil
}

// armAfter arms the log once a call on cdp, the session hear subscribed on, has come back:
// the renderer's requests issued before it have all been heard by then.
func (l *requestLog) armAfter(log *slog.Logger, cdp playwright.CDPSession) error {
	if _, err := cdpSend(log, cdp, "Runtime.evaluate", map[string]any{"expression": "0", "silent": true}); err != nil {
		return worldErr("Runtime.evaluate", err)
	}
	l.arm()
	return nil
}

// arm starts counting; what the renderer issued before and Playwright has not reported yet
// will not count.
func (l *requestLog) arm() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, n := range l.issuedEarly {
		if d := n - l.reportedEarly[k]; d > 0 {
			l.owed[k] = d
		}
	}
	l.armed = true
}

// issued is the renderer's word that the page made a request.
func (l *requestLog) issued(method, raw string) {
	k, ok := l.key(method, raw)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.armed && len(l.issuedEarly) < maxLoggedRequests {
		l.issuedEarly[k]++
	}
}

func (l *requestLog) key(method, raw string) (seenRequest, bool) {
	u, err := url.Parse(raw)
	if err != nil || contracts.URLOrigin(u) != l.origin {
		return seenRequest{}, false
	}
	return seenRequest{method: strings.ToUpper(method), path: u.Path}, true
}

func (l *requestLog) on(req playwright.Request) { l.reported(req.Method(), req.URL()) }

// reported is Playwright's word that the page made a request.
func (l *requestLog) reported(method, raw string) {
	k, ok := l.key(method, raw)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case !l.armed:
		if len(l.reportedEarly) < maxLoggedRequests {
			l.reportedEarly[k]++
		}
	case l.owed[k] > 0:
		l.owed[k]-- // made before the input, reported after it
	case len(l.seen) < maxLoggedRequests:
		l.seen = append(l.seen, k)
	}
}

// maxLoggedRequests bounds what a page that floods requests can make the verifier hold; a
// request check needs one match.
const maxLoggedRequests = 10000

// count is how many recorded requests have method and a path matching pattern (a trailing *
// matches any rest).
func (l *requestLog) count(method, pattern string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	prefix, isPrefix := strings.CutSuffix(pattern, "*")
	n := 0
	for _, r := range l.seen {
		if !strings.EqualFold(r.method, method) {
			continue
		}
		if (isPrefix && strings.HasPrefix(r.path, prefix)) || (!isPrefix && r.path == pattern) {
			n++
		}
	}
	return n
}

// isInput reports whether an action is an input a person makes: what a request assertion's
// requests must follow.
func isInput(a contracts.Action) bool {
	return a.Type == contracts.ActionClick || a.Type == contracts.ActionFill || a.Type == contracts.ActionPress
}

// pagePath is what a url assertion reads: the path and query of the page's URL on the
// preview's origin; on another origin, the whole URL (so a path alone cannot match it).
func pagePath(base *url.URL, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	if contracts.URLOrigin(u) != contracts.URLOrigin(base) {
		return raw
	}
	s := u.EscapedPath()
	if s == "" {
		s = "/"
	}
	if u.RawQuery != "" {
		s += "?" + u.RawQuery
	}
	return s
}

// driverReads completes each read of the probe with what the verifier reads itself.
type driverReads struct {
	base    *url.URL
	page    playwright.Page
	reqs    *requestLog
	leaves  []leaf
	readOf  []int
	maxSide float64
	phone   bool // the viewport is a phone's: the probe reads the visual viewport's width
	// last is the screen as the latest read captured it for ink; empty when that read
	// captured none. The evidence's screenshot of a page that fits its screen is it.
	last *screenShot
}

// fill runs right after the probe's read, before the page clock moves on. why is the read's
// reason: pixels for ink are looked at on every read but the periodic ones (nothing in the DOM
// or the layout changed since the last read).
func (d *driverReads) fill(w *world, results []any, why string) error {
	*d.last = screenShot{}
	var inks []inkJob
	for i, l := range d.leaves {
		if d.readOf[i] < 0 {
			continue
		}
		m, _ := results[d.readOf[i]].(map[string]any)
		if m == nil {
			return fmt.Errorf("probe returned no read for %s", l.a.Kind)
		}
		switch l.a.Kind {
		case contracts.KindURL:
			m[contracts.ObsValue] = pagePath(d.base, d.page.URL())
		case contracts.KindRequest:
			m[contracts.ObsRequests] = float64(d.reqs.count(l.a.Method, l.a.Path))
		case contracts.KindVisibleText:
			for i := range l.a.Texts {
				spots := spotsOf(m, i) // the verifier's, not an observation
				if why == ReadPeriodic {
					continue
				}
				if j, ok := inkJobFor(m, i, l.a.Texts[i]); ok {
					j.within, j.spots = l.a.Within, spots
					inks = append(inks, j)
				}
			}
		case contracts.KindBackground:
			sample, _ := m["sample"].(map[string]any)
			if sample == nil {
				// No visible match with a part in the viewport: count is 0 and fails;
				// the value says nothing was sampled.
				m[contracts.ObsValue] = -1.0
				continue
			}
			lum, px, err := w.luminance(sample, d.maxSide)
			if err != nil {
				return fmt.Errorf("background %s: %w", l.a.Selector, err)
			}
			m[contracts.ObsValue] = math.Round(lum*10000) / 10000
			m["sampled_pixels"] = float64(px)
		}
	}
	if err := d.ink(w, inks); err != nil {
		return err
	}
	return d.onTop(w, inks)
}

// inkJob is a text a read found shown, whose pixels are looked at for ink.
type inkJob struct {
	m    map[string]any // the read's values for the text's assertion
	i    int            // the text's index in the assertion
	text string
	box  cssBox // the probe's ink_box: document coordinates, CSS pixels, inside the viewport
	// within is the assertion's scope, and spots where the text's lines are (document
	// coordinates): onTop asks the browser what is on top there.
	within string
	spots  [][2]float64
}

// spotsOf takes the i-th text's spots out of a read's values.
func spotsOf(m map[string]any, i int) [][2]float64 {
	key := fmt.Sprintf("text.%d.spots", i)
	raw, _ := m[key].([]any)
	delete(m, key)
	var out [][2]float64
	for _, p := range raw {
		xy, _ := p.([]any)
		if len(xy) != 2 {
			continue
		}
		x, okx := xy[0].(float64)
		y, oky := xy[1].(float64)
		if okx && oky && len(out) < maxSpots {
			out = append(out, [2]float64{x, y})
		}
	}
	return out
}

// maxSpots bounds the points a text is hit-tested at: the probe gives three.
const maxSpots = 3

// onTop asks the browser what is on top at each spot of every text still visible after ink
// (its hit test, pointer-events: none included: a sheet a click goes through still covers
// what is under it), and the probe whether that paints over the text (covers). A text covered
// at most of its spots is not visible: a modal, a banner or another text laid over it shows
// ink of its own, so pixels alone took it for the text.
func (d *driverReads) onTop(w *world, jobs []inkJob) error {
	type spotHit struct {
		backend float64 // 0: nothing there
		err     error
	}
	var todo []inkJob
	for _, j := range jobs {
		if j.m[contracts.TextVisibleKey(j.i)] == true && len(j.spots) > 0 {
			todo = append(todo, j)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	// Hit tests at once: each is a round trip, and the page clock is stopped meanwhile.
	found := make([][]spotHit, len(todo))
	var wg sync.WaitGroup
	for k, j := range todo {
		found[k] = make([]spotHit, len(j.spots))
		for s, xy := range j.spots {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := w.send("DOM.getNodeForLocation", map[string]any{
					"x": int(math.Round(xy[0])), "y": int(math.Round(xy[1])),
					"includeUserAgentShadowDOM": false, "ignorePointerEventsNone": true,
				})
				if err != nil {
					if strings.Contains(err.Error(), "No node found") {
						return // nothing there: nothing covers it
					}
					found[k][s].err = worldErr("DOM.getNodeForLocation", err)
					return
				}
				id, _ := dig(res, "backendNodeId").(float64)
				found[k][s].backend = id
			}()
		}
	}
	wg.Wait()
	// Each node hit once, as a handle in the probe's world; a node the world cannot hold
	// (another frame's) is something the verifier cannot read over the text.
	handles := map[float64]int{} // backend node -> index in hitIDs, or -2
	var hitIDs []string
	var mu sync.Mutex
	for _, row := range found {
		for _, h := range row {
			if h.err != nil {
				return h.err
			}
			if h.backend != 0 {
				handles[h.backend] = -2
			}
		}
	}
	for id := range handles {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := w.send("DOM.resolveNode", map[string]any{"backendNodeId": id, "executionContextId": w.contextID})
			obj, _ := dig(res, "object", "objectId").(string)
			if err != nil || obj == "" {
				return
			}
			mu.Lock()
			handles[id] = len(hitIDs)
			hitIDs = append(hitIDs, obj)
			mu.Unlock()
		}()
	}
	wg.Wait()
	type check struct {
		Within string       `json:"within,omitempty"`
		Text   string       `json:"text"`
		Spots  [][2]float64 `json:"spots"`
		Hits   []int        `json:"hits"`
	}
	checks := make([]check, len(todo))
	for k, j := range todo {
		checks[k] = check{Within: j.within, Text: j.text, Spots: j.spots}
		for _, h := range found[k] {
			idx := -1
			if h.backend != 0 {
				idx = handles[h.backend]
			}
			checks[k].Hits = append(checks[k].Hits, idx)
		}
	}
	p, err := loadParams()
	if err != nil {
		return err
	}
	res, err := w.call(map[string]any{"op": "covers", "params": p.raw, "phone": d.phone, "checks": checks, "hits": len(hitIDs)}, true, hitIDs...)
	if err != nil {
		return fmt.Errorf("text %q: what is on top: %w", todo[0].text, err)
	}
	covered, _ := res["covered"].([]any)
	if len(covered) != len(todo) {
		return fmt.Errorf("probe answered %d texts on top, asked %d", len(covered), len(todo))
	}
	for k, j := range todo {
		n, _ := covered[k].(float64)
		j.m[fmt.Sprintf("text.%d.covered_spots", j.i)] = n
		if 2*int(n) > len(j.spots) {
			j.m[contracts.TextVisibleKey(j.i)] = false
		}
	}
	return nil
}

// inkJobFor is the i-th text's ink job, when the probe found it shown with a region to look
// at. Text wholly outside the viewport has no region and keeps the probe's answer.
func inkJobFor(m map[string]any, i int, text string) (inkJob, bool) {
	if m[contracts.TextVisibleKey(i)] != true {
		return inkJob{}, false
	}
	region, _ := m[fmt.Sprintf("text.%d.ink_box", i)].(map[string]any)
	if region == nil {
		return inkJob{}, false
	}
	b := boxOf(region)
	if b.w < 1 || b.h < 1 {
		return inkJob{}, false
	}
	return inkJob{m: m, i: i, text: text, box: b}, true
}

// cssBox is a rectangle of the page in CSS pixels.
type cssBox struct{ x, y, w, h float64 }

// boxOf reads a region as the probe gives it: x, y, width and height.
func boxOf(region map[string]any) cssBox {
	x, _ := region["x"].(float64)
	y, _ := region["y"].(float64)
	w, _ := region["width"].(float64)
	h, _ := region["height"].(float64)
	return cssBox{x, y, w, h}
}

// ink looks at the pixels where the probe found each text shown: text that is readable paints
// something that contrasts with what is around it, across the text (inkMeasure). A region of
// one colour (text in its background's colour, a list under filter: opacity(0), an opaque
// sheet on top) has no ink, a stripe of a text under a mask has ink in too few rows, and the
// text is not visible.
//
// The texts of a read are cut out of one screenshot of the screen as it is (viewportShot),
// each at the pixels wholly inside its region. A text longer than twice
// background_sample_px has a screenshot of its own, scaled down to that side; so has every
// text of a read whose screen was scrolling while it was captured.
func (d *driverReads) ink(w *world, jobs []inkJob) error {
	side := d.maxSide * 2
	var onScreen, alone []inkJob
	for _, j := range jobs {
		if max(j.box.w, j.box.h) > side {
			alone = append(alone, j)
		} else {
			onScreen = append(onScreen, j)
		}
	}
	if len(onScreen) > 0 {
		img, shot, err := w.viewportShot()
		switch {
		case errors.Is(err, errViewMoved):
			alone = append(alone, onScreen...)
		case err != nil:
			return fmt.Errorf("text %q: %w", onScreen[0].text, err)
		default:
			for _, j := range onScreen {
				setInk(j, inkOf(cut(img, shot.screen.view, j.box)))
			}
			*d.last = shot
		}
	}
	for _, j := range alone {
		if err := d.inkAlone(w, j, side); err != nil {
			return err
		}
	}
	return nil
}

// inkAlone looks at one text's region in a screenshot of its own, scaled so its longer side
// is at most side pixels.
func (d *driverReads) inkAlone(w *world, j inkJob, side float64) error {
	img, err := w.capture(j.box, side)
	if err != nil {
		return fmt.Errorf("text %q: %w", j.text, err)
	}
	setInk(j, inkOf(img))
	return nil
}

func setInk(j inkJob, m inkMeasure) {
	round := func(v float64) float64 { return math.Round(v*100) / 100 }
	j.m[fmt.Sprintf("text.%d.ink_contrast", j.i)] = round(m.contrast)
	j.m[fmt.Sprintf("text.%d.ink_rows", j.i)] = round(m.rows)
	j.m[fmt.Sprintf("text.%d.ink_cols", j.i)] = round(m.cols)
	if !m.readable() {
		j.m[contracts.TextVisibleKey(j.i)] = false
	}
}

// cut is the part of img (a screenshot of u) that shows b: the pixels wholly inside b, or,
// for a region thinner than a pixel, the pixel it lies on.
func cut(img image.Image, u, b cssBox) image.Image {
	bounds := img.Bounds()
	rx, ry := float64(bounds.Dx())/u.w, float64(bounds.Dy())/u.h
	span := func(lo, size, origin, ratio float64, limit int) (int, int) {
		a, z := (lo-origin)*ratio, (lo+size-origin)*ratio
		p0, p1 := int(math.Ceil(a-1e-6)), int(math.Floor(z+1e-6))
		if p1 <= p0 {
			p0 = int(math.Floor(a))
			p1 = p0 + 1
		}
		return max(0, min(p0, limit-1)), max(1, min(p1, limit))
	}
	x0, x1 := span(b.x, b.w, u.x, rx, bounds.Dx())
	y0, y1 := span(b.y, b.h, u.y, ry, bounds.Dy())
	r := image.Rect(bounds.Min.X+x0, bounds.Min.Y+y0, bounds.Min.X+x1, bounds.Min.Y+y1)
	if sub, ok := img.(interface {
		SubImage(image.Rectangle) image.Image
	}); ok {
		return sub.SubImage(r)
	}
	return img
}

// minInkContrast is the least WCAG contrast ratio between the lightest and darkest pixels of a
// text's region for the text to count as painted: faint enough to miss a hidden text, far
// below what any readable text reaches.
const minInkContrast = 1.5

// inkMeasure is what a text's region shows of ink: the contrast between its lightest and
// darkest pixels, and the share of its rows and of its columns that hold ink.
type inkMeasure struct {
	contrast, rows, cols float64
}

// Glyphs reach across a line: capitals and digits cover about two thirds of its rows, small
// letters without ascenders about half, and letters most of its columns. A band of a text (a
// mask or a clip leaving a stripe of it) or a sliver of it covers far less.
const (
	minInkRows = 0.3
	minInkCols = 0.15
)

// readable: the region's ink contrasts and reaches across the text.
func (m inkMeasure) readable() bool {
	return m.contrast >= minInkContrast && m.rows >= minInkRows && m.cols >= minInkCols
}

// inkOf measures an image's ink. The contrast is the WCAG ratio between the lightest and the
// darkest pixel, ignoring the 0.5% most extreme pixels at either end (a stray border pixel is
// not text). Ink is the pixels on the less common side of the geometric midpoint between those
// two (the background is the more common): a row or column holds ink when any of its pixels is.
func inkOf(img image.Image) inkMeasure {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w <= 0 || h <= 0 {
		return inkMeasure{contrast: 1}
	}
	lum := make([]float64, 0, w*h)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			lum = append(lum, relLuminance(r, g, bl))
		}
	}
	sorted := slices.Clone(lum)
	slices.Sort(sorted)
	cut := len(sorted) / 200
	lo, hi := sorted[cut], sorted[len(sorted)-1-cut]
	m := inkMeasure{contrast: (hi + 0.05) / (lo + 0.05)}
	mid := math.Sqrt((lo+0.05)*(hi+0.05)) - 0.05
	above, _ := slices.BinarySearch(sorted, math.Nextafter(mid, math.Inf(1)))
	inkAbove := len(sorted)-above < above // the lighter side is the less common: light text
	rows, cols := make([]bool, h), make([]bool, w)
	for i, l := range lum {
		if (l > mid) == inkAbove && l != mid {
			rows[i/w], cols[i%w] = true, true
		}
	}
	count := func(bs []bool) (n float64) {
		for _, v := range bs {
			if v {
				n++
			}
		}
		return n
	}
	m.rows, m.cols = count(rows)/float64(h), count(cols)/float64(w)
	return m
}

func relLuminance(r, g, b uint32) float64 {
	lin := func(c uint32) float64 {
		v := float64(c) / 0xffff
		if v <= 0.04045 {
			return v / 12.92
		}
		return math.Pow((v+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(r) + 0.7152*lin(g) + 0.0722*lin(b)
}

// capture is a screenshot of a region of the page (document coordinates, CSS pixels) at a
// scale that makes its longer side at most maxSide pixels.
func (w *world) capture(b cssBox, maxSide float64) (image.Image, error) {
	if b.w < 1 || b.h < 1 {
		return nil, errors.New("empty region")
	}
	scale := min(1, maxSide/max(b.w, b.h))
	res, err := w.sendPainted("Page.captureScreenshot", map[string]any{
		"format":      "png",
		"fromSurface": true,
		// Lossless either way; the faster encoding is the larger file, which never leaves
		// the verifier.
		"optimizeForSpeed": true,
		"clip":             map[string]any{"x": b.x, "y": b.y, "width": b.w, "height": b.h, "scale": scale},
	})
	if err != nil {
		return nil, worldErr("Page.captureScreenshot", err)
	}
	_, img, err := decodeShot(res)
	return img, err
}

// screenShot is a screenshot of the screen as Chromium encoded it, and the screen it shows.
type screenShot struct {
	png    []byte
	screen screen
}

// viewportShot is the screen as it is: a screenshot of the visual viewport, without a clip,
// and the screen it shows (the viewport's box in document coordinates, CSS pixels, which cut
// maps onto it). A clipped capture renders the page again at the clip's offset and scale,
// and back after: on the virtual clock, four frames a capture where this takes two, with the
// same pixels (TestViewportShotIsTheClipsPixels). errViewMoved: the viewport moved while it
// was captured (a smooth scroll still running), so the picture cannot be placed.
func (w *world) viewportShot() (image.Image, screenShot, error) {
	before, err := screenOf(w.log, w.cdp)
	if err != nil {
		return nil, screenShot{}, err
	}
	res, err := w.sendPainted("Page.captureScreenshot", map[string]any{"format": "png", "fromSurface": true, "optimizeForSpeed": true})
	if err != nil {
		return nil, screenShot{}, worldErr("Page.captureScreenshot", err)
	}
	raw, img, err := decodeShot(res)
	if err != nil {
		return nil, screenShot{}, err
	}
	after, err := screenOf(w.log, w.cdp)
	switch {
	case err != nil:
		return nil, screenShot{}, err
	case after.view != before.view:
		return nil, screenShot{}, errViewMoved
	case img.Bounds().Empty() || after.view.w < 1 || after.view.h < 1:
		return nil, screenShot{}, errors.New("the screenshot of the viewport is empty")
	}
	return img, screenShot{png: raw, screen: after}, nil
}

// errViewMoved: the visual viewport moved during a screenshot of it.
var errViewMoved = errors.New("the viewport moved while it was captured")

// screen is what Page.getLayoutMetrics says of the page on the screen, in CSS pixels.
type screen struct {
	view    cssBox  // the part of the document the screen shows (the visual viewport)
	scale   float64 // the visual viewport's zoom (a pinch, or the page's initial-scale)
	content cssBox  // the document's size, at the origin
}

// fits: the whole document is on the screen, unscrolled and unzoomed.
func (s screen) fits() bool {
	return s.view.w > 0 && s.view.h > 0 && s.view.x == 0 && s.view.y == 0 && s.scale == 1 &&
		s.content.w <= s.view.w && s.content.h <= s.view.h
}

func screenOf(log *slog.Logger, cdp playwright.CDPSession) (screen, error) {
	lm, err := cdpSend(log, cdp, "Page.getLayoutMetrics", nil)
	if err != nil {
		return screen{}, worldErr("Page.getLayoutMetrics", err)
	}
	if _, ok := dig(lm, "cssVisualViewport").(map[string]any); !ok {
		return screen{}, errors.New("cdp Page.getLayoutMetrics: no cssVisualViewport")
	}
	num := func(keys ...string) float64 { v, _ := dig(lm, keys...).(float64); return v }
	vv := func(k string) float64 { return num("cssVisualViewport", k) }
	return screen{
		view:    cssBox{vv("pageX"), vv("pageY"), vv("clientWidth"), vv("clientHeight")},
		scale:   vv("scale"),
		content: cssBox{0, 0, num("cssContentSize", "width"), num("cssContentSize", "height")},
	}, nil
}

// shotPNG is the PNG of a Page.captureScreenshot answer.
func shotPNG(res any) ([]byte, error) {
	data, _ := dig(res, "data").(string)
	raw, err := base64.StdEncoding.DecodeString(data)
	switch {
	case err != nil:
		return nil, fmt.Errorf("screenshot data: %w", err)
	case len(raw) == 0:
		return nil, errors.New("screenshot data: empty")
	}
	return raw, nil
}

// decodeShot is the PNG of a Page.captureScreenshot answer and its image.
func decodeShot(res any) ([]byte, image.Image, error) {
	raw, err := shotPNG(res)
	if err != nil {
		return nil, nil, err
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		return nil, nil, fmt.Errorf("screenshot: %w", err)
	}
	return raw, img, nil
}

// luminance captures the pixels painted in a region of the page (document coordinates, CSS
// pixels), at a scale that makes its longer side at most maxSide pixels, and returns their mean
// relative luminance (WCAG 2: sRGB channels linearised, 0.2126 R + 0.7152 G + 0.0722 B) and how
// many pixels were averaged.
func (w *world) luminance(region map[string]any, maxSide float64) (float64, int, error) {
	img, err := w.capture(boxOf(region), maxSide)
	if err != nil {
		return 0, 0, err
	}
	lum, n := meanLuminance(img)
	if n == 0 {
		return 0, 0, errors.New("the screenshot has no pixels")
	}
	return lum, n, nil
}

// meanLuminance is the mean WCAG relative luminance of an image's pixels (composited on black
// where not opaque: a screenshot of the page is opaque).
func meanLuminance(img image.Image) (float64, int) {
	b := img.Bounds()
	sum := 0.0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			sum += relLuminance(r, g, bl)
		}
	}
	n := b.Dx() * b.Dy()
	if n == 0 {
		return 0, 0
	}
	return sum / float64(n), n
}
