package authoring

import (
	"errors"
	"fmt"
	"time"
)

// InputError is a malformed argument: nothing was read or changed.
type InputError struct {
	Field, Reason string
}

func (e *InputError) Error() string { return e.Field + ": " + e.Reason }

// Admission refusal codes.
const (
	AdmitNotAllowed  = "not_allowed"
	AdmitRateLimited = "rate_limited"
)

// AdmissionError refuses a request before anything of the repository is read.
type AdmissionError struct {
	Code       string        `json:"code"`
	Repo       string        `json:"repo"`
	Requester  string        `json:"requester,omitempty"`
	RetryAfter time.Duration `json:"retry_after_ns,omitempty"`
	Reason     string        `json:"reason"`
}

func (e *AdmissionError) Error() string { return "not admitted: " + e.Reason }

// Refusal codes: why a goal cannot become a contract.
const (
	RefuseSubjective  = "subjective"   // nothing in it can be checked objectively
	RefuseOutOfScope  = "out_of_scope" // other repositories, infrastructure, rewrites
	RefuseTooBroad    = "too_broad"    // the whole app, every page
	RefuseNoRoute     = "no_route"     // no page or endpoint of the app could be identified
	RefuseNoChange    = "no_change"    // no checkable change was asked for
	RefuseUnsupported = "unsupported"  // the repository's framework is not supported
	RefuseAuth        = "auth"         // the page needs a sign-in the verifier cannot perform
	RefuseUnspecified = "unspecified"  // a backend change without the values to check
)

// RefusalError says why a goal was not turned into a contract, and what would make it one.
type RefusalError struct {
	Code   string `json:"code"`
	Reason string `json:"reason"`
	Hint   string `json:"hint,omitempty"`
}

func (e *RefusalError) Error() string {
	msg := "refused (" + e.Code + "): " + e.Reason
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
}

func refuse(code, reason, hint string) error {
	return &RefusalError{Code: code, Reason: reason, Hint: hint}
}

// Discrimination failure codes.
const (
	DiscVacuous      = "vacuous"      // the base commit already satisfies every criterion
	DiscInconclusive = "inconclusive" // no criterion could be shown to fail on the base
)

// DiscriminationError means the contract is not offered: it cannot tell a change from no change.
type DiscriminationError struct {
	Code   string `json:"code"`
	Reason string `json:"reason"`
}

func (e *DiscriminationError) Error() string {
	return "contract not offered (" + e.Code + "): " + e.Reason
}

// BudgetError means the price for the goal exceeds the budget. The bar is never lowered to
// fit: the scope must shrink or the budget grow.
type BudgetError struct {
	Price  int64  `json:"price"`
	Budget int64  `json:"budget"`
	Reason string `json:"reason"`
}

func (e *BudgetError) Error() string { return e.Reason }

// IsRefusal reports whether err means "this request will not become a contract as asked"
// (refused goal, admission, budget, vacuous) rather than a failure to run.
func IsRefusal(err error) bool {
	var r *RefusalError
	var a *AdmissionError
	var b *BudgetError
	var d *DiscriminationError
	var i *InputError
	return errors.As(err, &r) || errors.As(err, &a) || errors.As(err, &b) || errors.As(err, &d) || errors.As(err, &i)
}

func money(amount int64, currency string) string {
	return fmt.Sprintf("%d.%02d %s", amount/100, amount%100, currency)
}
