package verify

import (
	"context"
	"testing"
	"time"

	"github.com/mxschmitt/playwright-go"
)

// BenchmarkLocalLaunch measures what a per-run local browser costs: launch, a first page
// rendering a document, close. Each iteration also launches Chromium the way the verifier did
// before it was sandboxed (directly, as the worker, --no-sandbox), so both are measured under
// the same machine load. Run: go test -run '^$' -bench LocalLaunch -benchtime 10x
func BenchmarkLocalLaunch(b *testing.B) {
	needBrowser(b)
	srv := site(b, testSHA, map[string]string{"/": page("", `<p id="p">hello</p><script>p.textContent = "js ran"</script>`)}, nil)
	pw := testDriver.Playwright()
	cfg := DefaultConfig()
	sandboxed := cfg.local()
	unsandboxed := func() (playwright.Browser, error) {
		return pw.Chromium.Launch(playwright.BrowserTypeLaunchOptions{
			ExecutablePath: playwright.String(cfg.Chromium),
			Headless:       playwright.Bool(true),
			Args:           append([]string{"--no-sandbox"}, LaunchArgs...),
		})
	}
	// The sandbox probe runs once per process; keep it out of the per-launch figures.
	if _, err := planLaunch(context.Background(), cfg.Chromium, cfg.BrowserUser, false); err != nil {
		b.Fatal(err)
	}
	firstPage := func(br playwright.Browser) time.Duration {
		t := time.Now()
		pg, err := br.NewPage()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := pg.Goto(srv.URL + "/"); err != nil {
			b.Fatal(err)
		}
		if txt, err := pg.Locator("#p").TextContent(); err != nil || txt != "js ran" {
			b.Fatalf("page text %q, %v", txt, err)
		}
		return time.Since(t)
	}
	var launch, first, oldLaunch, oldFirst time.Duration
	for b.Loop() {
		t := time.Now()
		sess, err := sandboxed.Open(context.Background(), pw)
		if err != nil {
			b.Fatal(err)
		}
		launch += time.Since(t)
		first += firstPage(sess.Browser)
		if err := sess.Close(); err != nil {
			b.Fatal(err)
		}

		t = time.Now()
		br, err := unsandboxed()
		if err != nil {
			b.Fatal(err)
		}
		oldLaunch += time.Since(t)
		oldFirst += firstPage(br)
		if err := br.Close(); err != nil {
			b.Fatal(err)
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(launch.Milliseconds())/n, "launch-ms")
	b.ReportMetric(float64(first.Milliseconds())/n, "first-page-ms")
	b.ReportMetric(float64(oldLaunch.Milliseconds())/n, "unsandboxed-launch-ms")
	b.ReportMetric(float64(oldFirst.Milliseconds())/n, "unsandboxed-first-page-ms")
}
