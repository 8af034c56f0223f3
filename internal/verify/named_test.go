package verify

import (
	"testing"

	"github.com/signoff/signoff/contracts"
)

// Assertion semantics 6: criteria find what the user named by role and accessible name, and a
// place at the top or bottom of a page is also an order among its content. Each lazy variant
// here passed the semantics-5 reading of the same goal.
func TestWhatTheUserNamed(t *testing.T) {
	v := testVerifier(t)
	row := `<style>nav{display:flex;gap:16px}</style>`
	column := `<style>nav{display:flex;flex-direction:column;gap:8px}</style>`
	links := `<nav><a href="/docs">Docs</a><a href="/gh">GitHub</a><a href="/blog">Blog</a></nav>`
	short := `<h1>Projects</h1><p>Three things we made.</p>`
	pages := map[string]string{
		// The links side by side; a hook put on two blocks that were already one above the other.
		"/row-hooked": page(row, `<header>`+links+`</header><main data-testid="home-page"><div data-testid="docs-github">a</div><div data-testid="docs-github">b</div></main>`),
		"/column":     page(column, `<header>`+links+`</header><main>`+short+`</main>`),
		// Stacked copies nobody sees, the visible links side by side.
		"/hidden-copies": page(row, `<header>`+links+`</header><div aria-hidden="true" style="display:flex;flex-direction:column"><a href="/docs">Docs</a><a href="/gh">GitHub</a></div><main>`+short+`</main>`),
		// Named by aria-label and by an image's alt: the accessible name, not the markup.
		"/labelled": page(column, `<nav><a href="/docs" aria-label="Docs"><svg width="20" height="20"></svg></a><a href="/gh"><img alt="GitHub" width="20" height="20" src="data:image/gif;base64,R0lGODlhAQABAAAAACw="></a></nav><main>`+short+`</main>`),
		// A page one screen tall: the link above the heading is in the last screen too.
		"/top-link":    page(``, `<main><a href="#">Back to top</a>`+short+`</main>`),
		"/bottom-link": page(``, `<main>`+short+`<a href="#">Back to top</a></main><footer>Acme</footer>`),
		"/footer-link": page(``, `<main>`+short+`</main><footer><a href="#">Back to top</a></footer>`),
		// The hook on the heading at the top, the banner's words in another hooked block at the end.
		"/hook-split": page(``, `<main><h1 data-testid="banner">Tools that last</h1><p>Hand tools.</p><div data-testid="banner">Free shipping over $50</div></main>`),
		"/banner-top": page(``, `<main><div data-testid="banner">Free shipping over $50</div><h1>Tools that last</h1><p>Hand tools.</p></main>`),
		"/heading-h2": page(``, `<main><h2>My Projects</h2></main>`),
		"/heading-h1": page(``, `<main><h1>My Projects</h1></main>`),
	}
	srv := site(t, testSHA, pages, nil)
	pair := contracts.RoleSelector("link", "Docs", "GitHub")
	stacked := contracts.Assertion{Kind: contracts.KindStacked, Selector: pair}
	backToTop := contracts.RoleSelector("link", "Back to top")
	bottom := contracts.Assertion{Kind: contracts.KindPosition, Selector: backToTop, Place: contracts.PlaceLastViewport}
	top := contracts.Assertion{Kind: contracts.KindPosition, Selector: backToTop, Place: contracts.PlaceFirstViewport}
	h1 := contracts.Assertion{Kind: contracts.KindElementPresent, Selector: `role=heading[level=1][name="My Projects"i]`, State: contracts.StateVisible}
	banner := contracts.Assertion{Kind: contracts.KindPosition, Selector: `[data-testid="banner"]`, Place: contracts.PlaceFirstViewport, HasText: "free shipping over $50"}
	cases := []tc{
		{crit("hook-split-fail", "/hook-split", banner), contracts.StatusFail},
		{crit("banner-top-ok", "/banner-top", banner), contracts.StatusPass},
		{crit("hook-on-other-blocks-fail", "/row-hooked", stacked), contracts.StatusFail},
		{crit("stacked-links-ok", "/column", stacked), contracts.StatusPass},
		{crit("hidden-copies-fail", "/hidden-copies", stacked), contracts.StatusFail},
		{crit("accessible-names-ok", "/labelled", stacked), contracts.StatusPass},
		{crit("link-at-top-fail", "/top-link", bottom), contracts.StatusFail},
		{crit("link-after-content-ok", "/bottom-link", bottom), contracts.StatusPass},
		{crit("link-in-footer-ok", "/footer-link", bottom), contracts.StatusPass},
		{crit("top-link-first-ok", "/top-link", top), contracts.StatusPass},
		{crit("bottom-link-first-fail", "/bottom-link", top), contracts.StatusFail},
		{crit("h2-fail", "/heading-h2", h1), contracts.StatusFail},
		{crit("h1-ok", "/heading-h1", h1), contracts.StatusPass},
	}
	ev := verifyCases(t, v, srv.URL, cases)
	wantObserved(t, ev, []observedWant{
		{"hook-on-other-blocks-fail", "count", 2.0},
		{"hook-on-other-blocks-fail", "stack_overlaps", 1.0},
		{"hidden-copies-fail", "count", 2.0},
		{"link-at-top-fail", "content_after", 2.0},
		{"link-after-content-ok", "content_after", 0.0},
		{"bottom-link-first-fail", "content_before", 2.0},
	})
}
