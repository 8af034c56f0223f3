package executor

import (
	"strings"
	"testing"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
)

func TestRepairPromptNamesTheFailedElements(t *testing.T) {
	req := capability.ExecRequest{ContractID: "c", Goal: "Make the pricing cards fit a phone", Attempt: 2,
		Feedback: []contracts.Reason{{Criterion: "mobile-no-overflow", Check: "390x844/1.clipped_elements", Observed: 2.0, Expected: 0.0,
			Message: "visible elements cut off at the right edge = 0: observed 2"}},
		FailedElements: []contracts.FailedElement{{Criterion: "mobile-no-overflow", Check: "390x844/1.clipped_elements",
			Selector: "main > div.plans > section:nth-of-type(2)", Right: 734, Width: 320}}}
	p := BuildPrompt(req, "signoff/c")
	for _, want := range []string{"The previous attempt was not satisfied", "`main > div.plans > section:nth-of-type(2)`, 320 px wide, right edge at 734 px"} {
		if !strings.Contains(p, want) {
			t.Errorf("repair prompt lacks %q:\n%s", want, p)
		}
	}
	req.FailedElements = nil
	if strings.Contains(BuildPrompt(req, "signoff/c"), "elements behind") {
		t.Error("a prompt with no failed elements lists some")
	}
}
