package proofpage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mxschmitt/playwright-go"

	"github.com/signoff/signoff/web"
)

// leadFacts is what the first screen shows, read from the DOM in one evaluation.
type leadFacts struct {
	Sentence    string         `json:"sentence"`
	InnerHeight float64        `json:"innerHeight"`
	SentenceBot float64        `json:"sentenceBottom"`
	Viewports   []leadViewport `json:"viewports"`
}

type leadViewport struct {
	Viewport  string      `json:"viewport"`
	Criterion string      `json:"criterion"`
	Pictures  []leadImage `json:"pictures"`
}

type leadImage struct {
	Role          string     `json:"role"`
	Loaded        bool       `json:"loaded"`
	Top           float64    `json:"top"`
	Bottom        float64    `json:"bottom"`
	Left          float64    `json:"left"`
	Width         float64    `json:"width"`
	Height        float64    `json:"height"`
	NaturalWidth  float64    `json:"naturalWidth"`
	NaturalHeight float64    `json:"naturalHeight"`
	WinTop        float64    `json:"winTop"`
	WinBottom     float64    `json:"winBottom"`
	Boxes         []leadRect `json:"boxes"`
}

type leadRect struct {
	X, Y, W, H               float64 // the measured box, from the data attributes
	Left, Top, Width, Height float64 // where the outline is on the screen
}

const leadJS = `() => {
  const r = (el) => el.getBoundingClientRect();
  const s = document.querySelector('#verdict');
  return {
    sentence: s ? s.innerText.trim() : '',
    innerHeight: window.innerHeight,
    sentenceBottom: s ? r(s).bottom : -1,
    viewports: [...document.querySelectorAll('#pictures figure[data-lead]')].map((f) => ({
      viewport: f.dataset.viewport, criterion: f.dataset.criterion,
      pictures: [...f.querySelectorAll('figure.pic')].map((p) => {
        const img = p.querySelector('img');
        const win = p.querySelector('.win');
        if (!img) return {role: p.dataset.role, loaded: false, boxes: []};
        const ir = r(img), wr = win ? r(win) : ir;
        return {role: p.dataset.role, loaded: img.complete && img.naturalWidth > 0,
          top: ir.top, bottom: ir.bottom, left: ir.left, width: ir.width, height: ir.height,
          naturalWidth: img.naturalWidth, naturalHeight: img.naturalHeight, winTop: wr.top, winBottom: wr.bottom,
          boxes: [...p.querySelectorAll('.box')].map((b) => { const br = r(b); return {
            X: +b.dataset.x, Y: +b.dataset.y, W: +b.dataset.width, H: +b.dataset.height,
            Left: br.left, Top: br.top, Width: br.width, Height: br.height}; })};
      }),
    })),
  };
}`

// TestBrowserFirstScreen opens the W2 proof page in real Chromium at 1280 and at 390 px wide
// and checks what a reviewer sees first: the verdict sentence; per viewport the base and the
// implementation screenshots, loaded, above the fold at 1280; the overflowing element outlined
// exactly where the verifier measured it (from the DOM, and in the screenshot's pixels); and
// the criterion's trace opening in the trace viewer with its actions.
func TestBrowserFirstScreen(t *testing.T) {
	br := needBrowser(t)
	r := buildRuns(t, realTrace(t, br))
	h, err := NewHandler(Config{Root: r.root, TraceViewerDir: TraceViewerDir(driverDir), Options: keys()})
	if err != nil {
		t.Fatal(err)
	}
	lb := &web.Loopback{Extra: map[string]http.Handler{"/proofs/": h}}
	srv := httptest.NewServer(lb.Handler())
	defer srv.Close()
	out := outDir(t)

	last := r.w2.Bundles[len(r.w2.Bundles)-1]
	first := strings.TrimSuffix(last.Reasons[0].Message, ".")
	wantSentence := fmt.Sprintf("Not satisfied on attempt %d of %d (commit %s): 4 of 6 criteria passed; %s (+%d more).",
		last.Attempt, r.w2.Contract.MaxAttempts, last.ImplementationSHA[:12], first, len(last.Reasons)-1)

	for _, size := range []playwright.Size{{Width: 1280, Height: 800}, {Width: 390, Height: 844}} {
		t.Run(fmt.Sprintf("%d", size.Width), func(t *testing.T) {
			ctx, err := br.NewContext(playwright.BrowserNewContextOptions{Viewport: &size})
			if err != nil {
				t.Fatal(err)
			}
			defer ctx.Close()
			page, err := ctx.NewPage()
			if err != nil {
				t.Fatal(err)
			}
			if resp, err := page.Goto(srv.URL + "/proofs/" + w2ID + "/"); err != nil || resp.Status() != 200 {
				t.Fatalf("open the proof page: %v", err)
			}
			if _, err := page.WaitForFunction(`() => [...document.images].every((i) => i.complete)`, nil,
				playwright.PageWaitForFunctionOptions{Timeout: playwright.Float(20000)}); err != nil {
				t.Fatalf("images did not finish loading: %v", err)
			}
			raw, err := page.Evaluate(leadJS)
			if err != nil {
				t.Fatal(err)
			}
			var f leadFacts
			remarshal(t, raw, &f)
			if f.Sentence != wantSentence {
				t.Errorf("verdict sentence:\n got %q\nwant %q", f.Sentence, wantSentence)
			}
			if f.SentenceBot <= 0 || f.SentenceBot > f.InnerHeight {
				t.Errorf("the verdict sentence ends at %v, below the fold at %v", f.SentenceBot, f.InnerHeight)
			}
			if len(f.Viewports) != 2 || f.Viewports[0].Viewport != "390×844" || f.Viewports[1].Viewport != "1440×1000" {
				t.Fatalf("first screen viewports: %+v", f.Viewports)
			}
			if f.Viewports[0].Criterion != "mobile-no-overflow" {
				t.Errorf("at 390×844 the first screen shows %s, not the failing mobile-no-overflow", f.Viewports[0].Criterion)
			}
			var boxes []leadRect
			for _, vp := range f.Viewports {
				if len(vp.Pictures) != 2 || vp.Pictures[0].Role != "base" || vp.Pictures[1].Role != "implementation" {
					t.Fatalf("%s: pictures %+v, want base then implementation", vp.Viewport, vp.Pictures)
				}
				for _, p := range vp.Pictures {
					if !p.Loaded {
						t.Errorf("%s %s: picture not loaded", vp.Viewport, p.Role)
					}
					if size.Width == 1280 && (p.WinTop < 0 || p.WinBottom > f.InnerHeight) {
						t.Errorf("%s %s: shown from %v to %v, not above the fold at %v", vp.Viewport, p.Role, p.WinTop, p.WinBottom, f.InnerHeight)
					}
				}
				base, impl := vp.Pictures[0], vp.Pictures[1]
				// Side by side: the same row, base on the left.
				if math.Abs(base.WinTop-impl.WinTop) > 1 || base.Left >= impl.Left {
					t.Errorf("%s: base (%v,%v) and implementation (%v,%v) are not side by side", vp.Viewport, base.Left, base.WinTop, impl.Left, impl.WinTop)
				}
				if vp.Criterion == "mobile-no-overflow" {
					boxes = impl.Boxes
					if len(boxes) != 1 {
						t.Fatalf("the failing element is outlined %d times, want once", len(boxes))
					}
					b := boxes[0]
					if b.X != offender["x"] || b.Y != offender["y"] || b.W != offender["width"] || b.H != offender["height"] {
						t.Errorf("outline drawn for %+v, the verifier measured %v", b, offender)
					}
					// The outline sits on the measured box, scaled with the picture.
					sx, sy := impl.Width/impl.NaturalWidth, impl.Height/impl.NaturalHeight
					want := leadRect{Left: impl.Left + b.X*sx, Top: impl.Top + b.Y*sy, Width: b.W * sx, Height: b.H * sy}
					if d := maxDiff(b, want); d > 1 {
						t.Errorf("outline at %+v, the measured box is at %+v on screen (off by %.2f px)", b, want, d)
					}
					boxes[0] = b
				}
			}
			shot, err := page.Screenshot()
			if err != nil {
				t.Fatal(err)
			}
			name := filepath.Join(out, fmt.Sprintf("first-screen-w2-%d.png", size.Width))
			_ = os.WriteFile(name, shot, 0o644)
			// In the pixels: the outline's edge is drawn in the outline red, inside the box's
			// top edge and left edge.
			if len(boxes) == 1 {
				img, err := png.Decode(bytes.NewReader(shot))
				if err != nil {
					t.Fatal(err)
				}
				b := boxes[0]
				red, samples := 0, 0
				for x := b.Left + 4; x < b.Left+b.Width-4; x += 3 {
					samples++
					if isOutlineRed(img, x, b.Top-1.5) {
						red++
					}
				}
				for y := b.Top + 4; y < b.Top+b.Height-4; y += 3 {
					samples++
					if isOutlineRed(img, b.Left-1.5, y) {
						red++
					}
				}
				if samples == 0 || float64(red) < 0.9*float64(samples) {
					t.Errorf("the screenshot shows the outline on %d of %d points along the box's edges", red, samples)
				}
				t.Logf("%d px: outline at (%.1f, %.1f) %.1f×%.1f on screen; %d of %d edge points red in %s", size.Width, b.Left, b.Top, b.Width, b.Height, red, samples, name)
			}
		})
	}

	t.Run("trace-from-criterion", func(t *testing.T) {
		ctx, err := br.NewContext(playwright.BrowserNewContextOptions{Viewport: &playwright.Size{Width: 1280, Height: 800}})
		if err != nil {
			t.Fatal(err)
		}
		defer ctx.Close()
		page, err := ctx.NewPage()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := page.Goto(srv.URL + "/proofs/" + w2ID + "/"); err != nil {
			t.Fatal(err)
		}
		link := page.Locator(`#pictures figure[data-criterion="mobile-no-overflow"] a[data-criterion-trace]`)
		href, err := link.GetAttribute("href")
		if err != nil {
			t.Fatal(err)
		}
		u, err := url.Parse(href)
		if err != nil || u.Path != "/proofs/_trace/index.html" {
			t.Fatalf("the criterion's trace link %q does not open the trace viewer", href)
		}
		wantTrace := fmt.Sprintf("/proofs/%s/attempt-%d/try-1/trace-mobile-no-overflow.zip", w2ID, len(r.w2.Bundles))
		if tr := u.Query().Get("trace"); !strings.HasSuffix(tr, wantTrace) || !strings.HasPrefix(tr, srv.URL) {
			t.Fatalf("the viewer is pointed at %q, want this listener's %s", tr, wantTrace)
		}
		if err := link.Click(); err != nil {
			t.Fatal(err)
		}
		for _, action := range []string{"Navigate", "Click"} {
			l := page.GetByText(action, playwright.PageGetByTextOptions{Exact: playwright.Bool(false)}).First()
			if err := l.WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateVisible, Timeout: playwright.Float(30000)}); err != nil {
				_, _ = page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(filepath.Join(out, "first-screen-trace-failed.png"))})
				t.Fatalf("the trace viewer shows no %q action of the criterion's trace: %v", action, err)
			}
		}
		_, _ = page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(filepath.Join(out, "first-screen-trace.png"))})
	})
}

// remarshal turns what page.Evaluate returned into a typed value.
func remarshal(t *testing.T, raw, v any) {
	t.Helper()
	data, err := json.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}

func isOutlineRed(img image.Image, x, y float64) bool {
	c := img.At(int(math.Round(x)), int(math.Round(y)))
	r, g, b, _ := c.RGBA()
	return r>>8 > 170 && g>>8 < 60 && b>>8 < 60
}

func maxDiff(a, b leadRect) float64 {
	return math.Max(math.Max(math.Abs(a.Left-b.Left), math.Abs(a.Top-b.Top)), math.Max(math.Abs(a.Width-b.Width), math.Abs(a.Height-b.Height)))
}
