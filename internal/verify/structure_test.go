package verify

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/signoff/signoff/contracts"
)

// The pages a goal leaves alone keep the structure the base check observed: a first read of
// the base gives the expected value, then changed pages are judged against it. Digits and
// styling may change; a heading's level, a new section or a hidden link may not.
func TestStructureKeptFromBase(t *testing.T) {
	v := testVerifier(t)
	body := func(h, extra, link string) string {
		return `<header><nav><a href="/">Home</a></nav></header><main>` + h + `<p>Since 2019 we build launch tools.</p><ul><li>Planning</li><li>Shipping</li></ul>` +
			extra + link + `</main><footer>Acme, 2019</footer>`
	}
	contact := `<a href="/contact">Contact us</a>`
	pages := map[string]string{
		"/base":   page(``, body(`<h1>About us since 2019</h1>`, ``, contact)),
		"/digits": page(``, strings.ReplaceAll(body(`<h1>About us since 2019</h1>`, ``, contact), "2019", "2026")),
		// The same content, restyled and wrapped: not a structural change.
		"/styled": page(`<style>main{display:grid;gap:24px;color:#223}</style>`, `<header><nav><a href="/">Home</a></nav></header><main><div class="wrap"><div><h1>About us since 2019</h1></div>`+
			`<p>Since 2019 we build launch tools.</p><ul><li>Planning</li><li>Shipping</li></ul><span>`+contact+`</span></div></main><footer>Acme</footer>`),
		"/new-section": page(``, body(`<h1>About us since 2019</h1>`, `<section aria-label="News"><h2>News</h2><p>We moved.</p></section>`, contact)),
		"/demoted":     page(``, body(`<h2>About us since 2019</h2>`, ``, contact)),
		"/link-hidden": page(``, body(`<h1>About us since 2019</h1>`, ``, `<a href="/contact" style="display:none">Contact us</a>`)),
		"/link-gone":   page(``, body(`<h1>About us since 2019</h1>`, ``, `<span>Contact us</span>`)),
	}
	srv := site(t, testSHA, pages, nil)
	read := verifyCases(t, v, srv.URL, []tc{{crit("base", "/base", contracts.Assertion{Kind: contracts.KindStructure}), contracts.StatusPass}})
	got, _ := result(t, read, "base").Observed["390x844/structure"].(string)
	want := "heading1 \"About us since ####\"\nlist\nlink \"Contact us\""
	if got != want {
		t.Fatalf("base structure %q, want %q", got, want)
	}
	expected, _ := json.Marshal(map[string]string{"390x844": got})
	kept := contracts.Assertion{Kind: contracts.KindStructure, Expected: expected}
	verifyCases(t, v, srv.URL, []tc{
		{crit("same-ok", "/base", kept), contracts.StatusPass},
		{crit("digits-ok", "/digits", kept), contracts.StatusPass},
		{crit("restyled-ok", "/styled", kept), contracts.StatusPass},
		{crit("new-section-fail", "/new-section", kept), contracts.StatusFail},
		{crit("demoted-heading-fail", "/demoted", kept), contracts.StatusFail},
		{crit("hidden-link-fail", "/link-hidden", kept), contracts.StatusFail},
		{crit("link-gone-fail", "/link-gone", kept), contracts.StatusFail},
	})
}
