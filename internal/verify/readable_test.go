package verify

import (
	"fmt"
	"strings"
	"testing"

	"github.com/signoff/signoff/contracts"
)

// TestTextMustBeReadable: visible text is text a person can read on that screen. Each line of
// one page is a text drawn a way that leaves something in its box (an underline, a background,
// a shadow, the ink of tiny glyphs, a band of it) without a person being able to read it, or a way real apps
// draw readable text that is light, small, soft or filled by a gradient. All are read on one
// shared page, each by its own criterion.
func TestTextMustBeReadable(t *testing.T) {
	v := testVerifier(t)
	lines := []struct {
		text, style string
		readable    bool
	}{
		{"TINYFONT", `font-size:3px`, false},
		{"ZOOMEDOUT", `zoom:.15`, false},
		{"SIDEWAYS", `display:inline-block;font-size:3px;transform:rotate(90deg)`, false},
		{"BLURRED", `filter:blur(4px)`, false},
		{"GHOSTUNDERLINE", `color:rgba(0,0,0,.02);text-decoration:underline 4px #000`, false},
		{"GHOSTGRADIENT", `color:rgba(0,0,0,.02);background:linear-gradient(90deg,#000,#fff)`, false},
		{"GHOSTSHADOW", `color:rgba(0,0,0,.01);text-shadow:0 0 6px #000`, false},
		{"MASKEDBAND", `-webkit-mask-image:linear-gradient(transparent 45%,#000 45%,#000 55%,transparent 55%);mask-image:linear-gradient(transparent 45%,#000 45%,#000 55%,transparent 55%)`, false},
		{"CLIPPEDBAND", `display:inline-block;clip-path:inset(45% 0 45% 0)`, false},
		{"FILTERFADED", `filter:opacity(10%);text-decoration:underline 4px #000;text-decoration-skip-ink:none`, false},
		{"SOFTBLUR", `filter:blur(1px)`, true},
		{"LIGHTGREY", `color:#bbb`, true},
		{"SMALLPRINT", `font-size:9px`, true},
		{"MUTEDLABEL", `color:rgba(0,0,0,.38)`, true},
		{"GRADIENTHEADING", `background-image:linear-gradient(90deg,#123,#456);-webkit-background-clip:text;background-clip:text;color:transparent`, true},
		{"FILLONLY", `color:transparent;-webkit-text-fill-color:#222`, true},
		{"VERTICAL", `writing-mode:vertical-rl`, true},
	}
	var body strings.Builder
	var cases []tc
	for _, l := range lines {
		body.WriteString(`<p><span style="` + l.style + `">` + l.text + `</span></p>`)
		want := contracts.StatusFail
		if l.readable {
			want = contracts.StatusPass
		}
		cases = append(cases, tc{crit(strings.ToLower(l.text), "/read", contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{l.text}}), want})
	}
	// Two layers each under the blur a 16 px text stands, together past it; two each under
	// the fading, together past it.
	body.WriteString(`<div style="filter:blur(1.5px)"><p style="filter:blur(1.5px)">STACKEDBLUR</p></div>`)
	body.WriteString(`<div style="opacity:.4"><p style="opacity:.4;text-decoration:underline 4px #000">STACKEDFADE</p></div>`)
	for _, s := range []string{"STACKEDBLUR", "STACKEDFADE"} {
		cases = append(cases, tc{crit(strings.ToLower(s), "/read", contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{s}}), contracts.StatusFail})
	}
	srv := site(t, testSHA, map[string]string{"/read": page(`<style>p{margin:2px 0;font-size:16px}</style>`, body.String())}, nil)
	verifyCases(t, v, srv.URL, cases)
}

// TestTextUnderSomethingElseIsNotVisible: a text is visible where it is on top. Each line of
// one page has its text laid under something that shows ink of its own (another text, a
// picture, a patterned sheet, its parent's background over a negative z-index), clicks going
// through it or not, or under something that leaves it readable (a stretched link's
// transparent ::after, a small badge on a corner, a button's own label).
func TestTextUnderSomethingElseIsNotVisible(t *testing.T) {
	v := testVerifier(t)
	var svgStripes string // black and white, 3 px each, across the line
	for x := 0; x < 390; x += 6 {
		svgStripes += fmt.Sprintf(`<rect x="%d" width="3" height="24"/><rect x="%d" width="3" height="24" fill="#fff"/>`, x, x+3)
	}
	const over = `position:absolute;left:0;top:0;right:0;bottom:0;`
	lines := []struct {
		text, html string
		onTop      bool
	}{
		{"COVEREDBYTEXT", `<div class="l"><span>COVEREDBYTEXT</span><div style="` + over + `background:#fff">Something else entirely</div></div>`, false},
		{"CLICKSTHROUGH", `<div class="l"><span>CLICKSTHROUGH</span><div style="` + over + `background:#fff;pointer-events:none">Another line of words</div></div>`, false},
		{"BARETEXTOVER", `<div class="l"><span>BARETEXTOVER</span><div style="` + over + `pointer-events:none;padding:0 2px;letter-spacing:1px">WWWWWWWWWWWWWWWWWWWW</div></div>`, false},
		{"PSEUDOSHEET", `<div class="l p"><span>PSEUDOSHEET</span></div>`, false},
		{"PICTUREOVER", `<div class="l"><span>PICTUREOVER</span><canvas width="390" height="24" style="` + over + `width:100%;height:100%"></canvas></div>`, false},
		{"UNDERPARENT", `<div class="l" style="background:#fff"><span style="position:relative;z-index:-1">UNDERPARENT</span></div>`, false},
		{"STRETCHEDLINK", `<div class="l s"><a href="#x">STRETCHEDLINK</a></div>`, true},
		{"CORNERBADGE", `<div class="l b"><span>CORNERBADGE</span></div>`, true},
		{"STRIPESOVER", `<div class="l"><span>STRIPESOVER</span><div style="` + over + `pointer-events:none;background:repeating-linear-gradient(90deg,#000 0 3px,#fff 3px 6px)"></div></div>`, false},
		{"SCRIMOVER", `<div class="l"><span>SCRIMOVER</span><div style="` + over + `pointer-events:none;background:linear-gradient(rgba(0,0,0,0),rgba(0,0,0,.35))"></div></div>`, true},
		{"CARDBUTTON", `<div class="l"><span>CARDBUTTON</span><button aria-label="Open" style="` + over + `background:none;border:0"></button></div>`, true},
		{"BUTTONOVER", `<div class="l"><span>BUTTONOVER</span><button style="` + over + `background:#eee;border:0;font:inherit">Accept all cookies</button></div>`, false},
		{"SVGLINESOVER", `<div class="l"><span>SVGLINESOVER</span><svg style="` + over + `width:100%;height:100%;pointer-events:none"><line x1="0" y1="1" x2="390" y2="1" stroke="#000"/></svg></div>`, true},
		{"SVGSHAPEOVER", `<div class="l"><span>SVGSHAPEOVER</span><svg style="` + over + `width:100%;height:100%;pointer-events:none">` + svgStripes + `</svg></div>`, false},
		{"SVGHITSHAPE", `<div class="l"><span>SVGHITSHAPE</span><svg style="` + over + `width:100%;height:100%">` + svgStripes + `</svg></div>`, false},
		{"BLURREDBEHIND", `<div class="l"><span>BLURREDBEHIND</span><div style="` + over + `pointer-events:none;backdrop-filter:blur(4px)"></div></div>`, false},
		{"FROSTEDBAR", `<div class="l"><span>FROSTEDBAR</span><div style="` + over + `backdrop-filter:blur(1px)"></div></div>`, true},
		{"BUTTONLABEL", `<div class="l"><button style="font:inherit;background:#eee;border:1px solid #999">BUTTONLABEL</button></div>`, true},
	}
	var body strings.Builder
	var cases []tc
	for _, l := range lines {
		body.WriteString(l.html)
		want := contracts.StatusFail
		if l.onTop {
			want = contracts.StatusPass
		}
		cases = append(cases, tc{crit(strings.ToLower(l.text), "/under", contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{l.text}}), want})
	}
	css := `<style>.l{position:relative;margin:4px 0;font-size:16px;line-height:24px;min-height:24px}
		.p::after{content:"ZZZZZZ ZZZZ";position:absolute;inset:0;background:#fff;color:#000}
		.s a::after{content:"";position:absolute;inset:0;z-index:1}
		.b::before{content:"new";position:absolute;left:0;top:0;background:#c00;color:#fff;font-size:8px;line-height:9px}</style>` +
		`<script>addEventListener('load', () => { const c = document.querySelector('canvas').getContext('2d');
			for (let x = 0; x < 390; x += 6) { c.fillStyle = x % 12 ? '#000' : '#fff'; c.fillRect(x, 0, 6, 24); } });</script>`
	srv := site(t, testSHA, map[string]string{"/under": page(css, body.String())}, nil)
	verifyCases(t, v, srv.URL, cases)
}
