package proofpage

import (
	"fmt"
	"strings"
	"testing"
)

// The outline is drawn from the measured box under the failing check's prefix, as a share of
// the screenshot, and the failing check names it.
func TestPageOutlinesTheMeasuredElement(t *testing.T) {
	r := buildRuns(t, nil)
	html := render(t, r.root, w2ID, keys(), Links{})
	lead := html[strings.Index(html, `id="pictures"`):strings.Index(html, `<section aria-labelledby=`)]
	box := `<span class="box" data-box="1" data-x="16" data-y="96" data-width="374" data-height="56" style="left:4.1026%;top:11.3744%;width:95.8974%;height:6.6351%">`
	// The base check measured the same offender on the base commit: both pictures show it.
	if strings.Count(lead, box) != 2 {
		t.Errorf("the first screen does not outline the offender on the base and the implementation at its measured box:\n%s", lead)
	}
	if !strings.Contains(text(lead), `main > table[data-testid="watchlist-table"] at x 16, y 96, 374×56 px`) {
		t.Error("the failing check does not name the outlined element and its box")
	}
	if n := strings.Count(html, `class="box"`); n != 8 {
		t.Errorf("%d outlines on the page, want two per failing pair: three attempts and the first screen (8)", n)
	}
}

func TestMeasuredBoxes(t *testing.T) {
	box := func(x, y, w, h float64) map[string]any {
		return map[string]any{"x": x, "y": y, "width": w, "height": h}
	}
	obs := map[string]any{
		"390x844/scroll_width":      927.0,
		"390x844/clipped_offenders": []any{map[string]any{"selector": "main > table", "right": 927.0, "x": 16.0, "y": 96.0, "width": 911.0, "height": 180.0}},
		"390x844/0.boxes":           []any{box(1, 2, 3, 4), box(5, 6, 7, 8)},
		"390x844/1.boxes":           []any{box(9, 9, 9, 9)},
		"390x844/2.boxes":           []any{map[string]any{"x": 1.0, "y": 2.0, "width": 3.0}}, // no height: not a box list
		"390x844/3.boxes":           []any{box(1, 1, -1, 1)},                                 // negative size: not a box
		"1440x1000/0.boxes":         []any{box(0, 0, 10, 10)},
		"390x844/legacy_offenders":  []any{map[string]any{"selector": "x", "right": 400.0}}, // no box yet
	}
	for _, c := range []struct {
		key  string
		want []measuredBox
	}{
		{"390x844/scroll_width", []measuredBox{{X: 16, Y: 96, W: 911, H: 180, Selector: "main > table", Key: "390x844/clipped_offenders"}}},
		{"390x844/0.count", []measuredBox{{X: 1, Y: 2, W: 3, H: 4, Key: "390x844/0.boxes"}, {X: 5, Y: 6, W: 7, H: 8, Key: "390x844/0.boxes"}}},
		{"390x844/1.text.0.visible", []measuredBox{{X: 9, Y: 9, W: 9, H: 9, Key: "390x844/1.boxes"}}},
		{"390x844/2.count", nil},
		{"390x844/3.count", nil},
		{"1440x1000/0.count", []measuredBox{{X: 0, Y: 0, W: 10, H: 10, Key: "1440x1000/0.boxes"}}},
		{"800x600/count", nil},
	} {
		got := boxesFor(obs, c.key)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: boxes %v, want %v", c.key, got, c.want)
		}
	}
}

// A tall screenshot is shown through a window that moves down to the first outline, so the
// element a check names is on the first screen however far down the page it sits.
func TestPictureWindowFollowsTheOutline(t *testing.T) {
	for _, c := range []struct {
		y         float64
		wantShift string
	}{
		{96, "0"},           // already in the window's upper part
		{2000, "-407.3504"}, // (2000 - 0.2*468) / 468
		{2990, "-541.0256"}, // clamped: the window ends with the screenshot (3000-468)/468
	} {
		p := &pictureView{W: 390, H: 3000}
		p.Outlines = append(p.Outlines, p.outline(1, measuredBox{X: 16, Y: c.y, W: 100, H: 10}))
		p.frame()
		if p.WinH != "468" || p.Shift != c.wantShift {
			t.Errorf("outline at y %v: window %s px tall shifted %s%%, want 468 and %s%%", c.y, p.WinH, p.Shift, c.wantShift)
		}
	}
}
