package proofpage

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mxschmitt/playwright-go"

	"github.com/signoff/signoff/web"
	"github.com/signoff/signoff/web/proofpage/firstscreen"
)

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
			f := firstscreen.Check(t, page, size.Width >= 1280)
			if f.Sentence != wantSentence {
				t.Errorf("verdict sentence:\n got %q\nwant %q", f.Sentence, wantSentence)
			}
			if len(f.Viewports) != 2 || f.Viewports[0].Viewport != "390×844" || f.Viewports[1].Viewport != "1440×1000" {
				t.Fatalf("first screen viewports: %+v", f.Viewports)
			}
			if f.Viewports[0].Criterion != "mobile-no-overflow" || f.Viewports[0].Result != "fail" {
				t.Errorf("at 390×844 the first screen shows %s (%s), not the failing mobile-no-overflow", f.Viewports[0].Criterion, f.Viewports[0].Result)
			}
			for _, vp := range f.Viewports {
				if len(vp.Pictures) != 2 || vp.Pictures[0].Role != "base" || vp.Pictures[1].Role != "implementation" {
					t.Fatalf("%s: pictures %+v, want base then implementation", vp.Viewport, vp.Pictures)
				}
			}
			// The offender is outlined on both pictures (the base check measured it too), at
			// the coordinates the verifier reported.
			var impl firstscreen.Box
			for _, p := range f.Viewports[0].Pictures {
				if len(p.Boxes) != 1 {
					t.Fatalf("%s: the failing element is outlined %d times, want once", p.Role, len(p.Boxes))
				}
				b := p.Boxes[0]
				if b.X != offender["x"] || b.Y != offender["y"] || b.W != offender["width"] || b.H != offender["height"] {
					t.Errorf("%s: outline drawn for %+v, the verifier measured %v", p.Role, b, offender)
				}
				impl = b
			}
			for _, p := range f.Viewports[1].Pictures {
				if len(p.Boxes) != 0 {
					t.Errorf("1440×1000 %s: %d outlines on a passing criterion", p.Role, len(p.Boxes))
				}
			}
			shot, err := page.Screenshot()
			if err != nil {
				t.Fatal(err)
			}
			name := filepath.Join(out, fmt.Sprintf("first-screen-w2-%d.png", size.Width))
			_ = os.WriteFile(name, shot, 0o644)
			// In the pixels: the outline is drawn just outside the box's top and left edges.
			red, samples, err := firstscreen.OutlineInPixels(shot, impl)
			if err != nil {
				t.Fatal(err)
			}
			if samples == 0 || float64(red) < 0.9*float64(samples) {
				t.Errorf("the screenshot shows the outline on %d of %d points along the box's edges", red, samples)
			}
			t.Logf("%d px: sentence ends at %.0f of %.0f px; outline at (%.1f, %.1f) %.1f×%.1f on screen; %d of %d edge points red; %s",
				size.Width, f.SentenceBottom, f.InnerHeight, impl.Left, impl.Top, impl.Width, impl.Height, red, samples, name)
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
