//go:build unix

package executor

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/signoff/signoff/internal/capability"
)

// BuildPrompt is what the CLI is told: the goal, the criteria it will be judged by, the
// test hooks it must add, and on a repair what failed with the observed values.
func BuildPrompt(req capability.ExecRequest, branch string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Task (Signoff contract %s, attempt %d)\n\n%s\n\n", req.ContractID, req.Attempt, strings.TrimSpace(req.Goal))
	fmt.Fprintf(&b, "You are working in a clone of %s on branch %s, at commit %s.\n", req.Repo.Key(), branch, req.ParentSHA)
	b.WriteString("Edit the files in this directory. Do not commit, push or change git configuration: Signoff commits what you leave.\n")
	b.WriteString("An independent browser verifier will run every criterion below against the built app; the criteria cannot be changed.\n\n")
	b.WriteString("## Acceptance criteria\n\n")
	for i, cr := range req.Criteria {
		fmt.Fprintf(&b, "%d. %s (id `%s`, route `%s`", i+1, cr.Description, cr.ID, cr.Route)
		for _, v := range cr.Viewports() {
			fmt.Fprintf(&b, ", viewport %dx%d", v.Width, v.Height)
		}
		b.WriteString(")\n")
	}
	if len(req.Criteria) > 0 {
		if data, err := json.MarshalIndent(req.Criteria, "", "  "); err == nil {
			b.WriteString("\nThe criteria exactly as the verifier runs them:\n\n```json\n")
			b.Write(data)
			b.WriteString("\n```\n")
		}
	}
	if len(req.TestHooks) > 0 {
		b.WriteString("\n## Test hooks the change must provide\n\n")
		for _, h := range req.TestHooks {
			fmt.Fprintf(&b, "- `%s`: %s\n", h.Selector, h.Description)
		}
	}
	if len(req.Feedback) > 0 {
		b.WriteString("\n## The previous attempt was not satisfied\n\nFix these failures; every criterion is checked again:\n\n")
		for _, r := range req.Feedback {
			b.WriteString("- ")
			if r.Criterion != "" {
				fmt.Fprintf(&b, "criterion `%s`", r.Criterion)
				if r.Check != "" {
					fmt.Fprintf(&b, " (%s)", r.Check)
				}
				b.WriteString(": ")
			}
			b.WriteString(r.Message)
			if r.Observed != nil || r.Expected != nil {
				fmt.Fprintf(&b, " [observed %s, expected %s]", jsonText(r.Observed), jsonText(r.Expected))
			}
			b.WriteString("\n")
		}
		if len(req.FailedElements) > 0 {
			b.WriteString("\nThe elements behind those failures, as the verifier found them:\n\n")
			for _, e := range req.FailedElements {
				fmt.Fprintf(&b, "- criterion `%s` (%s): `%s`", e.Criterion, e.Check, e.Selector)
				if e.Width > 0 {
					fmt.Fprintf(&b, ", %g px wide, right edge at %g px", e.Width, e.Right)
				}
				b.WriteString("\n")
			}
		}
	}
	return b.String()
}

func jsonText(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}
