package verify

import (
	"context"
	"testing"
	"time"
)

// BenchmarkLocalLaunch measures what a per-run local browser costs: launch, a first page
// rendering a document, close. Run: go test -run '^$' -bench LocalLaunch -benchtime 10x
func BenchmarkLocalLaunch(b *testing.B) {
	needBrowser(b)
	srv := site(b, testSHA, map[string]string{"/": page("", `<p id="p">hello</p><script>p.textContent = "js ran"</script>`)}, nil)
	src := Local{Chromium: DefaultConfig().Chromium}
	var launch, first time.Duration
	for b.Loop() {
		t := time.Now()
		sess, err := src.Open(context.Background(), testDriver.Playwright())
		if err != nil {
			b.Fatal(err)
		}
		launch += time.Since(t)
		t = time.Now()
		pg, err := sess.Browser.NewPage()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := pg.Goto(srv.URL + "/"); err != nil {
			b.Fatal(err)
		}
		if txt, err := pg.Locator("#p").TextContent(); err != nil || txt != "js ran" {
			b.Fatalf("page text %q, %v", txt, err)
		}
		first += time.Since(t)
		if err := sess.Close(); err != nil {
			b.Fatal(err)
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(launch.Milliseconds())/n, "launch-ms")
	b.ReportMetric(float64(first.Milliseconds())/n, "first-page-ms")
}
