package contracts_test

import (
	"strings"
	"testing"

	"github.com/signoff/signoff/contracts"
)

// TestChecksMeasuredBy: evidence of a verifier before semantics 5 is judged without the checks
// it never measured (so recorded workflow histories replay to their verdicts); evidence of this
// verifier is judged on all of them.
func TestChecksMeasuredBy(t *testing.T) {
	cr := contracts.Criterion{ID: "o", Viewport: &contracts.Viewport{Width: 390, Height: 844}, Assert: contracts.Assertion{Kind: contracts.KindNoHorizontalOverflow}}
	all, err := contracts.ChecksFor(cr)
	if err != nil {
		t.Fatal(err)
	}
	keys := func(cs []contracts.Check) string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Key)
		}
		return strings.Join(out, " ")
	}
	if got := keys(contracts.ChecksMeasuredBy(all, "4")); got != keys(all) {
		t.Errorf("version 4 dropped checks: %s", got)
	}
	old := keys(contracts.ChecksMeasuredBy(all, "3"))
	if old != "390x844/scroll_width 390x844/clipped_elements" {
		t.Errorf("version 3 keeps %q, want the semantics-4 checks only", old)
	}
	if got := keys(contracts.ChecksMeasuredBy(all, "")); got != keys(all) {
		t.Errorf("an unreadable version must not drop checks: %s", got)
	}
}
