package proofpage

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/verify"
	"github.com/signoff/signoff/web"
)

// One driver and one Chromium for the package's browser tests, started on first use.
var (
	browserOnce sync.Once
	driver      *verify.Driver
	session     *verify.BrowserSession
	browserErr  error
	driverDir   string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if session != nil {
		_ = session.Close()
	}
	if driver != nil {
		_ = driver.Stop()
	}
	os.Exit(code)
}

// needBrowser returns the shared Chromium. In -short mode it skips; otherwise missing setup
// fails the test, naming the task that provisions it.
func needBrowser(t *testing.T) playwright.Browser {
	t.Helper()
	if testing.Short() {
		t.Skipf("browser test skipped in -short mode (it needs `%s`)", verify.SetupTask)
	}
	browserOnce.Do(func() {
		cfg := verify.DefaultConfig()
		driverDir = cfg.DriverDir
		if browserErr = cfg.CheckSetup(true); browserErr != nil {
			return
		}
		if driver, browserErr = verify.StartDriver(cfg); browserErr != nil {
			return
		}
		session, browserErr = verify.Local{Chromium: cfg.Chromium}.Open(context.Background(), driver.Playwright())
	})
	if browserErr != nil {
		t.Fatalf("browser setup missing: %v\nrun `%s` from the repository root", browserErr, verify.SetupTask)
	}
	return session.Browser
}

// realTrace records a real Playwright trace of a small page: a navigation and a click.
func realTrace(t *testing.T, br playwright.Browser) []byte {
	t.Helper()
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>Watchlist</title><h1>Watchlist</h1><button id="go" onclick="this.textContent='NVDA AAPL MSFT'">Load</button>`)
	}))
	defer app.Close()
	ctx, err := br.NewContext()
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	if err := ctx.Tracing().Start(playwright.TracingStartOptions{Screenshots: playwright.Bool(true), Snapshots: playwright.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	page, err := ctx.NewPage()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := page.Goto(app.URL + "/watchlist"); err != nil {
		t.Fatal(err)
	}
	if err := page.Locator("#go").Click(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "trace.zip")
	if err := ctx.Tracing().Stop(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

type pageFacts struct {
	Verdict     string   `json:"verdict"`
	Images      int      `json:"images"`
	Loaded      int      `json:"loaded"`
	Broken      []string `json:"broken"`
	NoAlt       int      `json:"noAlt"`
	Traces      int      `json:"traces"`
	ScrollWidth float64  `json:"scrollWidth"`
	InnerWidth  float64  `json:"innerWidth"`
	H1          int      `json:"h1"`
	Tables      int      `json:"tables"`
	Captions    int      `json:"captions"`
	LowContrast []string `json:"lowContrast"`
}

// factsJS reads what the tests assert in one evaluation. Contrast is the WCAG ratio of each
// text-bearing element's colour against its first opaque ancestor background.
const factsJS = `() => {
  const lum = (c) => {
    const m = c.match(/[\d.]+/g).map(Number);
    const ch = m.slice(0, 3).map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * ch[0] + 0.7152 * ch[1] + 0.0722 * ch[2];
  };
  const bg = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const c = getComputedStyle(e).backgroundColor;
      const m = c.match(/[\d.]+/g);
      if (m && (m.length < 4 || Number(m[3]) > 0.5)) return c;
    }
    return 'rgb(255,255,255)';
  };
  const low = [];
  for (const el of document.body.querySelectorAll('*')) {
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own || !el.getClientRects().length) continue;
    const a = lum(getComputedStyle(el).color), b = lum(bg(el));
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    if (ratio < 4.5) low.push(el.tagName + '.' + el.className + ' ' + ratio.toFixed(2));
  }
  const imgs = [...document.images];
  const v = document.querySelector('#verdict [data-verdict]');
  return {
    verdict: v ? v.getAttribute('data-verdict') : '',
    images: imgs.length,
    loaded: imgs.filter((i) => i.complete && i.naturalWidth > 0).length,
    broken: imgs.filter((i) => !(i.complete && i.naturalWidth > 0)).map((i) => i.getAttribute('src')),
    noAlt: imgs.filter((i) => !i.alt.trim()).length,
    traces: document.querySelectorAll('a[data-trace]').length,
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
    h1: document.querySelectorAll('h1').length,
    tables: document.querySelectorAll('table').length,
    captions: document.querySelectorAll('table > caption').length,
    lowContrast: low.slice(0, 10),
  };
}`

func facts(t *testing.T, page playwright.Page) pageFacts {
	t.Helper()
	// Wait (bounded) until every image has finished loading or failed.
	if _, err := page.WaitForFunction(`() => [...document.images].every((i) => i.complete)`, nil,
		playwright.PageWaitForFunctionOptions{Timeout: playwright.Float(20000)}); err != nil {
		t.Fatalf("images did not finish loading: %v", err)
	}
	raw, err := page.Evaluate(factsJS)
	if err != nil {
		t.Fatal(err)
	}
	m := raw.(map[string]any)
	f := pageFacts{Verdict: m["verdict"].(string), Images: num(m["images"]), Loaded: num(m["loaded"]), NoAlt: num(m["noAlt"]),
		Traces: num(m["traces"]), H1: num(m["h1"]), Tables: num(m["tables"]), Captions: num(m["captions"])}
	f.ScrollWidth, f.InnerWidth = float64(num(m["scrollWidth"])), float64(num(m["innerWidth"]))
	for _, s := range m["broken"].([]any) {
		f.Broken = append(f.Broken, fmt.Sprint(s))
	}
	for _, s := range m["lowContrast"].([]any) {
		f.LowContrast = append(f.LowContrast, fmt.Sprint(s))
	}
	return f
}

func num(v any) int {
	switch x := v.(type) {
	case int:
		return x
	case float64:
		return int(x)
	}
	return -1
}

var viewports = []struct {
	name string
	vp   playwright.Size
}{{"mobile", playwright.Size{Width: 390, Height: 844}}, {"desktop", playwright.Size{Width: 1440, Height: 1000}}}

// TestBrowserProofPages opens the served proof pages of a W1-like and a W2-like run in real
// Chromium at phone and desktop sizes, through the loopback listener's mux, and finds the
// verdict, the failed criterion with its observed values, every screenshot loaded and every
// trace link; then opens a trace in the trace viewer. Page screenshots go to
// testdata-out/proofpage/.
func TestBrowserProofPages(t *testing.T) {
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

	for _, run := range []struct {
		name  string
		proof *runsProof
	}{{"w1", proofOf(r.w1.Contract.ContractID, r.w1.Bundles, r.w1.Evidence, r.root)}, {"w2", proofOf(w2ID, r.w2.Bundles, r.w2.Evidence, r.root)}} {
		for _, v := range viewports {
			t.Run(run.name+"-"+v.name, func(t *testing.T) {
				ctx, err := br.NewContext(playwright.BrowserNewContextOptions{Viewport: &v.vp})
				if err != nil {
					t.Fatal(err)
				}
				defer ctx.Close()
				page, err := ctx.NewPage()
				if err != nil {
					t.Fatal(err)
				}
				resp, err := page.Goto(srv.URL + "/proofs/" + run.proof.id + "/")
				if err != nil || resp.Status() != 200 {
					t.Fatalf("open proof page: %v", err)
				}
				f := facts(t, page)
				p := run.proof
				if f.Verdict != p.verdict {
					t.Errorf("verdict on the page %q, bundle %q", f.Verdict, p.verdict)
				}
				if f.Images != p.shots || f.Loaded != p.shots {
					t.Errorf("%d images, %d loaded, want %d screenshots loaded; broken: %v", f.Images, f.Loaded, p.shots, f.Broken)
				}
				if f.Traces != p.traces {
					t.Errorf("%d trace links, want %d", f.Traces, p.traces)
				}
				if f.NoAlt != 0 || f.H1 != 1 || f.Captions != f.Tables {
					t.Errorf("accessibility: %d images without alt, %d h1, %d of %d tables captioned", f.NoAlt, f.H1, f.Captions, f.Tables)
				}
				if len(f.LowContrast) > 0 {
					t.Errorf("text below 4.5:1 contrast: %v", f.LowContrast)
				}
				if f.ScrollWidth > f.InnerWidth {
					t.Errorf("the page overflows horizontally: scrollWidth %v > innerWidth %v", f.ScrollWidth, f.InnerWidth)
				}
				// Nor with every collapsed block open (the records, every check, the files).
				wide, err := page.Evaluate(`() => { document.querySelectorAll('details').forEach((d) => { d.open = true; });
					return document.documentElement.scrollWidth - window.innerWidth; }`)
				if err != nil {
					t.Fatal(err)
				}
				if w := num(wide); w > 0 {
					t.Errorf("with its details open, the page overflows horizontally by %d px", w)
				}
				if p.verdict == contracts.NotSatisfied {
					// The last attempt's failed criterion, with its observed values, visible.
					row := page.Locator(fmt.Sprintf(`tbody[data-criterion="mobile-no-overflow"][data-result="fail"]#attempt-%d-try-1-mobile-no-overflow`, len(p.bundles)))
					if err := row.WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateVisible, Timeout: playwright.Float(5000)}); err != nil {
						t.Fatalf("failed criterion row not visible: %v", err)
					}
					text, _ := row.InnerText()
					for _, want := range []string{"scroll_width = 927", "inner_width = 390", "fail"} {
						if !strings.Contains(text, want) {
							t.Errorf("failed criterion row lacks %q: %s", want, text)
						}
					}
					banner, _ := page.Locator("#verdict").InnerText()
					if !strings.Contains(banner, "scrollWidth = 927, innerWidth = 390") {
						t.Errorf("verdict banner does not name the observed values: %s", banner)
					}
				}
				shot := filepath.Join(out, fmt.Sprintf("%s-%s.png", run.name, v.name))
				if _, err := page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(shot), FullPage: playwright.Bool(true)}); err != nil {
					t.Fatal(err)
				}
				t.Logf("%s: verdict %s, %d screenshots loaded, %d trace links, scrollWidth %v at %v; page screenshot %s",
					p.id, f.Verdict, f.Loaded, f.Traces, f.ScrollWidth, f.InnerWidth, shot)
			})
		}
	}

	t.Run("trace-viewer", func(t *testing.T) {
		ctx, err := br.NewContext(playwright.BrowserNewContextOptions{Viewport: &playwright.Size{Width: 1440, Height: 1000}})
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
		link := page.Locator("a[data-trace]").First()
		href, _ := link.GetAttribute("href")
		if !strings.Contains(href, "/proofs/_trace/index.html?trace=") {
			t.Fatalf("trace link %q does not open the viewer", href)
		}
		start := time.Now()
		if err := link.Click(); err != nil {
			t.Fatal(err)
		}
		// The viewer lists the trace's actions once it has fetched and unpacked the zip.
		action := page.GetByText("Click", playwright.PageGetByTextOptions{Exact: playwright.Bool(false)}).First()
		if err := action.WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateVisible, Timeout: playwright.Float(30000)}); err != nil {
			_, _ = page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(filepath.Join(out, "trace-viewer-failed.png"))})
			t.Fatalf("the trace viewer shows no action of the trace: %v", err)
		}
		nav := page.GetByText("Navigate", playwright.PageGetByTextOptions{Exact: playwright.Bool(false)}).First()
		if err := nav.WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateVisible, Timeout: playwright.Float(10000)}); err != nil {
			t.Errorf("the trace viewer shows no navigation: %v", err)
		}
		// The DOM snapshot of the traced page renders in the viewer's same-origin frame.
		snapshot := false
		for deadline := time.Now().Add(15 * time.Second); !snapshot && time.Now().Before(deadline); {
			for _, fr := range page.Frames() {
				if fr == page.MainFrame() {
					continue
				}
				if txt, err := fr.Locator("h1").First().InnerText(playwright.LocatorInnerTextOptions{Timeout: playwright.Float(500)}); err == nil && txt == "Watchlist" {
					snapshot = true
					break
				}
			}
		}
		if !snapshot {
			t.Errorf("the trace viewer shows no DOM snapshot of the traced page")
		}
		elapsed := time.Since(start)
		shot := filepath.Join(out, "trace-viewer.png")
		_, _ = page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(shot)})
		t.Logf("trace viewer showed the trace's actions %v after the click; screenshot %s", elapsed.Round(time.Millisecond), shot)
	})

	t.Run("static-render", func(t *testing.T) {
		site := filepath.Join(out, "site")
		_ = os.RemoveAll(site)
		if _, err := RenderSite(r.root, []string{r.w1.Contract.ContractID, w2ID}, site, keys()); err != nil {
			t.Fatal(err)
		}
		ctx, err := br.NewContext(playwright.BrowserNewContextOptions{Viewport: &playwright.Size{Width: 390, Height: 844}})
		if err != nil {
			t.Fatal(err)
		}
		defer ctx.Close()
		page, err := ctx.NewPage()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := page.Goto("file://" + filepath.Join(site, w2ID, "index.html")); err != nil {
			t.Fatal(err)
		}
		f := facts(t, page)
		p := proofOf(w2ID, r.w2.Bundles, r.w2.Evidence, r.root)
		if f.Loaded != p.shots || f.Traces != p.traces || f.Verdict != p.verdict {
			t.Errorf("static page: %d of %d screenshots loaded, %d trace links (want %d), verdict %q", f.Loaded, p.shots, f.Traces, p.traces, f.Verdict)
		}
		hrefs, err := page.Locator("a[data-trace]").EvaluateAll(`(as) => as.map((a) => a.getAttribute('href'))`)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hrefs.([]any) {
			if s := fmt.Sprint(h); !strings.HasSuffix(s, ".zip") || strings.Contains(s, "_trace") {
				t.Errorf("static trace link %q is not a raw trace file", s)
			}
		}
		_, _ = page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(filepath.Join(out, "static-w2-mobile.png")), FullPage: playwright.Bool(true)})
		t.Logf("static site in %s: %d screenshots loaded from disk, %d raw trace links", site, f.Loaded, f.Traces)
	})
}

// runsProof is what a page must show for a run, counted from the fixture, not from the page.
type runsProof struct {
	id      string
	verdict string
	shots   int // implementation screenshots plus base screenshots present, plus the first screen's
	traces  int
	bundles []contracts.Bundle
}

func proofOf(id string, bundles []contracts.Bundle, evidence []*contracts.Evidence, root string) *runsProof {
	p := &runsProof{id: id, verdict: bundles[len(bundles)-1].Verdict, bundles: bundles}
	// The first screen repeats, per viewport, the latest attempt's implementation screenshot
	// and the base one beside it.
	lead := map[string]int{}
	if ev := evidence[len(evidence)-1]; ev != nil {
		for _, a := range ev.Artifacts {
			if m := shotRe.FindStringSubmatch(a.Name); a.Kind == contracts.ArtifactScreenshot && m != nil {
				vp := m[1] + "x" + m[2]
				lead[vp] = max(lead[vp], 1)
				if _, err := os.Stat(filepath.Join(root, id, "base", a.Name)); err == nil {
					lead[vp] = 2
				}
			}
		}
	}
	for _, n := range lead {
		p.shots += n
	}
	for _, ev := range evidence {
		if ev == nil {
			continue
		}
		for _, a := range ev.Artifacts {
			switch a.Kind {
			case contracts.ArtifactScreenshot:
				p.shots++
				if _, err := os.Stat(filepath.Join(root, id, "base", a.Name)); err == nil {
					p.shots++
				}
			case contracts.ArtifactTrace:
				p.traces++
			}
		}
	}
	return p
}
