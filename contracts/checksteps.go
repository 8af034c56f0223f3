package contracts

import "fmt"

// The repository's own checks a preview runs after the build. Unlike install and build,
// without which there is no app to verify, one of these may already fail on the base commit
// for reasons the goal has nothing to do with (an unpinned lint plugin, a flaky test): the
// quote names such a failure, and the contract records it instead of refusing every goal.
const (
	StepLint = "lint"
	StepTest = "test"
)

// CheckSteps are the steps a contract may record as pre-existing failures.
var CheckSteps = []string{StepLint, StepTest}

// PreexistingFailure is a check step that fails on the base commit. Errors is how many
// errors its log counted there (CountErrors); 0 when the log does not count them, and then
// only that it fails is known. Cause is the line of the base's log that shows why.
type PreexistingFailure struct {
	Step   string `json:"step"`
	Errors int    `json:"errors,omitempty"`
	Cause  string `json:"cause,omitempty"`
}

// String says what fails, as a quote tells it.
func (p PreexistingFailure) String() string {
	s := p.Step + " fails on the base commit"
	if p.Errors > 0 {
		s += fmt.Sprintf(" (%d error%s)", p.Errors, plural(p.Errors))
	}
	if p.Cause != "" {
		s += ": " + p.Cause
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Tolerates reports whether a failed check step at a commit is within what the base
// commit already failed: the step is recorded as pre-existing, and when the base's errors
// were counted, the commit's count (0 when its log did not count them) is no higher. A
// count that could not be read against a counted base is not within: the executor is
// neither charged for the base's failure nor excused for one of its own.
func (s Stack) Tolerates(step string, errors int) bool {
	p := s.Recorded(step)
	switch {
	case p == nil:
		return false
	case p.Errors == 0:
		return true
	}
	return errors > 0 && errors <= p.Errors
}

// Recorded is the step's failure as the stack records it, or nil.
func (s Stack) Recorded(step string) *PreexistingFailure {
	for i := range s.Preexisting {
		if s.Preexisting[i].Step == step {
			return &s.Preexisting[i]
		}
	}
	return nil
}

// Preexisting are the failed check steps a base commit's build went on past, as a contract
// records them.
func (b BuildResult) Preexisting() []PreexistingFailure {
	var out []PreexistingFailure
	for _, s := range b.Steps {
		if !s.Passed && s.Preexisting {
			out = append(out, PreexistingFailure{Step: s.Name, Errors: s.Errors, Cause: s.Cause})
		}
	}
	return out
}
