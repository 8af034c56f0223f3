package verify

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/signoff/signoff/contracts"
)

// goalCase is a goal of issue 14 as a contract's criteria, and implementations of it served at
// the criteria's route: the plausible but wrong ones must be not_satisfied through the policy,
// the correct ones satisfied.
type goalCase struct {
	goal     string
	route    string
	criteria func(route string) []contracts.Criterion
	wrong    []goalImpl
	correct  []goalImpl
}

type goalImpl struct {
	name       string
	head, body string
}

// quotesAPI serves /api/quotes for the pages that fetch it.
var quotesAPI = map[string]http.HandlerFunc{
	"/api/quotes": func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"NVDA": 912.4}`)
	},
	"/api/search": func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"q":%q}`, r.URL.Query().Get("q"))
	},
}

func goalCases() []goalCase {
	str := func(s string) json.RawMessage { b, _ := json.Marshal(s); return b }
	one := func(id string, a contracts.Assertion, acts ...contracts.Action) func(string) []contracts.Criterion {
		return func(route string) []contracts.Criterion {
			c := crit(id, route, a)
			c.Actions = acts
			return []contracts.Criterion{c}
		}
	}
	click := func(sel string) contracts.Action { return contracts.Action{Type: contracts.ActionClick, Selector: sel} }
	toggle := `<button data-testid="dark-mode-toggle">Dark mode</button>`
	cards := `<div class="cards"><div class="card">Basic 9.00</div><div class="card">Pro 39.00</div><div class="card">Team 99.00</div></div>`
	header := func(style, inner string) string {
		return `<header style="` + style + `"><a href="/">Home</a> ` + inner + `</header>`
	}
	return []goalCase{
		{
			goal: "Add a dark mode toggle button", route: "/",
			criteria: one("dark-after-toggle", contracts.Assertion{Kind: contracts.KindBackground, Selector: "body",
				Operator: contracts.OpLT, Expected: json.RawMessage(`0.3`)}, click(`[data-testid="dark-mode-toggle"]`)),
			wrong: []goalImpl{
				{name: "toggle-without-handler", head: lightCSS, body: toggle + `<p>Prices</p>`},
				// The background-color goes dark; a white image painted over it keeps the page light.
				{name: "dark-color-under-white-image", head: `<style>body{background-color:#fff;background-image:linear-gradient(#fff,#fff);color:#111}</style>`,
					body: toggle + `<p>Prices</p><script>document.querySelector('button').onclick = () => { document.body.style.backgroundColor = '#000'; document.body.classList.add('dark'); };</script>`},
			},
			correct: []goalImpl{
				{name: "class-on-html", head: lightCSS, body: toggle + `<p>Prices</p><script>document.querySelector('button').onclick = () => document.documentElement.classList.toggle('dark');</script>`},
			},
		},
		{
			goal: "The refresh button reloads the quotes", route: "/",
			criteria: one("refresh-requests-quotes", contracts.Assertion{Kind: contracts.KindRequest, Method: "GET", Path: "/api/quotes"}, click("#refresh")),
			wrong: []goalImpl{
				{name: "quotes-fetched-on-load-only", body: `<button id="refresh">Refresh</button><p id="q"></p><script>fetch('/api/quotes').then((r) => r.json()).then((j) => { document.getElementById('q').textContent = 'NVDA ' + j.NVDA; });</script>`},
				// A button that answers only a click a person does not make: at its exact centre, or
				// with no time between press and release.
				{name: "click-only-at-centre", body: `<button id="refresh" style="width:200px;height:60px">Refresh</button><script>const b = document.getElementById('refresh');
					b.onclick = (e) => { const r = b.getBoundingClientRect(); if (Math.abs(e.clientX - (r.left + r.width / 2)) < 1 && Math.abs(e.clientY - (r.top + r.height / 2)) < 1) fetch('/api/quotes'); };</script>`},
				{name: "click-only-instant", body: `<button id="refresh">Refresh</button><script>let down = 0; const b = document.getElementById('refresh');
					b.addEventListener('pointerdown', (e) => { down = e.timeStamp; }); b.onclick = (e) => { if (e.timeStamp - down < 15) fetch('/api/quotes'); };</script>`},
				// On a phone: only a mouse's click, or only a click no touch came before.
				{name: "click-only-mouse-on-phone", body: `<button id="refresh">Refresh</button><script>let kind = ''; const b = document.getElementById('refresh');
					b.addEventListener('pointerdown', (e) => { kind = e.pointerType; }); b.onclick = () => { if (kind === 'mouse' || innerWidth >= 640) fetch('/api/quotes'); };</script>`},
				{name: "click-only-without-touch", body: `<button id="refresh">Refresh</button><script>let touched = false; const b = document.getElementById('refresh');
					b.addEventListener('touchstart', () => { touched = true; }, {passive: true}); b.onclick = () => { if (!touched || innerWidth >= 640) fetch('/api/quotes'); };</script>`},
			},
			correct: []goalImpl{
				{name: "fetch-on-click", body: `<button id="refresh">Refresh</button><p id="q"></p><script>const load = () => fetch('/api/quotes').then((r) => r.json()).then((j) => { document.getElementById('q').textContent = 'NVDA ' + j.NVDA; });
					load(); document.getElementById('refresh').onclick = load;</script>`},
			},
		},
		{
			goal: "The header links to the pricing page", route: "/",
			criteria: func(route string) []contracts.Criterion {
				href := crit("pricing-href", route, contracts.Assertion{Kind: contracts.KindAttribute, Selector: "#pricing-link", Name: "href", Operator: contracts.OpEQ, Expected: str("/pricing")})
				nav := crit("pricing-navigates", route, contracts.Assertion{Kind: contracts.KindURL, Operator: contracts.OpEQ, Expected: str("/pricing")})
				nav.Actions = []contracts.Action{click("#pricing-link")}
				return []contracts.Criterion{href, nav}
			},
			wrong: []goalImpl{
				{name: "href-right-click-prevented", body: `<header><a id="pricing-link" href="/pricing">Pricing</a></header><script>document.getElementById('pricing-link').addEventListener('click', (e) => e.preventDefault());</script>`},
			},
			correct: []goalImpl{
				{name: "plain-link", body: `<header><a id="pricing-link" href="/pricing">Pricing</a></header>`},
				{name: "client-side-router", body: `<header><a id="pricing-link" href="/pricing">Pricing</a></header><main id="m">Home</main><script>
					document.getElementById('pricing-link').addEventListener('click', (e) => { e.preventDefault(); history.pushState({}, '', '/pricing'); document.getElementById('m').textContent = 'Prices'; });</script>`},
			},
		},
		{
			goal: "The pricing cards stack vertically on mobile", route: "/",
			criteria: one("cards-stack", contracts.Assertion{Kind: contracts.KindStacked, Selector: ".card"}),
			wrong: []goalImpl{
				{name: "cards-on-top-of-each-other", head: `<style>.cards{position:relative;height:60px}.card{position:absolute;top:0;left:0;width:100%;background:#fff}</style>`, body: cards},
				{name: "cards-in-a-row", head: `<style>.cards{display:flex;gap:4px}.card{flex:1}</style>`, body: cards},
			},
			correct: []goalImpl{
				{name: "flex-column", head: `<style>.cards{display:flex;flex-direction:column;gap:8px}.card{border:1px solid #ccc;padding:8px}</style>`, body: cards},
			},
		},
		{
			goal: "Put the sign-up button at the top of the page", route: "/",
			criteria: one("signup-at-top", contracts.Assertion{Kind: contracts.KindPosition, Selector: "#signup", Place: contracts.PlaceFirstViewport, Before: "#content"}),
			wrong: []goalImpl{
				// In the header in the markup, shown at the end by CSS order.
				{name: "header-moved-by-order", head: `<style>body{display:flex;flex-direction:column}header{order:2}</style>`,
					body: `<header><button id="signup">Sign up</button></header>` + tallMain},
				{name: "button-positioned-down", head: `<style>#signup{position:absolute;top:3000px}</style>`,
					body: `<header><button id="signup">Sign up</button></header>` + tallMain},
			},
			correct: []goalImpl{
				{name: "in-the-header", body: `<header><button id="signup">Sign up</button></header>` + tallMain},
			},
		},
		{
			goal: "The header must not overflow at 390px", route: "/",
			criteria: one("header-fits", contracts.Assertion{Kind: contracts.KindNoHorizontalOverflow, Within: "header"}),
			wrong: []goalImpl{
				{name: "header-nav-too-wide", body: header("", `<nav style="display:flex;gap:40px;white-space:nowrap"><a>Markets</a><a>Watchlist</a><a>Pricing</a><a>Settings</a><a>Sign out</a></nav>`) + `<main>Fits</main>`},
			},
			correct: []goalImpl{
				// The header is fixed; the pricing table elsewhere still overflows, which
				// this goal does not ask about.
				{name: "header-wraps-pricing-still-wide", body: header("display:flex;flex-wrap:wrap;gap:8px", `<a>Markets</a><a>Watchlist</a><a>Pricing</a>`) + `<main>` + wideTable + `</main>`},
			},
		},
		{
			goal: "Pressing Enter in the search box searches", route: "/",
			criteria: one("enter-searches", contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{"Results for nvda"}},
				contracts.Action{Type: contracts.ActionFill, Selector: "#q", Value: "nvda"}, contracts.Action{Type: contracts.ActionPress, Selector: "#q", Key: "Enter"}),
			wrong: []goalImpl{
				{name: "search-on-button-only", body: `<input id="q"><button id="go">Search</button><p id="out"></p><script>
					document.getElementById('go').onclick = () => { document.getElementById('out').textContent = 'Results for ' + document.getElementById('q').value; };</script>`},
			},
			correct: []goalImpl{
				{name: "form-submit", body: `<form id="f"><input id="q"><button>Search</button></form><p id="out"></p><script>
					document.getElementById('f').onsubmit = (e) => { e.preventDefault(); fetch('/api/search?q=' + encodeURIComponent(document.getElementById('q').value)).then((r) => r.json()).then((j) => { document.getElementById('out').textContent = 'Results for ' + j.q; }); };</script>`},
			},
		},
	}
}

// TestAdversarialGoals: for the goals of issue 14, every plausible but wrong implementation
// is not_satisfied through the policy and every correct one satisfied. A button that does
// nothing does not get paid.
func TestAdversarialGoals(t *testing.T) {
	v := testVerifier(t)
	w1, _ := loadW1(t)
	contractFor := func(g goalCase, criteria []contracts.Criterion) *contracts.Contract {
		c := *w1
		c.ContractID, c.Goal, c.Criteria, c.TestHooks = "goal-"+strings.ReplaceAll(strings.ToLower(g.goal), " ", "-"), g.goal, criteria, nil
		return &c
	}
	judge := func(t *testing.T, c *contracts.Contract, im goalImpl, want string) {
		t.Helper()
		pages := map[string]string{c.Criteria[0].Route: page(im.head, im.body), "/pricing": page(``, `<main>Prices</main>`)}
		base := site(t, testSHA, pages, quotesAPI).URL
		d, ev := verdictUnder(t, v, c, base)
		if d.Verdict != want {
			var lines []string
			for _, r := range ev.Results {
				lines = append(lines, fmt.Sprintf("%s %s %v %s", r.CriterionID, r.Status, r.Observed, r.Error))
			}
			t.Errorf("%s under %q: verdict %s, want %s\nreasons %+v\n%s", im.name, c.Goal, d.Verdict, want, d.Reasons, strings.Join(lines, "\n"))
			return
		}
		t.Logf("%s under %q: %s (%s)", im.name, c.Goal, d.Verdict, d.Summary())
	}
	for _, g := range goalCases() {
		for _, im := range g.wrong {
			t.Run(im.name, func(t *testing.T) { judge(t, contractFor(g, g.criteria(g.route)), im, contracts.NotSatisfied) })
		}
		for _, im := range g.correct {
			t.Run(im.name, func(t *testing.T) { judge(t, contractFor(g, g.criteria(g.route)), im, contracts.Satisfied) })
		}
	}
	// Overflow elsewhere with a tidy header: the scoped goal is satisfied (above), the
	// page-wide check is not.
	t.Run("page-wide-overflow-elsewhere", func(t *testing.T) {
		g := goalCase{goal: "No horizontal overflow at 390px"}
		c := contractFor(g, []contracts.Criterion{crit("page-fits", "/", noOverflow)})
		judge(t, c, goalImpl{name: "header-wraps-pricing-still-wide", body: `<header style="display:flex;flex-wrap:wrap"><a>Markets</a></header><main>` + wideTable + `</main>`}, contracts.NotSatisfied)
	})
}
