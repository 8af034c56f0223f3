package verify

import (
	"testing"

	"github.com/signoff/signoff/contracts"
)

// "Next to X" is what a person reads as next to it: on X's row, side by side, close, and with
// nothing between them. Each page below breaks one of those, and only the first keeps all.
func TestNextTo(t *testing.T) {
	v := testVerifier(t)
	const row = `<style>.row{display:flex;gap:12px;align-items:center}</style>`
	buy := `<button id="buy">Buy</button>`
	compare := `<button id="compare">Compare</button>`
	pages := map[string]string{
		"/ok": page(row, `<main><h1>Plans</h1><div class="row">`+buy+compare+`</div><p>Fine print</p></main>`),
		// Its own line, right under Buy: close, but not on the row.
		"/below": page(``, `<main><h1>Plans</h1><div>`+buy+`</div><div>`+compare+`</div></main>`),
		// On the row, with a word between them.
		"/between": page(row, `<main><h1>Plans</h1><div class="row">`+buy+`<span>or</span>`+compare+`</div></main>`),
		// On the row, at the other side of the screen.
		"/far": page(`<style>.row{display:flex;justify-content:space-between}</style>`, `<main><h1>Plans</h1><div class="row">`+buy+compare+`</div></main>`),
		// Laid over Buy.
		"/over": page(``, `<main><h1>Plans</h1><div style="position:relative">`+buy+`<button id="compare" style="position:absolute;left:4px;top:0">Compare</button></div></main>`),
		// The words are elsewhere on the page: a hook on another button next to Buy does not
		// count when has_text names what the element shows.
		"/hook-elsewhere": page(row, `<main><h1>Plans</h1><div class="row">`+buy+`<button id="compare">Help</button></div><p><button>Compare</button></p></main>`),
	}
	srv := site(t, testSHA, pages, nil)
	next := contracts.Assertion{Kind: contracts.KindPosition, Selector: "#compare", HasText: "Compare", Beside: `role=button[name="Buy"i]`}
	cases := []tc{
		{crit("ok", "/ok", next), contracts.StatusPass},
		{crit("below", "/below", next), contracts.StatusFail},
		{crit("between", "/between", next), contracts.StatusFail},
		{crit("far", "/far", next), contracts.StatusFail},
		{crit("over", "/over", next), contracts.StatusFail},
		{crit("hook-elsewhere", "/hook-elsewhere", next), contracts.StatusFail},
	}
	ev := verifyCases(t, v, srv.URL, cases)
	wantObserved(t, ev, []observedWant{
		{"ok", "ref.count", 1.0},
		{"ok", "row_overlap", 1.0},
		{"ok", "content_between", 0.0},
		{"below", "row_overlap", 0.0},
		{"between", "row_overlap", 1.0},
		{"between", "content_between", 1.0},
		{"far", "content_between", 0.0},
		{"hook-elsewhere", "count", 0.0},
	})
	obs := func(id, key string) float64 { f, _ := result(t, ev, id).Observed["390x844/"+key].(float64); return f }
	if g := obs("ok", "beside_gap"); g < 11 || g > 13 {
		t.Errorf("ok: beside_gap %v, want the row's 12 px gap", g)
	}
	if g := obs("far", "beside_gap"); g <= contracts.NextToGapPx {
		t.Errorf("far: beside_gap %v, want beyond %v", g, contracts.NextToGapPx)
	}
	if g := obs("over", "beside_gap"); g >= 0 {
		t.Errorf("over: beside_gap %v, want negative (laid over)", g)
	}
}
