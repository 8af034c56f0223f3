package verify

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/signoff/signoff/contracts"
)

// BenchmarkVerifyW1 compares Verify on the W1 contract with a minimal hand-written playwright-go
// run making the same checks in the same browser: it loads each distinct page state (route,
// viewport, seed) once, in a fresh context with storage-state seeding, tracing and a full-page
// screenshot, and reads every check of that state there. The difference is what the verifier
// adds: the pinned origin, the device, the isolated-world probe, settling (load, network idle,
// DOM quiet, stable reads to the end of the budget, a person's pass on a phone), ink, and
// evidence per criterion. Run: go test -run '^$' -bench VerifyW1 -benchtime 3x
func BenchmarkVerifyW1(b *testing.B) {
	v := testVerifier(b)
	v.Logger = nil
	c, hash := loadW1(b)
	srv := site(b, testSHA, map[string]string{"/watchlist": watchlistGood}, nil)
	sess, err := testSource.Open(context.Background(), testDriver.Playwright())
	if err != nil {
		b.Fatal(err)
	}
	var verifyTime, baseTime time.Duration
	for b.Loop() {
		t := time.Now()
		ev, err := v.Verify(context.Background(), contractRequest(b, c, hash, srv.URL))
		if err != nil {
			b.Fatal(err)
		}
		verifyTime += time.Since(t)
		for _, r := range ev.Results {
			if r.Status != contracts.StatusPass {
				b.Fatalf("verify: %s %s %s", r.CriterionID, r.Status, r.Error)
			}
		}

		t = time.Now()
		if err := handWrittenW1(sess.Browser, srv.URL, c.Criteria, b.TempDir()); err != nil {
			b.Fatal(err)
		}
		baseTime += time.Since(t)
	}
	n := float64(b.N)
	b.ReportMetric(float64(verifyTime.Milliseconds())/n, "verify-ms/run")
	b.ReportMetric(float64(baseTime.Milliseconds())/n, "handwritten-ms/run")
	b.ReportMetric(float64(verifyTime)/float64(baseTime), "ratio")
}

// handWrittenW1 is the plain way: one page per viewport (W1 has one route and one seed), every
// check read in the page's own world right after load.
func handWrittenW1(br playwright.Browser, base string, criteria []contracts.Criterion, dir string) error {
	var vps []contracts.Viewport
	for _, c := range criteria {
		for _, vp := range c.Viewports() {
			if !slices.Contains(vps, vp) {
				vps = append(vps, vp)
			}
		}
	}
	for _, vp := range vps {
		ctx, err := br.NewContext(playwright.BrowserNewContextOptions{
			Viewport: &playwright.Size{Width: vp.Width, Height: vp.Height},
			StorageState: &playwright.OptionalStorageState{Origins: []playwright.Origin{{Origin: base,
				LocalStorage: []playwright.NameValue{{Name: "watchlist", Value: `["NVDA","AAPL","MSFT","SPY"]`}}}}},
		})
		if err != nil {
			return err
		}
		if err := ctx.Tracing().Start(playwright.TracingStartOptions{Screenshots: playwright.Bool(true), Snapshots: playwright.Bool(false)}); err != nil {
			return err
		}
		page, err := ctx.NewPage()
		if err != nil {
			return err
		}
		pageErrors := 0
		page.OnPageError(func(error) { pageErrors++ })
		resp, err := page.Goto(base + "/watchlist")
		if err != nil {
			return err
		}
		for _, c := range criteria {
			if !slices.Contains(c.Viewports(), vp) {
				continue
			}
			ok := true
			switch c.ID {
			case "loads-mobile", "loads-desktop":
				ok = resp.Status() < 400 && pageErrors == 0
			case "mobile-no-overflow":
				if err := page.Locator(`[data-symbol], [data-testid="watchlist-card"]`).Filter(playwright.LocatorFilterOptions{Visible: playwright.Bool(true)}).First().WaitFor(); err != nil {
					return err
				}
				v, err := page.Evaluate(`document.documentElement.scrollWidth <= window.innerWidth`)
				if err != nil {
					return err
				}
				ok = v == true
			case "mobile-cards":
				tableVisible, err := page.Locator("table").IsVisible()
				if err != nil {
					return err
				}
				ok = !tableVisible
				for _, s := range []string{"NVDA", "AAPL", "MSFT"} {
					vis, err := page.Locator(`[data-testid="watchlist-card"]`).GetByText(s).IsVisible()
					if err != nil {
						return err
					}
					ok = ok && vis
				}
			case "desktop-table":
				ok, err = page.Locator("table").GetByText("NVDA", playwright.LocatorGetByTextOptions{Exact: playwright.Bool(true)}).IsVisible()
				if err != nil {
					return err
				}
			case "no-page-errors":
				ok = pageErrors == 0
			}
			if !ok {
				return fmt.Errorf("hand-written: %s failed at %dx%d", c.ID, vp.Width, vp.Height)
			}
		}
		shot := filepath.Join(dir, fmt.Sprintf("shot-%dx%d.png", vp.Width, vp.Height))
		if _, err := page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(shot), FullPage: playwright.Bool(true)}); err != nil {
			return err
		}
		if err := ctx.Tracing().Stop(filepath.Join(dir, fmt.Sprintf("trace-%dx%d.zip", vp.Width, vp.Height))); err != nil {
			return err
		}
		if err := ctx.Close(); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkSettleCost compares watching a page to the end of the criterion's budget (semantics
// 3: virtual time, a read whenever the page may have changed, one at the end) with a single
// read once the DOM went quiet in real time (how semantics 2 read every page, and how a held
// route is still read). Both measure the W1 mobile-cards assertion on the W1 page at 390x844 in
// fresh contexts; the ratio is the cost of settling per viewport.
func BenchmarkSettleCost(b *testing.B) {
	v := testVerifier(b)
	v.Logger = nil
	c, _ := loadW1(b)
	var cards contracts.Criterion
	for _, cr := range c.Criteria {
		if cr.ID == "mobile-cards" {
			cards = cr
		}
	}
	srv := site(b, testSHA, map[string]string{"/watchlist": watchlistGood}, nil)
	sess, err := testSource.Open(context.Background(), testDriver.Playwright())
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	r := &run{v: v, req: &Request{Criteria: c.Criteria}, browser: sess, log: v.logger()}
	lv := leaves(cards.Assert, "")
	var reads []probeRead
	for _, l := range lv {
		pr, _, err := readFor(l.a)
		if err != nil {
			b.Fatal(err)
		}
		if pr != nil {
			reads = append(reads, *pr)
		}
	}
	once := func(held bool) (time.Duration, int) {
		bctx, err := sess.Browser.NewContext(playwright.BrowserNewContextOptions{
			Viewport: &playwright.Size{Width: 390, Height: 844},
			StorageState: &playwright.OptionalStorageState{Origins: []playwright.Origin{{Origin: srv.URL,
				LocalStorage: []playwright.NameValue{{Name: "watchlist", Value: `["NVDA","AAPL","MSFT","SPY"]`}}}}},
		})
		if err != nil {
			b.Fatal(err)
		}
		defer bctx.Close()
		page, err := bctx.NewPage()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := page.Goto(srv.URL + "/watchlist"); err != nil {
			b.Fatal(err)
		}
		t := time.Now()
		obs, err := r.observe(context.Background(), bctx, page, reads, false, held, float64(cards.MaxRuntimeMS), time.Now().Add(time.Minute), time.Now().Add(time.Minute), watch{})
		if err != nil {
			b.Fatal(err)
		}
		return time.Since(t), len(obs.reads)
	}
	var settle, single time.Duration
	reads3 := 0
	for b.Loop() {
		d, n := once(false)
		settle += d
		reads3 += n
		d, _ = once(true)
		single += d
	}
	n := float64(b.N)
	b.ReportMetric(float64(settle.Milliseconds())/n, "settle-ms/viewport")
	b.ReportMetric(float64(single.Milliseconds())/n, "single-read-ms/viewport")
	b.ReportMetric(float64(reads3)/n, "reads/viewport")
	b.ReportMetric(float64(settle)/float64(single), "ratio")
}
