package verify

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/signoff/signoff/contracts"
)

// Pages for the kinds of signoff.assertions/4, shared by the kinds test and the hostile
// implementations.
const (
	lightCSS = `<style>body{background:#fff;color:#111} html.dark body,body.dark{background:#111;color:#eee}</style>`
	// tallMain makes the page several screens long.
	tallMain = `<main id="content" style="height:2400px">Main content</main>`
)

// Every new assertion kind, criteria that must pass and criteria that must fail, in one run.
func TestGoalKinds(t *testing.T) {
	v := testVerifier(t)
	item := func(n int) string { return fmt.Sprintf(`<div class="item">Item %d</div>`, n) }
	items := item(1) + item(2) + item(3)
	pages := map[string]string{
		"/theme": page(lightCSS, `<button id="dark" onclick="document.documentElement.classList.add('dark');document.documentElement.dataset.theme='dark'">Dark mode</button><p>Text</p>`),
		// The box that is read is below the first screen; the page scrolls to it on load.
		"/scrolled": page(`<style>body{margin:0;background:#fff}</style>`, `<div style="height:1000px">top</div><div id="block" style="height:600px;background:#000"></div><div style="height:1000px"></div>`+
			`<script>addEventListener('load', () => scrollTo(0, 1000))</script>`),
		"/links":   page(``, `<a id="pricing" href="/pricing?plan=pro">Pricing</a> <a id="dead" href="/pricing" onclick="event.preventDefault()">Pricing</a>`),
		"/pricing": page(``, `<main>Prices</main>`),
		"/search": page(``, `<input id="q"><p id="out"></p><script>
			document.getElementById('q').addEventListener('keydown', (e) => {
				if (e.key !== 'Enter') return;
				fetch('/api/search?q=' + encodeURIComponent(e.target.value)).then((r) => r.json()).then((j) => {
					document.getElementById('out').textContent = 'results for ' + j.q; });
			});</script>`),
		"/stack": page(``, `<div id="list">`+items+`</div>`),
		"/row":   page(`<style>#list{display:flex;gap:8px}</style>`, `<div id="list">`+items+`</div>`),
		// Left edges 40 px apart: stacked, but not aligned.
		"/stagger":         page(`<style>.item:nth-child(2){margin-left:40px}</style>`, `<div id="list">`+items+`</div>`),
		"/layout":          page(``, `<header id="top"><a id="cta" href="#">Sign up</a></header>`+tallMain+`<footer><a id="foot" href="#">Contact</a></footer>`),
		"/header-overflow": page(``, `<header id="top"><nav style="width:700px">Home Markets Watchlist Settings</nav></header><main>Fits</main>`),
		"/header-scroller": page(``, `<header id="top"><div style="overflow-x:auto"><nav style="width:700px">Home Markets Watchlist Settings</nav></div></header><main>Fits</main>`),
		"/page-overflow":   page(``, `<header id="top"><nav>Home</nav></header><main>`+wideTable+`</main>`),
		// The last link lies wholly past the right edge, where the page scrolls to it.
		"/header-past-edge": page(``, `<header id="top"><nav style="display:flex;gap:40px;white-space:nowrap"><a>Markets</a><a>Watchlist</a><a>Pricing</a><a>Settings</a><a>Sign out</a></nav></header><main>Fits</main>`),
		// Off-canvas menus in the header: behind overflow hidden on html and body, or fixed.
		"/header-drawer": page(`<style>html,body{overflow-x:hidden}</style>`, `<header id="top">Home<nav style="position:absolute;left:100%;top:0;width:300px">Menu Home Markets</nav>`+
			`<aside style="position:fixed;top:0;left:100%;width:300px">Filters</aside></header><main>Fits</main>`),
	}
	extra := map[string]http.HandlerFunc{
		"/api/search": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"q":%q}`, r.URL.Query().Get("q"))
		},
	}
	srv := site(t, testSHA, pages, extra)
	str := func(s string) json.RawMessage { b, _ := json.Marshal(s); return b }
	num := func(f float64) json.RawMessage { return json.RawMessage(fmt.Sprint(f)) }
	with := func(c contracts.Criterion, acts ...contracts.Action) contracts.Criterion { c.Actions = acts; return c }
	click := func(sel string) contracts.Action { return contracts.Action{Type: contracts.ActionClick, Selector: sel} }
	dark := contracts.Assertion{Kind: contracts.KindBackground, Selector: "body", Operator: contracts.OpLT, Expected: num(0.2)}
	themeAttr := contracts.Assertion{Kind: contracts.KindAttribute, Selector: "html", Name: "data-theme", Operator: contracts.OpEQ, Expected: str("dark")}
	classAttr := contracts.Assertion{Kind: contracts.KindAttribute, Selector: "html", Name: "class", Operator: contracts.OpContains, Expected: str("dark")}
	toPricing := contracts.Assertion{Kind: contracts.KindURL, Operator: contracts.OpEQ, Expected: str("/pricing?plan=pro")}
	search := contracts.Assertion{Kind: contracts.KindRequest, Method: "GET", Path: "/api/search"}
	stack := contracts.Assertion{Kind: contracts.KindStacked, Selector: ".item"}
	pos := func(sel, place, before, after string) contracts.Assertion {
		return contracts.Assertion{Kind: contracts.KindPosition, Selector: sel, Place: place, Before: before, After: after}
	}
	header := contracts.Assertion{Kind: contracts.KindNoHorizontalOverflow, Within: "#top"}
	fillQ := contracts.Action{Type: contracts.ActionFill, Selector: "#q", Value: "nvda"}
	enter := contracts.Action{Type: contracts.ActionPress, Selector: "#q", Key: "Enter"}
	enterFocused := contracts.Action{Type: contracts.ActionPress, Key: "Enter"}

	cases := []tc{
		{with(crit("background-ok", "/theme", dark), click("#dark")), contracts.StatusPass},
		{crit("background-fail", "/theme", dark), contracts.StatusFail},
		{crit("background-scrolled-ok", "/scrolled", contracts.Assertion{Kind: contracts.KindBackground, Selector: "#block", Operator: contracts.OpLT, Expected: num(0.05)}), contracts.StatusPass},
		{crit("background-missing-fail", "/theme", contracts.Assertion{Kind: contracts.KindBackground, Selector: "#nope", Operator: contracts.OpGT, Expected: num(0.5)}), contracts.StatusFail},
		{with(crit("attribute-ok", "/theme", themeAttr), click("#dark")), contracts.StatusPass},
		{with(crit("attribute-contains-ok", "/theme", classAttr), click("#dark")), contracts.StatusPass},
		{crit("attribute-fail", "/theme", themeAttr), contracts.StatusFail},
		{with(crit("url-ok", "/links", toPricing), click("#pricing")), contracts.StatusPass},
		{with(crit("url-fail", "/links", contracts.Assertion{Kind: contracts.KindURL, Operator: contracts.OpContains, Expected: str("/pricing")}), click("#dead")), contracts.StatusFail},
		{with(crit("press-request-ok", "/search", search), fillQ, enter), contracts.StatusPass},
		{with(crit("press-prefix-ok", "/search", contracts.Assertion{Kind: contracts.KindRequest, Method: "get", Path: "/api/*"}), fillQ, enter), contracts.StatusPass},
		{with(crit("press-focused-text-ok", "/search", contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{"results for nvda"}}), fillQ, enterFocused), contracts.StatusPass},
		{with(crit("request-fail", "/search", search), fillQ), contracts.StatusFail},
		{with(crit("request-method-fail", "/search", contracts.Assertion{Kind: contracts.KindRequest, Method: "POST", Path: "/api/search"}), fillQ, enter), contracts.StatusFail},
		{crit("stacked-ok", "/stack", stack), contracts.StatusPass},
		{crit("stacked-row-fail", "/row", stack), contracts.StatusFail},
		{crit("stacked-stagger-fail", "/stagger", stack), contracts.StatusFail},
		{crit("position-first-ok", "/layout", pos("#cta", contracts.PlaceFirstViewport, "#content", "")), contracts.StatusPass},
		{crit("position-last-ok", "/layout", pos("#foot", contracts.PlaceLastViewport, "", "#content")), contracts.StatusPass},
		{crit("position-first-fail", "/layout", pos("#foot", contracts.PlaceFirstViewport, "", "")), contracts.StatusFail},
		{crit("position-before-fail", "/layout", pos("#foot", "", "#content", "")), contracts.StatusFail},
		{crit("position-last-fail", "/layout", pos("#cta", contracts.PlaceLastViewport, "", "")), contracts.StatusFail},
		{crit("within-fail", "/header-overflow", header), contracts.StatusFail},
		{crit("within-scroller-ok", "/header-scroller", header), contracts.StatusPass},
		{crit("within-past-edge-fail", "/header-past-edge", header), contracts.StatusFail},
		{crit("within-drawer-ok", "/header-drawer", header), contracts.StatusPass},
		{crit("within-elsewhere-ok", "/page-overflow", header), contracts.StatusPass},
		{crit("unscoped-elsewhere-fail", "/page-overflow", noOverflow), contracts.StatusFail},
		{crit("within-missing-fail", "/page-overflow", contracts.Assertion{Kind: contracts.KindNoHorizontalOverflow, Within: "#nope"}), contracts.StatusFail},
	}
	ev := verifyCases(t, v, srv.URL, cases)
	obs := func(id, key string) any { return result(t, ev, id).Observed["390x844/"+key] }
	wantObserved(t, ev, []observedWant{
		{"attribute-fail", "value", ""},
		{"attribute-ok", "value", "dark"},
		{"url-fail", "value", "/links"},
		{"url-ok", "value", "/pricing?plan=pro"},
		{"press-request-ok", "requests", 1.0},
		{"request-fail", "requests", 0.0},
		{"stacked-ok", "count", 3.0},
		{"stacked-ok", "stack_overlaps", 0.0},
		{"stacked-row-fail", "stack_overlaps", 2.0},
		{"stacked-stagger-fail", "stack_overlaps", 0.0},
		{"stacked-stagger-fail", "left_spread", 40.0},
		{"position-first-ok", "ref.count", 1.0},
		{"within-fail", "count", 1.0},
		{"within-elsewhere-ok", "overflowing_elements", 0.0},
		{"within-missing-fail", "count", 0.0},
	})
	if l, _ := obs("background-fail", "value").(float64); l < 0.9 {
		t.Errorf("background-fail: luminance %v of a white page, want > 0.9", l)
	}
	if l, _ := obs("background-ok", "value").(float64); l > 0.05 {
		t.Errorf("background-ok: luminance %v of a #111 page, want < 0.05", l)
	}
	if n, _ := obs("within-fail", "overflowing_elements").(float64); n < 1 {
		t.Errorf("within-fail: %v overflowing elements, want the nav", n)
	}
}

// observedWant is a value a criterion's evidence must hold at 390x844.
type observedWant struct {
	id, key string
	want    any
}

func wantObserved(t *testing.T, ev *contracts.Evidence, wants []observedWant) {
	t.Helper()
	for _, w := range wants {
		if got := result(t, ev, w.id).Observed["390x844/"+w.key]; got != w.want {
			t.Errorf("%s: observed %s = %v, want %v", w.id, w.key, got, w.want)
		}
	}
}
