package policy_test

import (
	"strings"
	"testing"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/policy"
)

// An authorization cancelled after a verdict names it; one cancelled before any verdict
// (the payment never authorized, the lock not taken) says so instead of "verdict ".
func TestCancelReason(t *testing.T) {
	for verdict, want := range map[string]string{
		contracts.NotSatisfied:      "verdict not_satisfied",
		contracts.VerificationError: "verdict verification_error",
		"":                          policy.CancelNoVerdict,
	} {
		if got := policy.CancelReason(verdict); got != want {
			t.Errorf("CancelReason(%q) = %q, want %q", verdict, got, want)
		}
	}
	if got := policy.CancelReason(""); strings.TrimSpace(got) == "verdict" || !strings.Contains(got, "no verdict") {
		t.Errorf("an empty verdict gives %q", got)
	}
	if got := policy.CancelledBy("alice"); !strings.HasPrefix(got, policy.CancelledByPrefix) || got != "cancelled by alice" {
		t.Errorf("CancelledBy = %q", got)
	}
}
