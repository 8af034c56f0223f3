package verify

import (
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
