package contracts

import (
	"sort"
	"strings"
)

// Observed keys beside an overflow check that name the elements behind it: the verifier's
// list of elements cut off (clipped) or reaching past the viewport (overflow), each with a
// selector and a box.
const (
	ObsClippedOffenders  = "clipped_offenders"
	ObsOverflowOffenders = "overflow_offenders"
)

// MaxFeedbackElements bounds the elements named per failed check in repair feedback.
const MaxFeedbackElements = 5

// FailedElement is an element a failed check points at, for repair feedback: a coding CLI
// told "cut off at the right edge = 2" also needs to know which two.
type FailedElement struct {
	Criterion string  `json:"criterion"`
	Check     string  `json:"check"`
	Selector  string  `json:"selector"`
	Right     float64 `json:"right,omitempty"`
	Width     float64 `json:"width,omitempty"`
}

// FailedElements lists, for each failed criterion check in reasons, the offenders the
// evidence recorded beside that check's key (same viewport and all_of prefix), at most
// MaxFeedbackElements each. It reads only what the signed evidence holds and is
// deterministic, so workflow code may call it.
func FailedElements(ev *Evidence, reasons []Reason) []FailedElement {
	if ev == nil {
		return nil
	}
	byID := make(map[string]map[string]any, len(ev.Results))
	for _, r := range ev.Results {
		byID[r.CriterionID] = r.Observed
	}
	var out []FailedElement
	seen := map[string]bool{}
	for _, r := range reasons {
		obs := byID[r.Criterion]
		if obs == nil || r.Check == "" {
			continue
		}
		i := strings.LastIndexAny(r.Check, "/.")
		prefix := r.Check[:i+1]
		for _, key := range []string{ObsClippedOffenders, ObsOverflowOffenders} {
			list, _ := obs[prefix+key].([]any)
			n := 0
			for _, item := range list {
				m, _ := item.(map[string]any)
				sel, _ := m["selector"].(string)
				if sel == "" || n == MaxFeedbackElements {
					continue
				}
				id := r.Criterion + "\x00" + prefix + "\x00" + sel
				if seen[id] {
					continue
				}
				seen[id] = true
				n++
				right, _ := m["right"].(float64)
				width, _ := m["width"].(float64)
				out = append(out, FailedElement{Criterion: r.Criterion, Check: r.Check, Selector: sel, Right: right, Width: width})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Criterion < out[j].Criterion })
	return out
}
