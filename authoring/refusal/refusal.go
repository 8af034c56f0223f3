package refusal

// InputError is a malformed argument: nothing was read or changed.
type InputError struct {
	Field, Reason string
}

func (e *InputError) Error() string { return e.Field + ": " + e.Reason }

// Refusal codes: why a goal cannot become a contract.
const (
	Subjective  = "subjective"   // nothing in it can be checked objectively
	OutOfScope  = "out_of_scope" // other repositories, infrastructure, rewrites
	TooBroad    = "too_broad"    // the whole app, every page
	NoRoute     = "no_route"     // no page or endpoint of the app could be identified
	NoChange    = "no_change"    // no checkable change was asked for
	Unsupported = "unsupported"  // the repository's framework is not supported
	Auth        = "auth"         // the page needs a sign-in the verifier cannot perform
	Unspecified = "unspecified"  // a backend change without the values to check
	NoEffect    = "no_effect"    // a behaviour whose effect cannot be stated objectively
	NoTarget    = "no_target"    // what the goal names cannot be found or described on the page
)

// Error says why a goal was not turned into a contract, and what would make it one.
type Error struct {
	Code   string `json:"code"`
	Reason string `json:"reason"`
	Hint   string `json:"hint,omitempty"`
}

func (e *Error) Error() string {
	msg := "refused (" + e.Code + "): " + e.Reason
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
}

// New is the refusal with the code (one of the constants above), the reason and a hint.
func New(code, reason, hint string) error {
	return &Error{Code: code, Reason: reason, Hint: hint}
}
