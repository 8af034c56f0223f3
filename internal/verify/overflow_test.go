package verify

import (
	"strings"
	"testing"

	"github.com/signoff/signoff/contracts"
)

const wideTable = `<table style="width:1200px;border-collapse:collapse"><tr><td>NVDA</td><td>Nvidia Corporation</td>` +
	`<td>1,234.56</td><td>+2.1%</td><td>Semiconductors</td><td>Market cap 3.1T</td></tr></table>`

var noOverflow = contracts.Assertion{Kind: contracts.KindNoHorizontalOverflow}

// Pages a person would call fine at 390 px: nothing visible is cut off at the right edge.
func TestOverflowMustPass(t *testing.T) {
	v := testVerifier(t)
	pages := map[string]string{
		// Visually hidden text (the usual sr-only utility, with clip and with clip-path), some
		// of it placed against the right edge.
		"/sr-only": page(`<style>.sr{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;`+
			`clip:rect(0,0,0,0);white-space:nowrap;border:0}.sr2{position:absolute;width:1px;height:1px;overflow:hidden;`+
			`clip-path:inset(50%);white-space:nowrap}</style>`,
			`<main><h1>Watchlist</h1><p>Four symbols.</p>`+
				`<span class="sr">A long visually hidden sentence that would overflow a narrow viewport if it were shown</span>`+
				`<span class="sr" style="left:385px;top:40px">Another hidden sentence parked against the right edge of the page</span>`+
				`<span class="sr2" style="left:380px">Clip-path hidden sentence that is very long and never shown</span></main>`),
		// Off-canvas drawers entirely off-screen to the right, html and body overflow hidden.
		"/drawer": page(`<style>html,body{overflow-x:hidden}.d{position:fixed;top:0;height:100%;width:300px;background:#eee}</style>`,
			`<main><h1>Watchlist</h1><p>Menu is closed.</p></main>`+
				`<nav class="d" style="left:100%">Menu: Home, Markets, Watchlist, Settings, Sign out</nav>`+
				`<aside class="d" style="right:0;transform:translateX(100%)">Filters and a long description of them</aside>`+
				`<div style="position:absolute;left:100%;top:0;width:500px">Absolutely placed panel</div>`),
		// A skip link parked off to the left until focused.
		"/skip-link": page(``,
			`<a href="#main" style="position:absolute;left:-9999px;top:0">Skip to the main content of this page</a>`+
				`<main id="main"><h1>Watchlist</h1><p>Content.</p></main>`),
		// A wide table inside its own horizontal scroll container that fits the viewport.
		"/scroll-container": page(``,
			`<main><h1>Watchlist</h1><div style="overflow-x:auto;max-width:100%">`+wideTable+`</div></main>`),
		// Text truncated by an ellipsis (narrow or full width) and a thumbnail cropped well
		// inside the viewport are design choices, not content cut off at the edge.
		"/ellipsis": page(``,
			`<main><h1>Watchlist</h1><div style="width:200px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap">`+
				`Nvidia Corporation, a very long company name that does not fit in two hundred pixels</div>`+
				`<h2 style="overflow:hidden;text-overflow:ellipsis;white-space:nowrap">Taiwan Semiconductor Manufacturing `+
				`Company Limited <span>American Depositary Shares</span></h2>`+
				`<div style="width:120px;height:80px;overflow:hidden"><div style="width:600px;height:80px;`+
				`background:linear-gradient(90deg,#036,#fc0)"></div></div></main>`),
	}
	srv := site(t, testSHA, pages, nil)
	var criteria []contracts.Criterion
	for _, id := range []string{"sr-only", "drawer", "skip-link", "ellipsis"} {
		criteria = append(criteria, crit(id, "/"+id, noOverflow))
	}
	// A table in a sideways scroller is wide content on a phone unless the contract allows
	// scrollers; where it does, the scroller is not overflow.
	criteria = append(criteria, crit("scroll-container", "/scroll-container", contracts.Assertion{Kind: contracts.KindNoHorizontalOverflow, AllowScrollers: true}))
	ev := verify(t, v, request(t, srv.URL, criteria...))
	for _, c := range criteria {
		r := wantStatus(t, ev, c.ID, contracts.StatusPass)
		if got := r.Observed["390x844/inner_width"]; got != 390.0 {
			t.Errorf("%s: inner_width %v, want 390", c.ID, got)
		}
	}
}

// Pages that hide or delay their overflow, or lie about their geometry, must still fail.
func TestOverflowMustFail(t *testing.T) {
	v := testVerifier(t)
	lateTable := `<script>addEventListener('load', () => setTimeout(() => {` +
		`document.querySelector('main').insertAdjacentHTML('beforeend', '` + wideTable + `')}, 300))</script>`
	pages := map[string]string{
		// Body overflow-x hidden: no scrollbar, but the table is cut off at the right edge.
		"/hidden-body": page(`<style>body{overflow-x:hidden}</style>`, `<main><h1>Watchlist</h1>`+wideTable+`</main>`),
		// A wrapper with overflow hidden does the same.
		"/hidden-wrapper": page(``, `<main style="overflow:hidden"><h1>Watchlist</h1>`+wideTable+`</main>`),
		// Long text cut at the edge by a full-width wrapper, with no ellipsis to say so.
		"/nowrap-cut": page(``, `<main><h1>Watchlist</h1><p style="overflow:hidden;white-space:nowrap">`+
			`Nvidia Corporation reported record revenue for the quarter, driven by data center demand</p></main>`),
		// overflow-x: clip makes no scroll container at all.
		"/clip-html": page(`<style>html{overflow-x:clip}</style>`, `<main><h1>Watchlist</h1>`+wideTable+`</main>`),
		// The table arrives 300 ms after load: a read at first paint would pass.
		"/late":        page(``, `<main><h1>Watchlist</h1></main>`+lateTable),
		"/late-hidden": page(`<style>html,body{overflow-x:hidden}</style>`, `<main><h1>Watchlist</h1></main>`+lateTable),
		// The page redefines the getters a naive check reads in the page's own world.
		"/liar": page(`<script>
			Object.defineProperty(Element.prototype, 'scrollWidth', {get() { return 390 }});
			Object.defineProperty(window, 'innerWidth', {get() { return 5000 }});
			Element.prototype.getBoundingClientRect = function () { return {left: 0, top: 0, right: 10, bottom: 10, width: 10, height: 10} };
			window.getComputedStyle = () => ({overflowX: 'visible', visibility: 'hidden'});
		</script>`, `<main><h1>Watchlist</h1>`+wideTable+`</main>`),
	}
	srv := site(t, testSHA, pages, nil)
	var criteria []contracts.Criterion
	for _, id := range []string{"hidden-body", "hidden-wrapper", "nowrap-cut", "clip-html", "late", "late-hidden", "liar"} {
		criteria = append(criteria, crit(id, "/"+id, noOverflow))
	}
	// The liar's own world says scrollWidth is 390: measure reads the main world on purpose.
	criteria = append(criteria, crit("liar-main-world", "/liar", contracts.Assertion{
		Kind: contracts.KindMeasure, Expression: "document.documentElement.scrollWidth", Operator: contracts.OpEQ, Expected: []byte("390"),
	}))
	ev := verify(t, v, request(t, srv.URL, criteria...))
	for _, id := range []string{"hidden-body", "hidden-wrapper", "nowrap-cut", "clip-html", "late", "late-hidden", "liar"} {
		r := wantStatus(t, ev, id, contracts.StatusFail)
		sw, _ := r.Observed["390x844/scroll_width"].(float64)
		clipped, _ := r.Observed["390x844/clipped_elements"].(float64)
		if sw <= 390 && clipped < 1 {
			t.Errorf("%s: neither scrollWidth (%v) nor clipped elements (%v) show the overflow", id, sw, clipped)
		}
		if clipped >= 1 {
			offs, _ := r.Observed["390x844/clipped_offenders"].([]any)
			want := "table"
			if id == "nowrap-cut" {
				want = "p"
			}
			if len(offs) == 0 || !strings.Contains(offs[0].(map[string]any)["selector"].(string), want) {
				t.Errorf("%s: offenders %v do not name the table", id, offs)
			}
		}
	}
	for _, id := range []string{"hidden-body", "hidden-wrapper", "late-hidden"} {
		if r := result(t, ev, id); r.Observed["390x844/clipped_elements"] != 1.0 {
			t.Errorf("%s: clipped_elements %v, want 1 (the table, not each of its cells)", id, r.Observed["390x844/clipped_elements"])
		}
	}
	if r := result(t, ev, "liar"); r.Observed["390x844/scroll_width"].(float64) < 1200 || r.Observed["390x844/inner_width"] != 390.0 {
		t.Errorf("liar: isolated world read scrollWidth %v innerWidth %v, want the real >= 1200 and 390",
			r.Observed["390x844/scroll_width"], r.Observed["390x844/inner_width"])
	}
	wantStatus(t, ev, "liar-main-world", contracts.StatusPass)
}

// A page that renders nothing is not a geometry pass: it times out waiting for content.
func TestOverflowEmptyPageIsNoPass(t *testing.T) {
	v := testVerifier(t)
	srv := site(t, testSHA, map[string]string{"/empty": page(``, `<main></main>`)}, nil)
	c := crit("empty", "/empty", noOverflow)
	// The budget is both page time and real time. On the virtual clock an idle page reaches
	// the end of its page time in a fraction of the real budget; a budget as short as the
	// settle window let a loaded machine run out of real time first, and the verifier then
	// said, truthfully, that the page had not settled yet.
	c.MaxRuntimeMS = 15000
	ev := verify(t, v, request(t, srv.URL, c))
	r := wantStatus(t, ev, "empty", contracts.StatusTimeout)
	if !strings.Contains(r.Error, "no visible content") {
		t.Errorf("error %q does not say the page stayed empty", r.Error)
	}
}
