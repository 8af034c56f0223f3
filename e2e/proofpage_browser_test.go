package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mxschmitt/playwright-go"

	"github.com/signoff/signoff/e2e/signoffproc"
	"github.com/signoff/signoff/internal/verify"
	"github.com/signoff/signoff/web/proofpage/firstscreen"
)

// checkProofPageInChromium opens a real run's proof page in Chromium and finds the verdict,
// the wanted text (the failed criterion's observed values for W2), every screenshot loaded,
// and a trace link per criterion. A screenshot of the page is kept under testdata-out/.
func checkProofPageInChromium(t *testing.T, url, run string, want []string, traces int) {
	t.Helper()
	sess, done := openChromium(t)
	defer done()
	page, err := sess.Browser.NewPage(playwright.BrowserNewPageOptions{Viewport: &playwright.Size{Width: 390, Height: 844}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := page.Goto(url, playwright.PageGotoOptions{WaitUntil: playwright.WaitUntilStateLoad}); err != nil {
		t.Fatal(err)
	}
	// Hashes, payment and settlement sit in a collapsed block: open it, as a reviewer would.
	if _, err := page.Evaluate(`() => document.querySelectorAll('details').forEach((d) => { d.open = true; })`); err != nil {
		t.Fatal(err)
	}
	text, err := page.Locator("body").InnerText()
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%s proof page lacks %q", run, w)
		}
	}
	stats, err := page.Evaluate(`() => ({
		images: document.images.length,
		loaded: [...document.images].filter(i => i.complete && i.naturalWidth > 0).length,
		noAlt: [...document.images].filter(i => !i.alt).length,
		traces: [...document.querySelectorAll('a[href]')].filter(a => /trace-[^/]*\.zip/.test(a.getAttribute('href'))).length,
		overflow: document.documentElement.scrollWidth - window.innerWidth,
	})`)
	if err != nil {
		t.Fatal(err)
	}
	m := stats.(map[string]any)
	if m["images"].(int) == 0 || m["loaded"] != m["images"] || m["noAlt"].(int) != 0 {
		t.Errorf("%s screenshots: %v", run, m)
	}
	if m["traces"].(int) < traces {
		t.Errorf("%s: %v trace links, want at least %d", run, m["traces"], traces)
	}
	if m["overflow"].(int) > 0 {
		t.Errorf("%s proof page overflows at 390 px by %v", run, m["overflow"])
	}
	out := filepath.Join(signoffproc.RepoRoot(), "testdata-out", "proofpages")
	if err := os.MkdirAll(out, 0o755); err == nil {
		_, _ = page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(filepath.Join(out, strings.ToLower(run)+"-mobile.png")), FullPage: playwright.Bool(true)})
	}
}

// checkFirstScreenInChromium opens a real run's proof page at 1280 and 390 px wide and checks
// its first screen (firstscreen.Check): the verdict sentence, the base and implementation
// pictures per viewport, above the fold at 1280, and every outline over the box the verifier
// measured; then opens the first failing criterion's trace from its link and waits for the
// trace viewer to list its navigation. Outlines are checked wherever the evidence holds boxes;
// the log says how many there were.
func checkFirstScreenInChromium(t *testing.T, url, prefix, contains string) {
	t.Helper()
	sess, done := openChromium(t)
	defer done()
	out := filepath.Join(signoffproc.RepoRoot(), "testdata-out", "proofpages")
	_ = os.MkdirAll(out, 0o755)
	for _, size := range []playwright.Size{{Width: 1280, Height: 800}, {Width: 390, Height: 844}} {
		page, err := sess.Browser.NewPage(playwright.BrowserNewPageOptions{Viewport: &size})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := page.Goto(url); err != nil {
			t.Fatal(err)
		}
		f := firstscreen.Check(t, page, size.Width >= 1280)
		if !strings.HasPrefix(f.Sentence, prefix) || !strings.Contains(f.Sentence, contains) {
			t.Errorf("%d px: verdict sentence %q, want %q…%q", size.Width, f.Sentence, prefix, contains)
		}
		boxes := 0
		for _, vp := range f.Viewports {
			for _, p := range vp.Pictures {
				boxes += len(p.Boxes)
			}
		}
		_, _ = page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(filepath.Join(out, fmt.Sprintf("w2-first-screen-%d.png", size.Width)))})
		t.Logf("%d px: %d viewport pair(s) on the first screen, %d outline(s) from measured boxes", size.Width, len(f.Viewports), boxes)
		if size.Width != 1280 {
			_ = page.Close()
			continue
		}
		var trace string
		for _, vp := range f.Viewports {
			if vp.Result == "fail" && trace == "" {
				trace = vp.Trace
			}
		}
		if !strings.Contains(trace, "/proofs/_trace/index.html?trace=") {
			t.Fatalf("the failing criterion's trace link %q does not open the trace viewer", trace)
		}
		if err := page.Locator(`#pictures figure[data-result="fail"] a[data-criterion-trace]`).First().Click(); err != nil {
			t.Fatal(err)
		}
		nav := page.GetByText("Navigate", playwright.PageGetByTextOptions{Exact: playwright.Bool(false)}).First()
		if err := nav.WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateVisible, Timeout: playwright.Float(30000)}); err != nil {
			t.Errorf("the trace viewer shows no navigation of the criterion's trace: %v", err)
		}
		_ = page.Close()
	}
}

// openChromium starts the Playwright driver and a local Chromium as the verifier would;
// done stops both.
func openChromium(t *testing.T) (sess *verify.BrowserSession, done func()) {
	t.Helper()
	cfg := verify.DefaultConfig()
	d, err := verify.StartDriver(cfg)
	if err != nil {
		t.Fatalf("playwright driver: %v (run go tool task browser:setup)", err)
	}
	sess, err = verify.Local{Chromium: cfg.Chromium}.Open(context.Background(), d.Playwright())
	if err != nil {
		_ = d.Stop()
		t.Fatal(err)
	}
	return sess, func() { _ = sess.Close(); _ = d.Stop() }
}
