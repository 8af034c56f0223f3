package verify

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/signoff/signoff/contracts"
)

// Texts are each cut out of the screen's screenshot at the pixels wholly inside their own
// region, at any device scale, wherever the page is scrolled: a pixel half inside the region
// (a neighbour's border, anti-aliased) is not the text's ink.
func TestInkCutsEachTextOutOfTheScreen(t *testing.T) {
	a := cssBox{x: 12.5, y: 21, w: 10.2, h: 5}
	b := cssBox{x: 40, y: 30.4, w: 20, h: 10}
	u := cssBox{x: 12, y: 21, w: 48, h: 20} // the viewport, scrolled to (12, 21)
	// Relative to the viewport, a spans x 0.5..10.7 and y 0..5, b x 28..48 and y
	// 9.4..19.4: at each scale, the first whole pixel and the last one wholly inside.
	for _, c := range []struct {
		scale int
		a, b  image.Rectangle
	}{
		{1, image.Rect(1, 0, 10, 5), image.Rect(28, 10, 48, 19)},
		{2, image.Rect(1, 0, 21, 10), image.Rect(56, 19, 96, 38)},
		{3, image.Rect(2, 0, 32, 15), image.Rect(84, 29, 144, 58)},
	} {
		img := image.NewGray(image.Rect(0, 0, int(u.w)*c.scale, int(u.h)*c.scale))
		if got := cut(img, u, a).Bounds(); got != c.a {
			t.Errorf("scale %d: a cut at %v, want %v", c.scale, got, c.a)
		}
		if got := cut(img, u, b).Bounds(); got != c.b {
			t.Errorf("scale %d: b cut at %v, want %v", c.scale, got, c.b)
		}
	}
	// A region thinner than a pixel still gets the pixel it lies on.
	img := image.NewGray(image.Rect(0, 0, 48, 20))
	if got := cut(img, u, cssBox{x: 30.2, y: 25, w: 0.5, h: 3}).Bounds(); got != image.Rect(18, 4, 19, 7) {
		t.Errorf("thin region cut at %v", got)
	}
}

// The cut-out, not the whole screenshot, decides: a text painted in its background's colour
// beside a text that is readable has no ink of its own.
func TestInkOfAHiddenTextBesideAShownOne(t *testing.T) {
	u := cssBox{x: 0, y: 0, w: 40, h: 10}
	img := image.NewGray(image.Rect(0, 0, 40, 10))
	for y := 0; y < 10; y++ {
		for x := 0; x < 40; x++ {
			v := uint8(255)
			if x < 20 && (x+y)%3 == 0 { // glyph strokes in the left half only
				v = 0
			}
			img.SetGray(x, y, color.Gray{Y: v})
		}
	}
	shown := inkOf(cut(img, u, cssBox{x: 0, y: 0, w: 20, h: 10})).contrast
	hidden := inkOf(cut(img, u, cssBox{x: 20, y: 0, w: 20, h: 10})).contrast
	if shown < minInkContrast || hidden >= minInkContrast {
		t.Fatalf("ink contrast: shown text %.2f, hidden text %.2f (threshold %.2f)", shown, hidden, minInkContrast)
	}
	if whole := inkOf(img).contrast; whole < minInkContrast {
		t.Fatalf("the whole screenshot has contrast %.2f", whole)
	}
}

// Ink reaches across a text: glyph-like strokes over most rows and columns of the region,
// dark on light or light on dark, count; a stripe of them (a mask's band) or a sliver does
// not, however strong its contrast.
func TestInkReachesAcrossTheText(t *testing.T) {
	img := func(bg, ink color.Gray, inked func(x, y int) bool) image.Image {
		m := image.NewGray(image.Rect(0, 0, 40, 20))
		for y := range 20 {
			for x := range 40 {
				m.SetGray(x, y, bg)
				if inked(x, y) {
					m.SetGray(x, y, ink)
				}
			}
		}
		return m
	}
	white, black := color.Gray{Y: 255}, color.Gray{Y: 0}
	// Strokes two pixels wide every five columns, over the rows a capital covers.
	strokes := func(x, y int) bool { return x%5 < 2 && y >= 4 && y < 16 }
	for _, c := range []struct {
		name     string
		im       image.Image
		readable bool
	}{
		{"dark strokes on light", img(white, black, strokes), true},
		{"light strokes on dark", img(black, white, strokes), true},
		{"a band of two rows", img(white, black, func(x, y int) bool { return strokes(x, y) && y >= 9 && y < 11 }), false},
		{"a sliver of columns", img(white, black, func(x, y int) bool { return strokes(x, y) && x < 4 }), false},
		{"no ink", img(white, white, strokes), false},
	} {
		m := inkOf(c.im)
		if m.readable() != c.readable {
			t.Errorf("%s: %+v readable %v, want %v", c.name, m, m.readable(), c.readable)
		}
	}
}

// A text's pixels cut from the screen's screenshot (viewportShot) are the pixels of a
// screenshot clipped to the text, on a phone and on a desktop, with the page scrolled to a
// fraction of a pixel, a fixed header over some texts, and the page on the virtual clock (as
// the verifier reads it): the screenshot the verifier takes once per read is the one it took
// per region before.
func TestViewportShotIsTheClipsPixels(t *testing.T) {
	sess := testBrowserSession(t)
	var lines strings.Builder
	for i := range 60 {
		fmt.Fprintf(&lines, `<p><span>Line %d of the list</span> <b style="color:#%x%x%x">note %d</b></p>`, i, i%16, (i*7)%16, (i*3)%16, i)
	}
	html := `<meta name="viewport" content="width=device-width"><body style="font:16px sans-serif">` + lines.String() +
		`<div style="position:fixed;top:0;left:0;right:0;height:40px;background:#eee;opacity:.9"><span>Header</span></div>`
	for _, vp := range []contracts.Viewport{mobile, desktop} {
		bctx, page := devicePage(t, sess, vp)
		if err := page.SetContent(html); err != nil {
			t.Fatal(err)
		}
		if _, err := page.Evaluate("window.scrollTo(0, 137.4)"); err != nil {
			t.Fatal(err)
		}
		log := slog.New(slog.DiscardHandler)
		w, err := newWorld(bctx, page, log)
		if err != nil {
			t.Fatal(err)
		}
		defer w.close()
		clk := newVirtualClock(w, 3*time.Second, nil, log)
		if err := clk.advance(context.Background(), 500, time.Now().Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		rects, err := page.Evaluate(`[...document.querySelectorAll('span, b')].map((e) => e.getBoundingClientRect())
			.filter((r) => r.width >= 1 && r.height >= 1 && r.top >= 0 && r.bottom <= innerHeight).map((r) => [r.left + scrollX, r.top + scrollY, r.width, r.height])`)
		if err != nil {
			t.Fatal(err)
		}
		img, shot, err := w.viewportShot()
		if err != nil {
			t.Fatal(err)
		}
		view := shot.screen.view
		if view.y < 130 {
			t.Fatalf("%s: the page is not scrolled: the viewport is at %+v", vpName(vp), view)
		}
		boxes, _ := rects.([]any)
		if len(boxes) < 10 {
			t.Fatalf("%s: %d texts on screen", vpName(vp), len(boxes))
		}
		for _, r := range boxes {
			n, _ := r.([]any)
			f := func(i int) float64 { return jsNumber(n[i]) }
			box := cssBox{f(0), f(1), f(2), f(3)}
			// The whole CSS pixels around the text, as the clip was taken.
			x0, y0 := math.Floor(box.x), math.Floor(box.y)
			u := cssBox{x0, y0, math.Ceil(box.x+box.w) - x0, math.Ceil(box.y+box.h) - y0}
			// A page clock left behind the wall clock gets no frame (virtualClock.advance):
			// on a loaded host the clips outlast the first step, so each gets a step of its
			// own, as every read of the verifier does (the page has no timers to run), and the
			// clock is told the page's time as a read's answer tells it, so the step catches
			// the page up with the wall clock as the verifier's do.
			now, err := page.Evaluate("performance.now()")
			if err != nil {
				t.Fatal(err)
			}
			clk.answered(jsNumber(now))
			if err := clk.advance(context.Background(), 1, time.Now().Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			clip, err := w.capture(u, math.Inf(1))
			if err != nil {
				t.Fatal(err)
			}
			if diff := pixelDiff(cut(img, view, box), cut(clip, u, box)); diff != "" {
				t.Fatalf("%s %+v: from the screen and from the clip: %s", vpName(vp), box, diff)
			}
		}
	}
}

// The evidence's screenshot of a page that fits its screen is the screen, pixel for pixel what
// Playwright's full-page screenshot gives, on a phone and on a desktop, whether captured for
// the evidence or by the last read for ink; a page taller than its screen is still the whole
// document, whatever the last read captured.
func TestEvidenceShotOfAPageThatFitsIsTheScreen(t *testing.T) {
	r := &run{v: testVerifier(t), log: slog.New(slog.DiscardHandler)}
	sess := testBrowserSession(t)
	short := `<meta name="viewport" content="width=device-width"><body style="font:16px sans-serif;margin:0">` +
		`<h1 style="color:#246">Watchlist</h1><p>NVDA <b>AAPL</b> <i style="color:#a40">MSFT</i></p>`
	tall := short + `<div style="height:3000px;background:linear-gradient(#fff,#036)"></div>`
	for _, vp := range []contracts.Viewport{mobile, desktop} {
		bctx, page := devicePage(t, sess, vp)
		cdp, err := bctx.NewCDPSession(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name, html string
			fits       bool
		}{{"short", short, true}, {"tall", tall, false}} {
			if err := page.SetContent(c.html); err != nil {
				t.Fatal(err)
			}
			sc, err := screenOf(r.log, cdp)
			if err != nil {
				t.Fatal(err)
			}
			if got := sc.fits(); got != c.fits {
				t.Fatalf("%s %s page: fits the screen = %v (%+v)", vpName(vp), c.name, got, sc)
			}
			w, err := newWorld(bctx, page, r.log)
			if err != nil {
				t.Fatal(err)
			}
			_, read, err := w.viewportShot()
			w.close()
			if err != nil {
				t.Fatal(err)
			}
			want, err := page.Screenshot(playwright.PageScreenshotOptions{FullPage: playwright.Bool(true), Scale: playwright.ScreenshotScaleCss})
			if err != nil {
				t.Fatal(err)
			}
			b, err := png.Decode(bytes.NewReader(want))
			if err != nil {
				t.Fatal(err)
			}
			for _, last := range []screenShot{{}, read} {
				from := "captured for the evidence"
				if last.png != nil {
					from = "the last read's"
				}
				shot, err := r.fullPageShot(context.Background(), page, cdp, last)
				if err != nil {
					t.Fatal(err)
				}
				a, err := png.Decode(bytes.NewReader(shot))
				if err != nil {
					t.Fatal(err)
				}
				if !c.fits { // Playwright's own screenshot, taken twice: the same document
					if a.Bounds() != b.Bounds() {
						t.Fatalf("%s %s page, %s: the evidence shot is %v, Playwright's full page %v", vpName(vp), c.name, from, a.Bounds(), b.Bounds())
					}
					continue
				}
				if diff := pixelDiff(a, b); diff != "" {
					t.Fatalf("%s %s page, %s: the evidence shot and Playwright's full page: %s", vpName(vp), c.name, from, diff)
				}
			}
		}
	}
}

// pixelDiff says how a and b differ ("" when not at all): in size, or at their first
// differing pixel, counted from each one's corner.
func pixelDiff(a, b image.Image) string {
	if a.Bounds().Size() != b.Bounds().Size() {
		return fmt.Sprintf("sizes %v and %v", a.Bounds().Size(), b.Bounds().Size())
	}
	for y := range a.Bounds().Dy() {
		for x := range a.Bounds().Dx() {
			pa := color.RGBAModel.Convert(a.At(a.Bounds().Min.X+x, a.Bounds().Min.Y+y))
			pb := color.RGBAModel.Convert(b.At(b.Bounds().Min.X+x, b.Bounds().Min.Y+y))
			if pa != pb {
				return fmt.Sprintf("pixel (%d, %d) is %v and %v", x, y, pa, pb)
			}
		}
	}
	return ""
}

// jsNumber is a number Playwright's Evaluate gave back: whole numbers come back as int.
func jsNumber(v any) float64 {
	if i, ok := v.(int); ok {
		return float64(i)
	}
	f, _ := v.(float64)
	return f
}
