package verify

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signoff/signoff/contracts"
)

// jobShapes is a plan as "vp: id id; vp: id".
func jobShapes(criteria []contracts.Criterion, jobs []pageJob) string {
	var s []string
	for _, j := range jobs {
		var ids []string
		for _, m := range j.members {
			ids = append(ids, fmt.Sprintf("%s#%d", criteria[m.idx].ID, m.k))
		}
		s = append(s, vpName(j.vp)+": "+strings.Join(ids, " "))
	}
	return strings.Join(s, "; ")
}

func TestPlanPagesSharesOnlyReadOnlyPagesOfOneState(t *testing.T) {
	c, _ := loadW1(t)
	if got, want := jobShapes(c.Criteria, planPages(c.Criteria)),
		"390x844: loads-mobile#0 mobile-no-overflow#0 mobile-cards#0 no-page-errors#0; 1440x1000: loads-desktop#0 desktop-table#0 no-page-errors#1"; got != want {
		t.Errorf("W1 plan\n got %s\nwant %s", got, want)
	}

	text := contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{"x"}}
	seeded := crit("seeded", "/a", text)
	seeded.Seed = &contracts.Seed{LocalStorage: map[string]json.RawMessage{"k": json.RawMessage(`1`)}}
	slow := crit("slow", "/a", text)
	slow.MaxRuntimeMS = 20000
	clicks := crit("clicks", "/a", text)
	clicks.Actions = []contracts.Action{{Type: contracts.ActionClick, Selector: "button"}}
	held := crit("held", "/a", text)
	held.Actions = []contracts.Action{{Type: contracts.ActionDelayRoute, Route: "/api", DelayMS: 100}}
	goes := crit("goes", "/a", text)
	goes.Actions = []contracts.Action{{Type: contracts.ActionGoto, Route: "/b"}}
	waits := crit("waits", "/a", text)
	waits.Actions = []contracts.Action{{Type: contracts.ActionWaitFor, Selector: "main"}}
	measures := crit("measures", "/a", contracts.Assertion{Kind: contracts.KindMeasure, Expression: "1", Operator: "eq", Expected: json.RawMessage(`1`)})
	twice := crit("twice", "/a", text, mobile, mobile)
	all := []contracts.Criterion{
		crit("a", "/a", text), crit("other-route", "/b", text), seeded, slow, clicks, held, goes, waits, measures,
		crit("wide", "/a", text, desktop, mobile), twice,
		{ID: "http", Assert: contracts.Assertion{Kind: contracts.KindHTTP}},
	}
	want := "390x844: a#0 waits#0 wide#1 twice#0; 390x844: other-route#0; 390x844: seeded#0; 390x844: slow#0; " +
		"390x844: clicks#0; 390x844: held#0; 390x844: goes#0; 390x844: measures#0; 1440x1000: wide#0; 390x844: twice#1"
	if got := jobShapes(all, planPages(all)); got != want {
		t.Errorf("plan\n got %s\nwant %s", got, want)
	}
}

// countingSite serves one page and counts its loads.
func countingSite(t *testing.T, html string) (string, *atomic.Int64) {
	var loads atomic.Int64
	srv := site(t, testSHA, nil, map[string]http.HandlerFunc{"/watchlist": func(w http.ResponseWriter, r *http.Request) {
		loads.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprint(w, html)
	}})
	return srv.URL, &loads
}

// The W1 contract loads its page twice, once per viewport, and every criterion still carries
// its own screenshot and its own trace, with the page of each of its viewports in it.
func TestReadOnlyCriteriaShareOneSettledPage(t *testing.T) {
	v := testVerifier(t)
	c, hash := loadW1(t)
	base, loads := countingSite(t, watchlistGood)
	req := contractRequest(t, c, hash, base)
	ev := verify(t, v, req)
	if n := loads.Load(); n != 2 {
		t.Errorf("the page was loaded %d times, want 2 (one per viewport)", n)
	}
	for _, cr := range c.Criteria {
		r := wantStatus(t, ev, cr.ID, contracts.StatusPass)
		var want []string
		for _, vp := range cr.Viewports() {
			want = append(want, "shot-"+cr.ID+"-"+vpName(vp)+".png")
		}
		want = append(want, "trace-"+cr.ID+".zip")
		if !slices.Equal(r.Artifacts, want) {
			t.Errorf("%s artifacts %v, want %v", cr.ID, r.Artifacts, want)
		}
		zr, err := zip.OpenReader(filepath.Join(req.OutDir, "trace-"+cr.ID+".zip"))
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, e := range zr.File {
			names[e.Name] = true
		}
		zr.Close()
		for _, vp := range cr.Viewports() {
			if !names[vpName(vp)+"-trace.trace"] {
				t.Errorf("%s trace has no page at %s", cr.ID, vpName(vp))
			}
		}
		for _, vp := range cr.Viewports() {
			if !slices.ContainsFunc(r.Reads, func(rd contracts.Read) bool { return rd.Viewport == vpName(vp) && rd.Decides }) {
				t.Errorf("%s has no deciding read at %s: %+v", cr.ID, vpName(vp), r.Reads)
			}
		}
	}
	for _, a := range ev.Artifacts {
		if _, err := os.Stat(filepath.Join(req.OutDir, a.Name)); err != nil {
			t.Errorf("artifact %s: %v", a.Name, err)
		}
	}
	if leftovers, _ := filepath.Glob(filepath.Join(req.OutDir, ".trace-*")); len(leftovers) > 0 {
		t.Errorf("page trace parts left behind: %v", leftovers)
	}
}

// Sharing a page changes no criterion's evidence: each one verified alone observes the same
// values, passes or fails alike and is decided at a read of the same kind. The pages include
// one that throws when a person scrolls: a criterion that reads nothing of the page (loads)
// is not given the person's pass it would not have had alone.
func TestSharedPageObservesWhatEachCriterionAloneDoes(t *testing.T) {
	v := testVerifier(t)
	c, hash := loadW1(t)
	scrollThrows := strings.Replace(watchlistGood, "</body>",
		`<div style="height:3000px"></div><script>for (const e of ['scroll', 'wheel', 'touchstart', 'keydown'])
	addEventListener(e, () => { throw new Error('a person ' + e) }, {once: true})</script></body>`, 1)
	for name, html := range map[string]string{"good": watchlistGood, "w2": watchlistW2, "scroll-throws": scrollThrows} {
		t.Run(name, func(t *testing.T) {
			base, _ := countingSite(t, html)
			together := verify(t, v, contractRequest(t, c, hash, base))
			for i, cr := range c.Criteria {
				alone := contractRequest(t, c, hash, base)
				alone.Criteria = []contracts.Criterion{cr}
				got := verify(t, v, alone).Results[0]
				want := together.Results[i]
				if got.Status != want.Status {
					t.Errorf("%s: alone %s, shared %s (%s)", cr.ID, got.Status, want.Status, want.Error)
				}
				if !observedEqual(got.Observed, want.Observed) {
					t.Errorf("%s observed\nalone  %v\nshared %v", cr.ID, got.Observed, want.Observed)
				}
				if g, w := len(got.PageErrors), len(want.PageErrors); g != w {
					t.Errorf("%s page errors: alone %v, shared %v", cr.ID, got.PageErrors, want.PageErrors)
				}
				if g, w := readKinds(got.Reads), readKinds(want.Reads); g != w {
					t.Errorf("%s reads: alone %s, shared %s", cr.ID, g, w)
				}
			}
		})
	}
}

// observedEqual compares observed values as JSON (map keys sorted).
func observedEqual(a, b map[string]any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// readKinds is what a criterion's reads were for: the first, whether a person's pass came,
// and which kind decided.
func readKinds(reads []contracts.Read) string {
	var s []string
	for _, rd := range reads {
		if rd.Why == ReadSettled || rd.Why == ReadTouched || rd.Decides {
			s = append(s, fmt.Sprintf("%s:%s:%v", rd.Viewport, rd.Why, rd.Decides))
		}
	}
	return strings.Join(s, " ")
}

// A wait on a shared page that never ends is its criterion's failure only: the others on the
// page are read and pass.
func TestSharedPageWaitFailsOnlyItsCriterion(t *testing.T) {
	v := testVerifier(t)
	base, loads := countingSite(t, watchlistGood)
	text := crit("text", "/watchlist", contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{"Watchlist"}})
	never := crit("never", "/watchlist", contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{"Watchlist"}})
	never.Actions = []contracts.Action{{Type: contracts.ActionWaitFor, Selector: "#never-there", TimeoutMS: 500}}
	ev := verify(t, v, request(t, base, text, never))
	wantStatus(t, ev, "text", contracts.StatusPass)
	r := wantStatus(t, ev, "never", contracts.StatusError)
	if !strings.Contains(r.Error, "action 1 (wait_for #never-there)") {
		t.Errorf("never: error %q does not name its wait", r.Error)
	}
	if n := loads.Load(); n != 1 {
		t.Errorf("loaded %d times, want 1", n)
	}
}

// On a busy host Chromium has stopped giving a page frames: its screenshots and input events
// went unanswered for good (errNoFrame). The page is then measured again from the start on a
// new page, once: a lost frame costs a page load, not the verdict; a page that never gets one
// is an error, and the run ends.
func TestAPageWithoutFramesIsMeasuredAgainOnANewPage(t *testing.T) {
	c, hash := loadW1(t)
	// A page left without its trace discards it: the driver's folder for it does not stay in
	// the driver's temporary folder. (No other test of the package runs beside this one: it is
	// not parallel.)
	before := driverTraceFolders(t)
	defer func() {
		for _, d := range driverTraceFolders(t) {
			if !slices.Contains(before, d) {
				t.Errorf("the driver's trace folder %s was left behind", d)
			}
		}
	}()
	t.Run("one lost", func(t *testing.T) {
		v := testVerifier(t)
		var asked atomic.Int64
		v.Config.frameWait = 3 * time.Second // a hang detector: answered calls take milliseconds
		v.Config.dropFrame = func(string) bool { return asked.Add(1) == 1 }
		base, loads := countingSite(t, watchlistGood)
		ev := verify(t, v, contractRequest(t, c, hash, base))
		if asked.Load() < 2 {
			t.Fatalf("%d calls waited for a frame: W1 reads ink, so the test proves nothing", asked.Load())
		}
		for _, cr := range c.Criteria {
			wantStatus(t, ev, cr.ID, contracts.StatusPass)
		}
		if n := loads.Load(); n != 3 {
			t.Errorf("the page was loaded %d times, want 3 (one per viewport, and the page that lost a frame again)", n)
		}
	})
	t.Run("the full-page screenshot lost", func(t *testing.T) {
		v := testVerifier(t)
		var shots atomic.Int64
		v.Config.frameWait = 3 * time.Second
		v.Config.dropFrame = func(call string) bool { return call == "Page.screenshot" && shots.Add(1) == 1 }
		// Taller than its screen: its screenshot is taken for the evidence (a page that fits
		// is the screen its last read captured).
		tall := strings.Replace(watchlistGood, "</body>", `<div style="height:3000px"></div></body>`, 1)
		base, loads := countingSite(t, tall)
		ev := verify(t, v, contractRequest(t, c, hash, base))
		for _, cr := range c.Criteria {
			wantStatus(t, ev, cr.ID, contracts.StatusPass)
		}
		if n := shots.Load(); n != 3 {
			t.Errorf("%d full-page screenshots, want 3 (one per viewport, and the lost one's again)", n)
		}
		if n := loads.Load(); n != 3 {
			t.Errorf("the page was loaded %d times, want 3 (one per viewport, and the page whose screenshot was lost again)", n)
		}
	})
	t.Run("all lost", func(t *testing.T) {
		v := testVerifier(t)
		v.Config.frameWait = time.Second
		v.Config.dropFrame = func(string) bool { return true }
		base, loads := countingSite(t, watchlistGood)
		ev := verify(t, v, contractRequest(t, c, hash, base))
		errs := 0
		for _, r := range ev.Results {
			if r.Status == contracts.StatusError {
				errs++
				if !strings.Contains(r.Error, errNoFrame.Error()) {
					t.Errorf("%s: error %q does not say the browser gave the page no frame", r.CriterionID, r.Error)
				}
			}
		}
		if errs == 0 {
			t.Error("no criterion is an error though the page never got a frame")
		}
		if n := loads.Load(); n != 4 {
			t.Errorf("the page was loaded %d times, want 4 (each of the two pages once more, and no more)", n)
		}
	})
}

// driverTraceFolders lists the folders the package's Playwright driver makes in its temporary
// folder for each trace it records (removed when the trace is saved or discarded).
func driverTraceFolders(t *testing.T) []string {
	t.Helper()
	needBrowser(t)
	names, err := filepath.Glob(filepath.Join(testDriverTmp, "playwright-tracing-*"))
	if err != nil {
		t.Fatal(err)
	}
	return names
}
