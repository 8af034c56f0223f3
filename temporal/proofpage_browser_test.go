package temporal_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mxschmitt/playwright-go"

	"github.com/signoff/signoff/activities/verify"
)

// checkProofPageInChromium opens a real run's proof page in Chromium and finds the verdict,
// the wanted text (the failed criterion's observed values for W2), every screenshot loaded,
// and a trace link per criterion. A screenshot of the page is kept under testdata-out/.
func checkProofPageInChromium(t *testing.T, url, run string, want []string, traces int) {
	t.Helper()
	cfg := verify.DefaultConfig()
	d, err := verify.StartDriver(cfg)
	if err != nil {
		t.Fatalf("playwright driver: %v (run go tool task browser:setup)", err)
	}
	defer d.Stop() //nolint:errcheck
	sess, err := verify.Local{Chromium: cfg.Chromium}.Open(context.Background(), d.Playwright())
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close() //nolint:errcheck
	page, err := sess.Browser.NewPage(playwright.BrowserNewPageOptions{Viewport: &playwright.Size{Width: 390, Height: 844}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := page.Goto(url, playwright.PageGotoOptions{WaitUntil: playwright.WaitUntilStateLoad}); err != nil {
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
	out := filepath.Join(repoRoot(), "testdata-out", "proofpages")
	if err := os.MkdirAll(out, 0o755); err == nil {
		_, _ = page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(filepath.Join(out, strings.ToLower(run)+"-mobile.png")), FullPage: playwright.Bool(true)})
	}
}
