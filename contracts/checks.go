package contracts

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// AssertionSemanticsVersion changes whenever the meaning of an assertion kind, or the observed
// keys it is judged on, changes. It is part of the verifier digest, so contracts frozen under
// other semantics fail verification instead of being judged by rules they were not written for.
//
// 2: a JSON member the response lacks, or a body that is not JSON, fails its http check
// (the implementation did not deliver it) instead of leaving it unmeasured.
//
// 3: a browser assertion is read from the settled page to the end of the criterion's budget of
// page time (the browser's virtual clock), and passes only if it holds at every read. Shadow
// trees, open and closed, count everywhere. Visible means painted on screen: not inside a
// content-visibility: hidden subtree, not in a transparent colour, horizontally inside the
// viewport; visible_text `within` an element inside a horizontal scroll container also needs that
// element to fit the viewport's width.
//
// 4: new kinds for what a goal asks rather than what exists: attribute, background
// (luminance), url, request (made after the first click, fill or press), stacked and position;
// a press action; no_horizontal_overflow `within` judges one part of the page.
//
// 5: the page a person on that device would see. Every browser read is of a page on the
// preview's origin (left_origin names the first page, frame or popup that left it; anything
// else the page fetches from an origin the contract does not allow is blocked); viewports below
// PhoneWidthPx are a touch phone, wider ones a desktop; visible text must be painted (ink in
// its box on the screenshot, not the background alone); same-origin frames are read with the
// page; at phone widths a horizontal scroller wider than the viewport is wide content unless the
// assertion allows scrollers, and layout is read again after a person's scroll, wheel and tap;
// a page is not read as final while its fetches are pending or its workers run.
//
// 6: what the user named. A selector may be a role locator (role=link[name="Docs"i]: role and
// accessible name, as a person perceives the element); a position at the top or bottom of the
// page also means before or after every other content element of the page's main region
// (content_before / content_after = 0), so on a page one screen tall the order decides.
//
// 7: what stays and where things sit. structure compares the main region's headings, links,
// buttons, images, lists and controls with the base commit's; a position's has_text keeps the
// matches showing those words; a position beside X ("next to X") means on X's row (their
// heights overlap by at least half the shorter one), side by side within NextToGapPx, and no
// content of the page between them.
//
// 8: visible text is readable: glyphs filled at 20% opacity or more through the flat tree (a
// background clipped to text fills them too), a line at least 7 CSS px across on screen (and
// what a clip leaves of it), blur within 15% of the font size, and ink reaching into 30% of the
// text region's rows and 15% of its columns (ink_rows, ink_cols); and on top: covered at no
// more than one of its three spots by something that paints over it (covered_spots).
const AssertionSemanticsVersion = "signoff.assertions/8"

// PhoneWidthPx: a viewport narrower than this is a phone (touch, mobile user agent, coarse
// pointer); from it on, a desktop.
const PhoneWidthPx = 640

// IsPhone reports whether a viewport is a phone's.
func IsPhone(v Viewport) bool { return v.Width < PhoneWidthPx }

// StackLeftTolerancePx is how far apart the left edges of stacked items may be.
const StackLeftTolerancePx = 8.0

// NextToGapPx is the widest horizontal gap between an element and the one it is next to;
// NextToRowOverlap the least share of the shorter one's height the two must overlap by to sit
// on one row. A person reads two things as next to each other when they share a line and
// nothing sits between them; a gap wider than a thumb's reach across a desktop row is not.
const (
	NextToGapPx      = 96.0
	NextToRowOverlap = 0.5
)

// Check is one comparison the verdict is recomputed from: the observed value under Key,
// compared by Op against a literal (Expected) or against another observed value (ExpectedKey).
// The verifier reports observed values under these keys; the policy, not the verifier,
// decides whether they pass.
type Check struct {
	Key         string `json:"key"`
	Op          string `json:"op"`
	Expected    any    `json:"expected,omitempty"`
	ExpectedKey string `json:"expected_key,omitempty"`
	// Label says in words what is compared, e.g. "scrollWidth <= innerWidth".
	Label string `json:"label"`
}

// Observed keys shared by the verifier and the policy. Keys are prefixed with the viewport
// ("390x844/") for browser criteria and with the index of an all_of member ("1.").
const (
	ObsStatus        = "status"
	ObsPageErrors    = "page_errors"
	ObsConsoleErrors = "console_errors"
	ObsScrollWidth   = "scroll_width"
	ObsInnerWidth    = "inner_width"
	ObsInnerHeight   = "inner_height"
	ObsClipped       = "clipped_elements"
	ObsCount         = "count"
	ObsLeft          = "left"
	ObsTop           = "top"
	ObsRight         = "right"
	ObsBottom        = "bottom"
	ObsValue         = "value"
	ObsExpectedValue = "expected_value"
	// ObsOverflowing counts visible elements inside a no_horizontal_overflow scope that reach
	// past the viewport's left or right edge.
	ObsOverflowing = "overflowing_elements"
	// ObsRequests counts the requests a request assertion matches.
	ObsRequests = "requests"
	// ObsStackOverlaps counts stacked items whose top is above the previous one's bottom
	// (document order); ObsLeftSpread is the widest gap between their left edges.
	ObsStackOverlaps = "stack_overlaps"
	ObsLeftSpread    = "left_spread"
	// ObsFromEnd is the distance from an element's bottom to the end of the document.
	ObsFromEnd = "from_end"
	// ObsRefPrefix prefixes the observations of a position assertion's Before or After
	// element ("ref.top").
	ObsRefPrefix = "ref."
	// ObsLeftOrigin is the first URL outside the preview's origin that the page, one of its
	// frames or a popup it opened navigated to ("" when none): a page elsewhere is not the
	// commit's page. ObsFinalURL is the page's URL at the last read.
	ObsLeftOrigin = "left_origin"
	ObsFinalURL   = "final_url"
	// ObsWideScrollers counts horizontal scrollers (a scroll container or a same-origin frame)
	// whose content is wider than a phone's viewport: a wide table in a sideways scroller or a
	// frame is still a wide table.
	ObsWideScrollers = "wide_scrollers"
	// ObsBlocked lists requests blocked because their origin is neither the preview's nor
	// one the contract allows (reported, not judged).
	ObsBlocked = "blocked_requests"
	// ObsContentBefore and ObsContentAfter count the content elements (text, images, controls)
	// of the page's main region that lie wholly above or wholly below a positioned element,
	// not counting the element's own ancestors and descendants.
	ObsContentBefore = "content_before"
	ObsContentAfter  = "content_after"
	// ObsRowOverlap is the share of the shorter box's height that a positioned element and
	// its Beside element overlap by vertically; ObsBesideGap the horizontal gap between their
	// boxes (negative when they overlap sideways); ObsContentBetween counts the content
	// elements of the page that lie between them on that row.
	ObsRowOverlap     = "row_overlap"
	ObsBesideGap      = "beside_gap"
	ObsContentBetween = "content_between"
	// ObsStructure is the main region's structure, one item a line: the role (a heading with
	// its level) and the accessible name, whitespace collapsed, digits read as # (a date or
	// a count may differ between two loads of one page), cut at 40 characters.
	ObsStructure      = "structure"
	ObsStructureItems = "structure_items"
)

// TextVisibleKey is the observed key for the i-th text of a visible_text assertion.
func TextVisibleKey(i int) string { return fmt.Sprintf("text.%d.visible", i) }

// JSONValueKey is the observed key for the i-th JSON check of an http assertion.
func JSONValueKey(i int) string { return fmt.Sprintf("json.%d.value", i) }

// JSONMissingKey is where the verifier says why the i-th JSON check's member is absent from
// the response; ObsJSONError says the body was not JSON at all.
func JSONMissingKey(i int) string { return fmt.Sprintf("json.%d.missing", i) }

// ObsJSONError is observed when an http response body is not JSON.
const ObsJSONError = "json_error"

// ViewportPrefix is the key prefix for observations made at a viewport.
func ViewportPrefix(v Viewport) string { return fmt.Sprintf("%dx%d/", v.Width, v.Height) }

// ChecksFor lists every comparison a criterion is judged on. It is the single definition of
// assertion semantics: the verifier measures these keys, the policy recomputes them.
func ChecksFor(c Criterion) ([]Check, error) {
	if c.Assert.Kind == KindHTTP {
		return assertionChecks(c.Assert, "", 0)
	}
	vps := c.Viewports()
	if len(vps) == 0 {
		return nil, fmt.Errorf("criterion %s: a browser assertion needs a viewport", c.ID)
	}
	var out []Check
	for _, vp := range vps {
		p := ViewportPrefix(vp)
		phoneW := 0.0
		if IsPhone(vp) {
			phoneW = float64(vp.Width)
		}
		cs, err := assertionChecks(c.Assert, p, phoneW)
		if err != nil {
			return nil, fmt.Errorf("criterion %s: %w", c.ID, err)
		}
		out = append(out, cs...)
		out = append(out, Check{Key: p + ObsLeftOrigin, Op: OpEQ, Expected: "", Label: "every page and frame on the preview's origin (first URL that left it)"})
	}
	return out, nil
}

// firstVerifierOfSemantics5 and 6 are the first verifier versions that measure assertion
// semantics 5 and 6.
const (
	firstVerifierOfSemantics5 = 4
	firstVerifierOfSemantics6 = 5
)

// ChecksMeasuredBy keeps the checks that evidence of a verifier version measured. Evidence from
// verifiers before version 5 has no content_before or content_after; from verifiers before version 4 (assertion semantics 4 and earlier) has no left_origin,
// wide_scrollers or phone layout-width values: it is judged as it was when it was recorded, so
// a workflow history replays to the same verdict. A live contract frozen under those semantics
// is refused on its verifier digest before any check counts.
func ChecksMeasuredBy(checks []Check, verifierVersion string) []Check {
	v, err := strconv.Atoi(verifierVersion)
	if err != nil || v >= firstVerifierOfSemantics6 {
		return checks
	}
	out := make([]Check, 0, len(checks))
	for _, ch := range checks {
		if strings.HasSuffix(ch.Key, ObsContentBefore) || strings.HasSuffix(ch.Key, ObsContentAfter) {
			continue
		}
		if v < firstVerifierOfSemantics5 && (strings.HasSuffix(ch.Key, "/"+ObsLeftOrigin) || strings.HasSuffix(ch.Key, ObsWideScrollers) ||
			(strings.HasSuffix(ch.Key, ObsInnerWidth) && ch.ExpectedKey == "")) {
			continue
		}
		out = append(out, ch)
	}
	return out
}

// assertionChecks lists an assertion's checks under prefix p; phoneW is the viewport's width when
// it is a phone's, else 0.
func assertionChecks(a Assertion, p string, phoneW float64) ([]Check, error) {
	lit := func(key, op string, want any, label string) Check {
		return Check{Key: p + key, Op: op, Expected: want, Label: label}
	}
	ref := func(key, op, other, label string) Check {
		return Check{Key: p + key, Op: op, ExpectedKey: p + other, Label: label}
	}
	switch a.Kind {
	case KindLoads:
		return []Check{
			lit(ObsStatus, OpLT, 400.0, "HTTP status < 400"),
			lit(ObsPageErrors, OpEQ, 0.0, "page errors = 0"),
		}, nil
	case KindNoHorizontalOverflow:
		var out []Check
		if a.Within != "" {
			out = []Check{
				lit(ObsCount, OpGE, 1.0, a.Within+" displayed"),
				lit(ObsOverflowing, OpEQ, 0.0, "elements inside "+a.Within+" past the viewport's edge = 0"),
				lit(ObsClipped, OpEQ, 0.0, "visible elements inside "+a.Within+" cut off at the right edge = 0"),
			}
		} else {
			out = []Check{
				ref(ObsScrollWidth, OpLE, ObsInnerWidth, "scrollWidth <= innerWidth"),
				lit(ObsClipped, OpEQ, 0.0, "visible elements cut off at the right edge = 0"),
			}
		}
		if phoneW > 0 {
			// A page without a device-width viewport is laid out 980 px wide on a phone and
			// shown zoomed out: nothing overflows it, and nothing on it is readable either.
			out = append(out, lit(ObsInnerWidth, OpLE, phoneW, fmt.Sprintf("layout viewport <= %g px (the page declares a device-width viewport)", phoneW)))
		}
		// Page-wide only: a part of the page (a header's scrollable tabs) may scroll sideways
		// inside itself and still fit; the page's content may not hide a table that way.
		if phoneW > 0 && a.Within == "" && !a.AllowScrollers {
			out = append(out, lit(ObsWideScrollers, OpEQ, 0.0, "sideways scrollers wider than the viewport = 0 (scrollers allowed: no)"))
		}
		return out, nil
	case KindVisibleText:
		var out []Check
		for i, t := range a.Texts {
			label := fmt.Sprintf("%q visible", t)
			if a.Within != "" {
				label = fmt.Sprintf("%q visible inside %s", t, a.Within)
			}
			out = append(out, lit(TextVisibleKey(i), OpEQ, true, label))
		}
		return out, nil
	case KindElementPresent:
		return []Check{lit(ObsCount, OpGE, 1.0, fmt.Sprintf("%s elements %s >= 1", stateWord(a.State), a.Selector))}, nil
	case KindElementAbsent:
		return []Check{lit(ObsCount, OpEQ, 0.0, fmt.Sprintf("%s elements %s = 0", stateWord(a.State), a.Selector))}, nil
	case KindInViewport:
		return []Check{
			lit(ObsCount, OpGE, 1.0, a.Selector+" present"),
			lit(ObsLeft, OpGE, 0.0, a.Selector+" left >= 0"),
			lit(ObsTop, OpGE, 0.0, a.Selector+" top >= 0"),
			ref(ObsRight, OpLE, ObsInnerWidth, a.Selector+" right <= innerWidth"),
			ref(ObsBottom, OpLE, ObsInnerHeight, a.Selector+" bottom <= innerHeight"),
		}, nil
	case KindNoConsoleErrors:
		return []Check{lit(ObsConsoleErrors, OpEQ, 0.0, "console errors = 0")}, nil
	case KindNoPageErrors:
		return []Check{lit(ObsPageErrors, OpEQ, 0.0, "page errors = 0")}, nil
	case KindMeasure:
		label := fmt.Sprintf("%s %s ", a.Expression, a.Operator)
		if a.ExpectedFrom != "" {
			return []Check{ref(ObsValue, a.Operator, ObsExpectedValue, label+a.ExpectedFrom)}, nil
		}
		want, err := decodeLiteral(a.Expected)
		if err != nil {
			return nil, err
		}
		return []Check{lit(ObsValue, a.Operator, want, label+string(a.Expected))}, nil
	case KindHTTP:
		out := []Check{lit(ObsStatus, OpEQ, float64(a.Status), fmt.Sprintf("HTTP status = %d", a.Status))}
		for i, jc := range a.JSON {
			want, err := decodeLiteral(jc.Expected)
			if err != nil {
				return nil, err
			}
			out = append(out, lit(JSONValueKey(i), jc.Operator, want, fmt.Sprintf("body%s %s %s", jc.Pointer, jc.Operator, string(jc.Expected))))
		}
		return out, nil
	case KindAttribute:
		want, err := decodeLiteral(a.Expected)
		if err != nil {
			return nil, err
		}
		return []Check{
			lit(ObsCount, OpGE, 1.0, a.Selector+" present"),
			lit(ObsValue, a.Operator, want, fmt.Sprintf("%s [%s] %s %s", a.Selector, a.Name, a.Operator, string(a.Expected))),
		}, nil
	case KindBackground:
		want, err := decodeLiteral(a.Expected)
		if err != nil {
			return nil, err
		}
		return []Check{
			lit(ObsCount, OpGE, 1.0, a.Selector+" displayed"),
			lit(ObsValue, a.Operator, want, fmt.Sprintf("luminance painted in %s %s %s", a.Selector, a.Operator, string(a.Expected))),
		}, nil
	case KindURL:
		want, err := decodeLiteral(a.Expected)
		if err != nil {
			return nil, err
		}
		return []Check{lit(ObsValue, a.Operator, want, fmt.Sprintf("page path %s %s", a.Operator, string(a.Expected)))}, nil
	case KindRequest:
		return []Check{lit(ObsRequests, OpGE, 1.0, fmt.Sprintf("%s %s requests after the first input >= 1", a.Method, a.Path))}, nil
	case KindStacked:
		return []Check{
			lit(ObsCount, OpGE, 2.0, "displayed "+a.Selector+" >= 2"),
			lit(ObsStackOverlaps, OpEQ, 0.0, a.Selector+" that start above the previous one's bottom = 0"),
			lit(ObsLeftSpread, OpLE, StackLeftTolerancePx, fmt.Sprintf("spread of %s left edges <= %g px", a.Selector, StackLeftTolerancePx)),
		}, nil
	case KindStructure:
		vp, _, _ := strings.Cut(p, "/")
		var want map[string]string
		if len(a.Expected) > 0 {
			if err := json.Unmarshal(a.Expected, &want); err != nil {
				return nil, fmt.Errorf("structure: expected is an object of viewport to structure: %w", err)
			}
		}
		s, ok := want[vp]
		if !ok {
			return nil, nil // not yet observed on the base: nothing to compare at this viewport
		}
		return []Check{lit(ObsStructure, OpEQ, s, "the main region's headings, links, buttons, images, lists and controls as on the base commit")}, nil
	case KindPosition:
		what := a.Selector
		if a.HasText != "" {
			what = fmt.Sprintf("%s showing %q", a.Selector, a.HasText)
		}
		a.Selector = what // the labels below name the element by what selects it
		out := []Check{lit(ObsCount, OpGE, 1.0, a.Selector+" displayed")}
		switch a.Place {
		case PlaceFirstViewport:
			out = append(out, ref(ObsTop, OpLT, ObsInnerHeight, a.Selector+" top < innerHeight (in the first screen)"),
				lit(ObsContentBefore, OpEQ, 0.0, "content of the main region above "+a.Selector+" = 0"))
		case PlaceLastViewport:
			out = append(out, ref(ObsFromEnd, OpLT, ObsInnerHeight, a.Selector+" bottom within innerHeight of the end (in the last screen)"),
				lit(ObsContentAfter, OpEQ, 0.0, "content of the main region below "+a.Selector+" = 0"))
		case "":
		default:
			return nil, fmt.Errorf("unknown position place %q", a.Place)
		}
		if a.Before != "" {
			out = append(out, lit(ObsRefPrefix+ObsCount, OpGE, 1.0, a.Before+" displayed"),
				ref(ObsBottom, OpLE, ObsRefPrefix+ObsTop, fmt.Sprintf("%s ends above %s", a.Selector, a.Before)))
		}
		if a.After != "" {
			out = append(out, lit(ObsRefPrefix+ObsCount, OpGE, 1.0, a.After+" displayed"),
				ref(ObsTop, OpGE, ObsRefPrefix+ObsBottom, fmt.Sprintf("%s starts below %s", a.Selector, a.After)))
		}
		if a.Beside != "" {
			out = append(out, lit(ObsRefPrefix+ObsCount, OpGE, 1.0, a.Beside+" displayed"),
				lit(ObsRowOverlap, OpGE, NextToRowOverlap, fmt.Sprintf("%s on the row of %s (heights overlap by >= %g of the shorter)", a.Selector, a.Beside, NextToRowOverlap)),
				lit(ObsBesideGap, OpGE, 0.0, fmt.Sprintf("%s beside %s, not over it (gap >= 0 px)", a.Selector, a.Beside)),
				lit(ObsBesideGap, OpLE, NextToGapPx, fmt.Sprintf("gap between %s and %s <= %g px", a.Selector, a.Beside, NextToGapPx)),
				lit(ObsContentBetween, OpEQ, 0.0, fmt.Sprintf("content between %s and %s = 0", a.Selector, a.Beside)))
		}
		return out, nil
	case KindAllOf:
		var out []Check
		for i, sub := range a.AllOf {
			cs, err := assertionChecks(sub, fmt.Sprintf("%s%d.", p, i), phoneW)
			if err != nil {
				return nil, err
			}
			out = append(out, cs...)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown assertion kind %q", a.Kind)
}

func stateWord(s string) string {
	if s == StateAttached {
		return "attached"
	}
	return "visible"
}

func decodeLiteral(raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf("expected value is missing")
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("expected value: %w", err)
	}
	return v, nil
}

// Compare applies op to an observed and an expected JSON value (as decoded by encoding/json).
// Numbers compare numerically; strings and booleans only by equality; contains is substring
// for strings and membership for arrays. A type mismatch is an error, not a failure: the
// evidence does not say what the check needs.
func Compare(op string, observed, expected any) (bool, error) {
	if op == OpContains {
		switch o := observed.(type) {
		case string:
			e, ok := expected.(string)
			if !ok {
				return false, fmt.Errorf("contains on a string needs a string, got %T", expected)
			}
			return strings.Contains(o, e), nil
		case []any:
			for _, item := range o {
				if jsonEqual(item, expected) {
					return true, nil
				}
			}
			return false, nil
		default:
			return false, fmt.Errorf("contains needs a string or an array, observed %T", observed)
		}
	}
	if of, ok := observed.(float64); ok {
		ef, ok := expected.(float64)
		if !ok {
			return false, fmt.Errorf("observed a number, expected %T", expected)
		}
		switch op {
		case OpLT:
			return of < ef, nil
		case OpLE:
			return of <= ef, nil
		case OpEQ:
			return of == ef, nil
		case OpGE:
			return of >= ef, nil
		case OpGT:
			return of > ef, nil
		}
		return false, fmt.Errorf("unknown operator %q", op)
	}
	if op != OpEQ {
		return false, fmt.Errorf("operator %s needs numbers, observed %T", op, observed)
	}
	switch observed.(type) {
	case string, bool, nil:
		if fmt.Sprintf("%T", observed) != fmt.Sprintf("%T", expected) {
			return false, fmt.Errorf("observed %T, expected %T", observed, expected)
		}
	}
	return jsonEqual(observed, expected), nil
}

func jsonEqual(a, b any) bool {
	ca, err1 := CanonicalJSON(a)
	cb, err2 := CanonicalJSON(b)
	return err1 == nil && err2 == nil && string(ca) == string(cb)
}

// FormatValue renders an observed or expected value the way messages show it: numbers in
// their shortest form, everything else as canonical JSON.
func FormatValue(v any) string {
	if f, ok := v.(float64); ok {
		return FormatES6Number(f)
	}
	b, err := CanonicalJSON(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Outcomes of one check against what was observed.
const (
	CheckPass = "pass"
	CheckFail = "fail"
	// CheckUnmeasured: the evidence lacks the value, or it cannot be compared. That is the
	// verifier's problem, not the implementation's, and never counts as a pass or a failure.
	CheckUnmeasured = "unmeasured"
)

// CheckResult is one check judged: its outcome, the values compared, and for an absent JSON
// member (a failure) or an unmeasured check, why.
type CheckResult struct {
	Outcome  string
	Observed any
	Expected any
	Absent   string
	Problem  string
}

// EvaluateCheck judges one check against a criterion's observations. It is the one place
// pass, fail and unmeasured are decided: the verifier reports by it, the policy recomputes
// the verdict by it, and authoring classifies the base commit by it. A JSON member the
// response lacks, or a body that is not JSON, fails: the response is measured, and it is not
// what the contract asks for.
func EvaluateCheck(ch Check, observed map[string]any) CheckResult {
	obs, ok := observed[ch.Key]
	want := ch.Expected
	if ok && ch.ExpectedKey != "" {
		want, ok = observed[ch.ExpectedKey]
	}
	if !ok {
		return CheckResult{Outcome: CheckUnmeasured, Expected: want, Problem: "no observed value for " + ch.Label}
	}
	if obs == nil {
		if why := absentJSON(ch.Key, observed); why != "" {
			return CheckResult{Outcome: CheckFail, Expected: want, Absent: why}
		}
	}
	pass, err := Compare(ch.Op, obs, want)
	switch {
	case err != nil:
		return CheckResult{Outcome: CheckUnmeasured, Observed: obs, Expected: want, Problem: fmt.Sprintf("observed value for %s is unusable: %v", ch.Label, err)}
	case pass:
		return CheckResult{Outcome: CheckPass, Observed: obs, Expected: want}
	}
	return CheckResult{Outcome: CheckFail, Observed: obs, Expected: want}
}

// absentJSON says why the JSON value under key is absent from the response, or "" when key
// is not a JSON check's value or the verifier did not report it absent.
func absentJSON(key string, observed map[string]any) string {
	var i int
	if n, err := fmt.Sscanf(key, "json.%d.value", &i); err != nil || n != 1 || key != JSONValueKey(i) {
		return ""
	}
	if why, ok := observed[JSONMissingKey(i)].(string); ok && why != "" {
		return why
	}
	if why, ok := observed[ObsJSONError].(string); ok && why != "" {
		return why
	}
	return ""
}
