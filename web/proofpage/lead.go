package proofpage

import (
	"fmt"
	"image/png"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/proofstore"
)

// The first screen of a proof page: the verdict in one sentence, then per viewport the base
// and the implementation screenshots side by side, the failing element outlined from the
// boxes the verifier measured, and the criterion's trace one click away. Everything here is
// computed from the signed evidence and bundle; image sizes are read from the screenshots
// the evidence binds by digest.

// measuredBox is an element box the verifier measured, in CSS px of the full-page screenshot
// (document coordinates). The verifier takes screenshots at device scale factor 1, so one CSS
// px is one screenshot pixel.
type measuredBox struct {
	X, Y, W, H float64
	Selector   string
	Key        string // the observed key the box was listed under
}

// boxesOf reads an observed value as a list of measured boxes: a JSON array of objects each
// with numeric x, y, width and height (and an optional string selector). Anything else is not
// a box list and yields nothing.
func boxesOf(key string, v any) []measuredBox {
	list, ok := v.([]any)
	if !ok {
		return nil
	}
	var out []measuredBox
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil
		}
		var b measuredBox
		nums := []*float64{&b.X, &b.Y, &b.W, &b.H}
		for i, name := range []string{"x", "y", "width", "height"} {
			f, ok := m[name].(float64)
			if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
				return nil
			}
			*nums[i] = f
		}
		if b.W < 0 || b.H < 0 {
			return nil
		}
		if s, ok := m["selector"].(string); ok {
			b.Selector = s
		}
		b.Key = key
		out = append(out, b)
	}
	return out
}

// memberRe matches the all_of member index at the start of a key without its viewport.
var memberRe = regexp.MustCompile(`^[0-9]+\.`)

// checkPrefix is the part of a check's key that observed values about the same element or
// page share: the viewport ("390x844/") and, for an all_of member, its index ("390x844/1.").
func checkPrefix(key string) string {
	vp, rest, ok := strings.Cut(key, "/")
	if !ok {
		vp, rest = "", key
	} else {
		vp += "/"
	}
	return vp + memberRe.FindString(rest)
}

// boxesFor lists the measured boxes under a failing check's key prefix, in key order. Keys
// of another all_of member do not count for a check that is not a member's.
func boxesFor(obs map[string]any, checkKey string) []measuredBox {
	prefix := checkPrefix(checkKey)
	member := prefix != "" && strings.HasSuffix(prefix, ".")
	var keys []string
	for k := range obs {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok || (!member && memberRe.MatchString(rest)) {
			continue
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []measuredBox
	for _, k := range keys {
		out = append(out, boxesOf(k, obs[k])...)
	}
	return out
}

// outlineView is a box drawn over a picture, in percent of the whole screenshot.
type outlineView struct {
	N                        int
	Left, Top, Width, Height string // percent, formatted
	X, Y, W, H               string // CSS px as measured
	Selector                 string
	Key                      string
}

// pictureView is one screenshot shown cropped to a window of the page, with outlines.
type pictureView struct {
	Role     string // base or implementation
	Src      string // relative path
	Alt      string
	W, H     int    // the screenshot's size in pixels (0: unreadable)
	WinH     string // the shown window's height in pixels of the screenshot (its width is W)
	Shift    string // the window's top, in percent of the window's height (0 or negative)
	Edge     string // the viewport's right edge in percent of the width, when the page is wider
	Outlines []outlineView
	Signed   string // what covers the picture: "" (the attempt's evidence) or a note for base shots
}

// failNote is a failing check beside the picture: what was expected and observed.
type failNote struct {
	Label, Observed, Expected string
	Boxes                     []outlineView
}

// pairView is one criterion's screenshots at one viewport: base against implementation.
type pairView struct {
	Criterion   string
	Description string
	Anchor      string // the criterion's row in its attempt's table
	Viewport    string // 390×844
	VPW, VPH    int
	Label       string // mobile or desktop
	Result      string
	ResultCSS   string
	Base        *pictureView
	NoBase      string // why there is no base picture
	Impl        *pictureView
	Failing     []failNote
	Trace       *traceView
}

// leadView is the first screen.
type leadView struct {
	Word, Verdict, CSS string
	Rest               string // the sentence after the verdict word
	Pairs              []pairView
	From               *attemptView // the attempt whose results the pictures show
	Unchanged          bool         // the latest attempt changed nothing
}

// Sentence is the verdict in one sentence, as the page, the PR comment and the chat say it.
func (l *leadView) Sentence() string { return l.Word + " " + l.Rest }

// newLead picks, for every viewport, the pair to show first: the first failing criterion's at
// that viewport, else the first criterion's. An attempt that changed nothing shows the results
// of the last attempt that was verified before it (attemptView.Stands).
func newLead(latest *attemptView, maxAttempts int) *leadView {
	l := &leadView{Word: latest.VerdictWord, Verdict: latest.Verdict, CSS: latest.VerdictCSS, From: latest}
	if latest.Unchanged {
		l.Unchanged, l.From = true, latest.Stands
	}
	l.Rest = sentenceRest(latest, l.From, maxAttempts)
	if l.From == nil {
		return l
	}
	var order []string
	byVP := map[string]*pairView{}
	for i := range l.From.Pairs {
		p := &l.From.Pairs[i]
		cur, seen := byVP[p.Viewport]
		if !seen {
			order = append(order, p.Viewport)
		}
		if !seen || rank(p) > rank(cur) {
			byVP[p.Viewport] = p
		}
	}
	for _, vp := range order {
		l.Pairs = append(l.Pairs, *byVP[vp])
	}
	// Narrow viewports first, as the criteria usually are.
	sort.SliceStable(l.Pairs, func(i, j int) bool { return l.Pairs[i].VPW < l.Pairs[j].VPW })
	return l
}

// rank orders the pairs a viewport could lead with: a failing criterion first, then one the
// base commit was pictured for.
func rank(p *pairView) int {
	r := 0
	if p.Result == "fail" {
		r += 2
	}
	if p.Base != nil {
		r++
	}
	return r
}

// sentenceRest is the verdict sentence after its first word(s):
//
//	on attempt 3 of 3 (commit d4bd3565d0b8): 4 of 6 criteria passed; <first reason> (+5 more).
//	on attempt 3 of 3: it changed nothing, so attempt 2's results stand (commit …): 4 of 6 criteria passed; ….
func sentenceRest(a, from *attemptView, maxAttempts int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "on attempt %d", a.Attempt)
	if maxAttempts > 0 {
		fmt.Fprintf(&b, " of %d", maxAttempts)
	}
	if a.Try > 1 {
		fmt.Fprintf(&b, ", verification try %d", a.Try)
	}
	reasons, more := a.Reasons, 0
	shown := a
	if a.Unchanged {
		if from == nil {
			b.WriteString(": it changed nothing, and no earlier attempt was verified")
			return b.String() + "."
		}
		fmt.Fprintf(&b, ": it changed nothing, so attempt %d's results stand", from.Attempt)
		shown, reasons = from, from.Reasons
	}
	if c := contracts.ShortSHA(shown.B.ImplementationSHA); c != "" {
		fmt.Fprintf(&b, " (commit %s)", c)
	}
	var parts []string
	if shown.Verified {
		parts = append(parts, fmt.Sprintf("%d of %d criteria passed", shown.Passed, shown.Total))
	}
	if len(reasons) > 0 && shown.Verdict != contracts.Satisfied {
		parts = append(parts, strings.TrimRight(clip(reasons[0].Message, 220), "."))
		more = len(reasons) - 1
	}
	if len(parts) > 0 {
		b.WriteString(": " + strings.Join(parts, "; "))
	}
	if more > 0 {
		fmt.Fprintf(&b, " (+%d more)", more)
	}
	return b.String() + "."
}

// pairViews pairs every implementation screenshot of an attempt with the base screenshot of
// the same name, and draws the boxes of the criterion's failing checks at that viewport.
func pairViews(a *Attempt, av *attemptView, base *baseShots) []pairView {
	var arts []contracts.Artifact
	switch {
	case a.Evidence != nil:
		arts = a.Evidence.Artifacts
	case a.Bundle != nil:
		arts = a.Bundle.Artifacts
	}
	rows := map[string]*rowView{}
	for i := range av.Rows {
		rows[av.Rows[i].ID] = &av.Rows[i]
	}
	results := map[string]*contracts.CriterionResult{}
	if a.Evidence != nil {
		for i := range a.Evidence.Results {
			if _, dup := results[a.Evidence.Results[i].CriterionID]; !dup {
				results[a.Evidence.Results[i].CriterionID] = &a.Evidence.Results[i]
			}
		}
	}
	commit := contracts.ShortSHA(av.B.ImplementationSHA)
	var out []pairView
	for _, art := range arts {
		if art.Kind != contracts.ArtifactScreenshot {
			continue
		}
		m := shotRe.FindStringSubmatch(art.Name)
		if m == nil {
			continue
		}
		w, _ := strconv.Atoi(m[1])
		h, _ := strconv.Atoi(m[2])
		p := pairView{Criterion: art.Criterion, Anchor: av.Anchor + "-" + art.Criterion, Viewport: m[1] + "×" + m[2], VPW: w, VPH: h, Label: "desktop"}
		if w < 768 {
			p.Label = "mobile"
		}
		vpKey := m[1] + "x" + m[2] + "/"
		where := fmt.Sprintf("criterion %s at %s", art.Criterion, p.Viewport)
		var failing []checkView
		if r := rows[art.Criterion]; r != nil {
			p.Description, p.Result, p.ResultCSS = r.Description, r.Result, r.ResultCSS
			for _, c := range r.Checks {
				if c.Result == "fail" && (strings.HasPrefix(c.Key, vpKey) || !strings.Contains(c.Key, "/")) {
					failing = append(failing, c)
				}
			}
		}
		p.Impl = picture("implementation", a.Path, art.Name, join(a.Rel, art.Name), fmt.Sprintf("Screenshot of the implementation commit %s, %s", commit, where), w)
		var implObs map[string]any
		if r := results[art.Criterion]; r != nil {
			implObs = r.Observed
		}
		// Checks about the same element share its boxes: each is drawn once, numbered, and
		// named beside every failing check it explains.
		drawn := map[measuredBox]outlineView{}
		for _, c := range failing {
			note := failNote{Label: c.Label, Observed: c.Observed, Expected: c.Expected}
			for _, b := range boxesFor(implObs, c.Key) {
				o, ok := drawn[b]
				if !ok {
					o = p.Impl.outline(len(drawn)+1, b)
					drawn[b] = o
					p.Impl.Outlines = append(p.Impl.Outlines, o)
				}
				note.Boxes = append(note.Boxes, o)
			}
			p.Failing = append(p.Failing, note)
		}
		p.Impl.frame()
		switch {
		case base == nil || base.files[art.Name] == "":
			p.NoBase = "No base screenshot: the base commit was not checked with this criterion's screenshot"
		default:
			pic := picture("base", base.dir, art.Name, base.files[art.Name], fmt.Sprintf("Screenshot of the base commit %s, %s", base.commit, where), w)
			pic.Signed = base.note
			if r := base.results[art.Criterion]; r != nil {
				seen := map[measuredBox]bool{}
				for _, c := range failing {
					for _, b := range boxesFor(r.Observed, c.Key) {
						if !seen[b] {
							seen[b] = true
							pic.Outlines = append(pic.Outlines, pic.outline(len(seen), b))
						}
					}
				}
			}
			pic.frame()
			p.Base = pic
		}
		out = append(out, p)
	}
	// Mobile first, then desktop; criteria in evidence order within each.
	sort.SliceStable(out, func(i, j int) bool { return out[i].Label == "mobile" && out[j].Label != "mobile" })
	return out
}

// baseShots are the base commit's screenshots as the page shows them.
type baseShots struct {
	dir     string            // the base folder on disk
	files   map[string]string // screenshot name -> path relative to the contract folder
	results map[string]*contracts.CriterionResult
	commit  string
	note    string
}

// picture reads the screenshot's size from its PNG header (the file the evidence binds by
// digest); a file that cannot be read is shown without outlines. fsDir is the folder holding
// the file on disk, src its link relative to the contract page.
func picture(role, fsDir, name, src, alt string, vpw int) *pictureView {
	pic := &pictureView{Role: role, Src: src, Alt: alt}
	if fsDir == "" || !fileNameRe.MatchString(name) {
		return pic
	}
	f, err := proofstore.OpenContained(fsDir, name)
	if err != nil {
		return pic
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 {
		return pic
	}
	pic.W, pic.H = cfg.Width, cfg.Height
	if vpw > 0 && pic.W > vpw {
		pic.Edge = pct(float64(vpw) / float64(pic.W))
	}
	return pic
}

func (p *pictureView) outline(n int, b measuredBox) outlineView {
	o := outlineView{N: n, X: pxNum(b.X), Y: pxNum(b.Y), W: pxNum(b.W), H: pxNum(b.H), Selector: b.Selector, Key: b.Key}
	if p.W > 0 && p.H > 0 {
		x0, y0 := clamp(b.X, 0, float64(p.W)), clamp(b.Y, 0, float64(p.H))
		x1, y1 := clamp(b.X+b.W, 0, float64(p.W)), clamp(b.Y+b.H, 0, float64(p.H))
		o.Left, o.Top = pct(x0/float64(p.W)), pct(y0/float64(p.H))
		o.Width, o.Height = pct((x1-x0)/float64(p.W)), pct((y1-y0)/float64(p.H))
	}
	return o
}

// frame sets the window of the screenshot the page shows: the full width, at most 1.2 times
// as tall as wide (a phone's full page would push everything else off the first screen),
// moved down to the first outline when that lies in the window's lower part or below it.
func (p *pictureView) frame() {
	if p.W <= 0 || p.H <= 0 {
		return
	}
	win := math.Min(float64(p.H), math.Round(1.2*float64(p.W)))
	top := 0.0
	first := -1.0
	for _, o := range p.Outlines {
		if y, err := strconv.ParseFloat(o.Y, 64); err == nil && (first < 0 || y < first) {
			first = y
		}
	}
	if first > 0 && first > 0.6*win {
		top = clamp(first-0.2*win, 0, float64(p.H)-win)
	}
	p.WinH = pxNum(win)
	p.Shift = pct(-top / win)
}

func clamp(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }

// pct formats a fraction as a CSS percentage number (no unit).
func pct(f float64) string {
	v := math.Round(f*1e6) / 1e4
	if v == 0 {
		return "0"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func pxNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
