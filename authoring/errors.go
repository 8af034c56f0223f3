package authoring

import (
	"errors"
	"time"

	"github.com/signoff/signoff/authoring/pricing"
	"github.com/signoff/signoff/authoring/refusal"
)

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

// Base check failure codes: why a contract is not offered.
const (
	BaseVacuous      = "vacuous"      // the base commit already satisfies every criterion
	BaseInconclusive = "inconclusive" // no criterion could be shown to fail on the base
	BaseTooFew       = "too_few"      // left without pre-existing failures, too few criteria remain
	BaseWeak         = "weak"         // a lazy variant of the base satisfies every criterion
	// BaseBusy: nothing failed on the base, and every criterion that could not be measured
	// timed out. It says nothing of the goal: the check is tried again (Author.BusyRetries),
	// and if it stays busy the requester is told to ask again, not that the goal is refused.
	BaseBusy = "busy"
)

// BaseCheckError means the contract is not offered: it cannot tell a change from no change.
type BaseCheckError struct {
	Code   string `json:"code"`
	Reason string `json:"reason"`
}

func (e *BaseCheckError) Error() string {
	return "contract not offered (" + e.Code + "): " + e.Reason
}

// IsRefusal reports whether err means "this request will not become a contract as asked"
// (refused goal, admission, budget, vacuous) rather than a failure to run.
func IsRefusal(err error) bool {
	var r *refusal.Error
	var a *AdmissionError
	var b *pricing.BudgetError
	var d *BaseCheckError
	var i *refusal.InputError
	return errors.As(err, &r) || errors.As(err, &a) || errors.As(err, &b) || errors.As(err, &d) || errors.As(err, &i)
}
