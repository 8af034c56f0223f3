package authoring

import (
	"fmt"
	"regexp"

	"github.com/signoff/signoff/contracts"
)

// goalAbout tells a goal that is about a repository check: then its failure on the base is
// what the change must fix, not something to record and carry.
var goalAbout = map[string]*regexp.Regexp{
	contracts.StepLint: regexp.MustCompile(`(?i)\b(lint|linter|linting|eslint|biome)\b`),
	contracts.StepTest: regexp.MustCompile(`(?i)\b(tests?|testing|test suite|jest|vitest|mocha|specs?)\b`),
}

// RecordFailingChecks puts the checks the base commit fails into the contract's stack as
// pre-existing, unless the goal is about them: a red lint from an unpinned plugin should not
// refuse a goal about layout, and the executor is judged by the same steps, failing them no
// worse than the base. The notes say what was recorded, for the quote.
func RecordFailingChecks(c contracts.Contract, goal string, failing []contracts.PreexistingFailure) (contracts.Contract, []string) {
	var notes []string
	c.Stack.Preexisting = nil
	for _, f := range failing {
		if re := goalAbout[f.Step]; re != nil && re.MatchString(goal) {
			notes = append(notes, fmt.Sprintf("%s; the goal is about it, so the change must make %s pass", f, f.Step))
			continue
		}
		c.Stack.Preexisting = append(c.Stack.Preexisting, f)
		notes = append(notes, fmt.Sprintf("%s. Recorded as pre-existing: not part of the goal, so it neither stops the quote nor counts against the change, which must fail %s no worse", f, f.Step))
	}
	return c, notes
}
