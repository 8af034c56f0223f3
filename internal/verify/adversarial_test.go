package verify

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signoff/signoff/authoring/criteria"
	"github.com/signoff/signoff/authoring/survey"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/fixtures/finance"
	"github.com/signoff/signoff/fixtures/fixturerepo"
	"github.com/signoff/signoff/policy"
)

// seedGoal is the Watchlist task in the words the user gave it.
const seedGoal = "Make the Watchlist page work well on mobile by showing a compact card layout below 640px while preserving the desktop table on larger screens."

// impl is one implementation of the Watchlist task, as the page the app would serve.
type impl struct {
	name, class string
	head, body  string
	// api, when set, is served at /api/quotes after apiDelay (a slow backend).
	api      string
	apiDelay time.Duration
}

// The watchlist as the app keeps it: the seeded symbols, or the defaults.
const symbolsJS = `const names = {NVDA: 'Nvidia Corporation', AAPL: 'Apple Inc.', MSFT: 'Microsoft Corporation', SPY: 'SPDR S&P 500 ETF Trust'};
	const symbols = JSON.parse(localStorage.getItem('watchlist') || '["NVDA","AAPL","MSFT","SPY"]');`

// wide is the desktop table the base renders: too wide for a phone.
const wideCSS = `table{min-width:900px;border-collapse:collapse} td,th{padding:8px 12px;text-align:left;border-bottom:1px solid #ddd}`

const tableJS = `const rows = symbols.map((s) => '<tr data-symbol="' + s + '"><td>' + s + '</td><td>' + names[s] + '</td><td>912.40</td><td>+1.8%</td><td>41.2M</td><td>Semiconductors and more</td></tr>').join('');
	const tableHTML = '<table><thead><tr><th>Symbol</th><th>Name</th><th>Price</th><th>Change</th><th>Volume</th><th>Sector</th></tr></thead><tbody>' + rows + '</tbody></table>';`

const cardsJS = `const cardsHTML = '<div class="cards">' + symbols.map((s) => '<div data-testid="watchlist-card" data-symbol="' + s + '"><strong>' + s + '</strong> ' + names[s] + '<br>912.40 +1.8%</div>').join('') + '</div>';`

const cardCSS = `.cards{display:none} [data-testid="watchlist-card"]{border:1px solid #ddd;border-radius:8px;padding:12px;margin:8px 0}
	@media (max-width:639px){table{display:none}.cards{display:block}}`

// render writes the table and the cards into #app, the way the W1 fix does.
func render(extra string) string {
	return `<h1>Watchlist</h1><div id="app"></div><script>` + symbolsJS + tableJS + cardsJS +
		`document.getElementById('app').innerHTML = tableHTML + cardsHTML;` + extra + `</script>`
}

// adversaries are built to pass a weak check: each keeps what the task asked to change, and
// hides that from a verifier that reads too early, too shallowly or through the page's own
// APIs. Every one must be not_satisfied under the W1 contract and under the generated one.
var adversaries = []impl{
	// Late content: what a phone shows a moment after load.
	{name: "late-table", class: "late", head: `<style>` + wideCSS + cardCSS + `</style>`,
		body: render(`setTimeout(() => { document.querySelector('table').style.display = 'table'; }, 1500);`)},
	{name: "late-table-after-quiet", class: "late", head: `<style>` + wideCSS + cardCSS + `</style>`,
		body: render(`setTimeout(() => { document.querySelector('table').style.display = 'table'; }, 6000);`)},
	{name: "late-swap-back", class: "late", head: `<style>` + wideCSS + cardCSS + `</style>`,
		body: render(`setTimeout(() => { document.querySelector('.cards').remove(); document.querySelector('table').style.display = 'table'; }, 12000);`)},
	{name: "late-from-api", class: "late", head: `<style>` + wideCSS + cardCSS + `</style>`,
		body: render(`fetch('/api/quotes').then((r) => r.json()).then((j) => { if (j.table) document.querySelector('table').style.display = 'table'; });`),
		api:  `{"table": true}`, apiDelay: 1200 * time.Millisecond},
	{name: "late-css-animation", class: "late", head: `<style>` + wideCSS + cardCSS +
		`@keyframes back{to{visibility:visible}} @media (max-width:639px){table{display:table;visibility:hidden;animation:back 0s 4s forwards}}</style>`,
		body: render(``)},

	// Shadow DOM: the table inside a shadow root, with overflow hidden on html and body.
	{name: "shadow-open", class: "shadow", head: `<style>html,body{overflow-x:hidden}` + cardCSS + `</style>`,
		body: render(`const host = document.createElement('div'); document.getElementById('app').prepend(host);
			host.attachShadow({mode: 'open'}).innerHTML = '<style>` + wideCSS + `</style>' + tableHTML;`)},
	{name: "shadow-closed", class: "shadow", head: `<style>html,body{overflow-x:hidden}` + cardCSS + `</style>`,
		body: render(`const host = document.createElement('div'); document.getElementById('app').prepend(host);
			host.attachShadow({mode: 'closed'}).innerHTML = '<style>` + wideCSS + `</style>' + tableHTML;`)},
	{name: "shadow-late-nested", class: "shadow", head: `<style>html,body{overflow:hidden}` + cardCSS + `</style>`,
		body: render(`setTimeout(() => { const outer = document.createElement('section'); document.body.append(outer);
			const inner = document.createElement('div'); outer.attachShadow({mode: 'closed'}).append(inner);
			inner.attachShadow({mode: 'closed'}).innerHTML = '<style>` + wideCSS + `</style>' + tableHTML; }, 2000);`)},
	// Long after the page settled, a closed root on an element that was always there: no
	// node of the document is inserted, removed or changed, so no mutation is counted.
	{name: "shadow-silent-late", class: "shadow", head: `<style>html,body{overflow:hidden}` + cardCSS + `</style>`,
		body: `<div id="host"></div>` + render(`setTimeout(() => {
			document.getElementById('host').attachShadow({mode: 'closed'}).innerHTML = '<style>`+wideCSS+`</style>' + tableHTML; }, 12000);`)},

	// Unpainted content: cards that are there but never seen, the table kept.
	{name: "cards-content-visibility", class: "unpainted", head: `<style>` + wideCSS +
		`[data-testid="watchlist-card"]{content-visibility:hidden;contain-intrinsic-size:auto 60px} @media (max-width:639px){table{display:none}}</style>`,
		body: render(``)},
	{name: "cards-transparent-text", class: "unpainted", head: `<style>` + wideCSS + cardCSS +
		`[data-testid="watchlist-card"]{color:transparent}</style>`, body: render(``)},
	{name: "cards-zero-font", class: "unpainted", head: `<style>` + wideCSS + cardCSS +
		`[data-testid="watchlist-card"]{font-size:0;padding:12px}</style>`, body: render(``)},

	// Unreadable: something in the text's box, but nothing a person can read.
	{name: "cards-tiny-font", class: "unreadable", head: `<style>` + wideCSS + cardCSS +
		`[data-testid="watchlist-card"]{font-size:3px}</style>`, body: render(``)},
	{name: "cards-ghost-underlined", class: "unreadable", head: `<style>` + wideCSS + cardCSS +
		`[data-testid="watchlist-card"]{color:rgba(0,0,0,.02);text-decoration:underline 4px #000}</style>`, body: render(``)},
	{name: "cards-masked-to-a-stripe", class: "unreadable", head: `<style>` + wideCSS + cardCSS + `[data-testid="watchlist-card"]{` +
		`-webkit-mask-image:repeating-linear-gradient(transparent 0 8px,#000 8px 10px);mask-image:repeating-linear-gradient(transparent 0 8px,#000 8px 10px)}</style>`, body: render(``)},

	// Hidden overflow: the wide table kept on phones, its overflow hidden or scrolled.
	{name: "overflow-hidden-html", class: "overflow", head: `<style>html{overflow-x:hidden}` + wideCSS +
		`.cards{display:block}</style>`, body: render(``)},
	{name: "overflow-contain-paint", class: "overflow", head: `<style>` + wideCSS +
		`#app{contain:paint;max-width:100vw} .cards{display:block}</style>`, body: render(``)},
	{name: "table-in-scroll-container", class: "overflow", head: `<style>` + wideCSS + `#app{overflow-x:auto}</style>`,
		body: `<h1>Watchlist</h1><div id="app"></div><script>` + symbolsJS + tableJS + `document.getElementById('app').innerHTML = tableHTML;</script>`},

	// Structure imitated with other elements.
	{name: "rows-labelled-cards", class: "imitation", head: `<style>` + wideCSS + `</style>`,
		body: `<h1>Watchlist</h1><div id="app"></div><script>` + symbolsJS + tableJS +
			`document.getElementById('app').innerHTML = tableHTML.replaceAll('<tr data-symbol', '<tr data-testid="watchlist-card" data-symbol');</script>`},
	{name: "div-table-cards", class: "imitation", head: `<style>.t{display:table;min-width:900px} .r{display:table-row} .r>span{display:table-cell;padding:8px 12px}
		#app{overflow-x:auto}</style>`,
		body: `<h1>Watchlist</h1><div id="app"></div><script>` + symbolsJS +
			`document.getElementById('app').innerHTML = '<div class="t">' + symbols.map((s) => '<div class="r" data-testid="watchlist-card"><span>' + s + '</span><span>' + names[s] + '</span><span>912.40</span><span>+1.8%</span><span>41.2M</span><span>Semiconductors and more</span></div>').join('') + '</div>';</script>`},
	{name: "aria-grid", class: "imitation", head: `<style>[role=grid]{display:grid;grid-template-columns:repeat(6,160px)} #app{overflow-x:auto}
		[role=row]{display:contents} [role=gridcell]{padding:8px}</style>`,
		body: `<h1>Watchlist</h1><div id="app"></div><script>` + symbolsJS +
			`document.getElementById('app').innerHTML = '<div role="grid">' + symbols.map((s) => '<div role="row"><div role="gridcell" data-testid="watchlist-card">' + s + '</div><div role="gridcell">' + names[s] + '</div><div role="gridcell">912.40</div><div role="gridcell">+1.8%</div><div role="gridcell">41.2M</div><div role="gridcell">Semiconductors</div></div>').join('') + '</div>';</script>`},

	// A page that tampers with its own measurement APIs to certify itself.
	{name: "tampered-apis", class: "tamper", head: `<style>` + wideCSS + `.cards{display:block}</style><script>
		const zero = () => new DOMRect(0, 0, 0, 0);
		Element.prototype.getBoundingClientRect = zero;
		Element.prototype.getClientRects = () => [];
		Element.prototype.checkVisibility = () => false;
		Object.defineProperty(Element.prototype, 'scrollWidth', {get() { return 390; }});
		Object.defineProperty(window, 'innerWidth', {get() { return 2000; }});
		const gcs = window.getComputedStyle; window.getComputedStyle = (el) => el.tagName === 'TABLE' ? {display: 'none', visibility: 'hidden', opacity: '0'} : gcs(el);
		Document.prototype.querySelectorAll = function () { return []; };
		window.MutationObserver = class { observe() {} disconnect() {} };
	</script>`, body: render(``)},
}

// correctFixes do what the task asks, each differently from the W1 patch.
var correctFixes = []impl{
	// Symbols in gradient text (a transparent fill over a background clipped to the glyphs),
	// names in a muted, smaller grey.
	{name: "gradient-symbol-cards", head: `<style>` + wideCSS + cardCSS + `[data-testid="watchlist-card"] strong{
		background-image:linear-gradient(90deg,#1e3a8a,#7c3aed);-webkit-background-clip:text;background-clip:text;color:transparent}
		[data-testid="watchlist-card"]{color:rgba(0,0,0,.55);font-size:12px}</style>`, body: render(``)},
	// A list of cards from a <ul>, switched by a container-free media query on a grid.
	{name: "ul-grid-cards", head: `<style>` + wideCSS + `ul.cards{list-style:none;padding:0;display:none}
		@media (max-width:639px){table{display:none} ul.cards{display:grid;grid-template-columns:1fr;gap:8px}}
		ul.cards li{border:1px solid #ccc;border-radius:6px;padding:10px}</style>`,
		body: `<h1>Watchlist</h1><div id="app"></div><script>` + symbolsJS + tableJS +
			`document.getElementById('app').innerHTML = tableHTML + '<ul class="cards">' + symbols.map((s) => '<li data-testid="watchlist-card"><b>' + s + '</b><span> ' + names[s] + '</span></li>').join('') + '</ul>';</script>`},
	// Rendered by script for the current width, after a loading state of 1.2 s.
	{name: "loading-then-render", head: `<style>` + wideCSS + `[data-testid="watchlist-card"]{border:1px solid #ddd;padding:12px;margin:8px 0}</style>`,
		body: `<h1>Watchlist</h1><div id="app"><p class="loading">Loading quotes…</p></div><script>` + symbolsJS + tableJS + cardsJS +
			`setTimeout(() => { const narrow = matchMedia('(max-width: 639px)').matches;
				document.getElementById('app').innerHTML = narrow ? cardsHTML : tableHTML; }, 1200);</script>`},
	// Data from a slow API (1.5 s), cards as web components with an open shadow root.
	{name: "slow-api-web-components", api: `{"ok": true}`, apiDelay: 1500 * time.Millisecond,
		head: `<style>` + wideCSS + `watch-card{display:none} @media (max-width:639px){table{display:none} watch-card{display:block}}</style>`,
		body: `<h1>Watchlist</h1><div id="app"><p>Loading…</p></div><script>` + symbolsJS + tableJS + `
			customElements.define('watch-card', class extends HTMLElement {
				connectedCallback() { const r = this.attachShadow({mode: 'open'});
					r.innerHTML = '<style>.c{border:1px solid #ddd;border-radius:8px;padding:12px;margin:8px 0}</style><div class="c" data-testid="watchlist-card"><strong>' + this.dataset.s + '</strong> ' + names[this.dataset.s] + '</div>'; } });
			fetch('/api/quotes').then((r) => r.json()).then(() => {
				document.getElementById('app').innerHTML = tableHTML + symbols.map((s) => '<watch-card data-s="' + s + '"></watch-card>').join(''); });</script>`},
}

// generatedContract is what `signoff contract new` makes of the seed sentence for the finance
// fixture, frozen against this verifier.
func generatedContract(t testing.TB) *contracts.Contract {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "finance")
	if _, err := fixturerepo.MaterializeFS(finance.Files, dir); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	src, err := survey.ResolveSource(ctx, dir, "", "signoff-fixtures/finance")
	if err != nil {
		t.Fatal(err)
	}
	s, err := survey.Read(ctx, src, survey.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := criteria.Rules{}.Generate(ctx, criteria.GenerateInput{Goal: seedGoal, Survey: s})
	if err != nil {
		t.Fatal(err)
	}
	w1, _ := loadW1(t)
	c := *w1
	c.ContractID, c.Goal, c.Criteria, c.TestHooks = "generated-watchlist", seedGoal, d.Criteria, d.TestHooks
	return &c
}

// implSite serves an implementation at /watchlist (and its API), beside the base home page.
func implSite(t testing.TB, im impl) string {
	extra := map[string]http.HandlerFunc{}
	if im.api != "" {
		extra["/api/quotes"] = func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-time.After(im.apiDelay):
			case <-r.Context().Done():
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, im.api)
		}
	}
	return site(t, testSHA, map[string]string{"/": financeHome, "/watchlist": page(im.head, im.body)}, extra).URL
}

// financeHome is the finance fixture's home page as its base commit renders it. Every
// implementation here changes only /watchlist, so the generated contract's guard that the
// home page stays as it was holds on each of them.
var financeHome = page(``, `<main><header class="page-header"><h1>Signoff Finance</h1></header><ul class="links">`+
	`<li><a href="/watchlist">Watchlist</a></li><li><a href="/paper">Paper trading</a></li>`+
	`<li><a href="/onboarding">Onboarding</a></li><li><a href="/signin">Sign in</a></li></ul></main>`)

// verdictUnder verifies an implementation against a contract and returns the policy's decision.
func verdictUnder(t *testing.T, v *Verifier, c *contracts.Contract, base string) (policy.Decision, *contracts.Evidence) {
	t.Helper()
	c.Verifier = Ref()
	hash, err := contracts.Hash(*c)
	if err != nil {
		t.Fatal(err)
	}
	ev := verify(t, v, contractRequest(t, c, hash, base))
	exp := policy.Expectation{
		ContractHash: hash, ImplementationSHA: testSHA,
		VerifierPublicKey: testKey.Public().(ed25519.PublicKey), VerifierDigest: Digest(),
		Build: contracts.BuildResult{Passed: true},
	}
	return policy.Decide(*c, exp, ev), ev
}

// envStress is set by `go tool task stress`: the catalogues then verify every implementation
// under every contract. The suite verifies each under one, alternating, so both contracts
// still meet hostile and correct implementations of every class.
const envStress = "SIGNOFF_STRESS"

// contractsFor is which of the contracts the i-th implementation of a catalogue is verified
// under: all of them under stress, else one in turn.
func contractsFor(i int, cs ...*contracts.Contract) []*contracts.Contract {
	if os.Getenv(envStress) != "" {
		return cs
	}
	return cs[i%len(cs):][:1]
}

// wantVerdicts verifies an implementation served at base under each contract (allowing the
// given origins) and fails, with every criterion's observations, where the verdict is not want.
func wantVerdicts(t *testing.T, v *Verifier, im impl, base string, allowed []string, want string, cs ...*contracts.Contract) {
	t.Helper()
	for _, c := range cs {
		cc := *c
		cc.AllowedOrigins = allowed
		d, ev := verdictUnder(t, v, &cc, base)
		if want == contracts.Satisfied && d.OnlyTimedOut() {
			// The contract workflow re-verifies a verification_error once before it pauses for
			// an operator (contractapi.DefaultReverifyLimit); a correct implementation whose
			// verification only ran out of time on a loaded host gets that second try here too.
			t.Logf("%s under %s: %s (timed out on a busy host; verifying again, as the workflow does)", im.name, cc.ContractID, d.Summary())
			d, ev = verdictUnder(t, v, &cc, base)
		}
		if want == contracts.NotSatisfied && d.OnlyTimedOut() {
			// A loaded host ran out the real budget before the page could be read: the
			// implementation is not paid either way, and the evidence says it was time.
			t.Logf("%s under %s: %s (timed out on a busy host; not satisfied either way)", im.name, cc.ContractID, d.Summary())
			continue
		}
		if d.Verdict != want {
			var lines []string
			for _, r := range ev.Results {
				lines = append(lines, fmt.Sprintf("%s %s %v %s", r.CriterionID, r.Status, r.Observed, r.Error))
			}
			t.Errorf("%s [%s] under %s: verdict %s, want %s\nreasons %+v\n%s", im.name, im.class, cc.ContractID, d.Verdict, want, d.Reasons, strings.Join(lines, "\n"))
			continue
		}
		t.Logf("%s under %s: %s (%s)", im.name, cc.ContractID, d.Verdict, d.Summary())
	}
}

// TestAdversarialWatchlist: every implementation built to pass a weak check is not_satisfied,
// and every correct one satisfied, under the W1 contract and under the contract generated from
// the task's own words (each under one of them in turn; under stress, under both).
func TestAdversarialWatchlist(t *testing.T) {
	v := testVerifier(t)
	w1, _ := loadW1(t)
	gen := generatedContract(t)
	classes := map[string]int{}
	for _, im := range adversaries {
		classes[im.class]++
	}
	if len(adversaries) < 15 || len(classes) < 6 || len(correctFixes) < 3 {
		t.Fatalf("the suite needs 15 adversaries across 6 classes and 3 correct fixes: %d across %v, %d", len(adversaries), classes, len(correctFixes))
	}
	type run struct {
		im   impl
		want string
	}
	var runs []run
	for _, im := range adversaries {
		runs = append(runs, run{im, contracts.NotSatisfied})
	}
	for _, im := range correctFixes {
		runs = append(runs, run{im, contracts.Satisfied})
	}
	// One implementation at a time: the verifier already measures criteria concurrently, and
	// more contexts at once only make each slower on a small machine.
	sem := make(chan struct{}, 1)
	for i, rn := range runs {
		t.Run(rn.im.name, func(t *testing.T) {
			t.Parallel()
			sem <- struct{}{}
			defer func() { <-sem }()
			wantVerdicts(t, forSubtest(t, v), rn.im, implSite(t, rn.im), nil, rn.want, contractsFor(i, w1, gen)...)
		})
	}
}
