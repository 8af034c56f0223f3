package policy_test

import (
	"testing"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/policy"
	"github.com/signoff/signoff/policy/policytest"
)

// A check the base commit already fails is neither charged to the executor nor excused
// beyond what the base had: the policy reads the contract's record, not the preview's word.
func TestPreexistingCheckFailures(t *testing.T) {
	for _, tc := range []struct {
		name     string
		recorded []contracts.PreexistingFailure
		step     contracts.BuildStep
		want     string
	}{
		{"as many errors as the base", []contracts.PreexistingFailure{{Step: "lint", Errors: 2}},
			contracts.BuildStep{Name: "lint", Errors: 2, Preexisting: true}, contracts.Satisfied},
		{"fewer errors than the base", []contracts.PreexistingFailure{{Step: "lint", Errors: 2}},
			contracts.BuildStep{Name: "lint", Errors: 1, Preexisting: true}, contracts.Satisfied},
		{"more errors than the base", []contracts.PreexistingFailure{{Step: "lint", Errors: 2}},
			contracts.BuildStep{Name: "lint", Errors: 3, Preexisting: true}, contracts.NotSatisfied},
		{"uncounted against a counted base", []contracts.PreexistingFailure{{Step: "lint", Errors: 2}},
			contracts.BuildStep{Name: "lint", Preexisting: true}, contracts.NotSatisfied},
		{"an uncounted base", []contracts.PreexistingFailure{{Step: "test"}},
			contracts.BuildStep{Name: "test", Errors: 7, Preexisting: true}, contracts.Satisfied},
		{"another step than recorded", []contracts.PreexistingFailure{{Step: "lint"}},
			contracts.BuildStep{Name: "test", Preexisting: true}, contracts.NotSatisfied},
		{"nothing recorded", nil,
			contracts.BuildStep{Name: "lint", Errors: 1, Preexisting: true}, contracts.NotSatisfied},
		{"recorded, but the preview did not go on past it", []contracts.PreexistingFailure{{Step: "lint"}},
			contracts.BuildStep{Name: "lint", Errors: 1}, contracts.NotSatisfied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := satisfied(t)
			s.c.Stack.Preexisting = tc.recorded
			if err := contracts.Validate(s.c, contracts.LoadOptions{}); err != nil {
				t.Fatal(err)
			}
			hash, err := contracts.Hash(s.c)
			if err != nil {
				t.Fatal(err)
			}
			ev, err := policytest.Evidence(s.c, implSHA, policytest.Options{Attempt: 1})
			if err != nil {
				t.Fatal(err)
			}
			s.exp.ContractHash = hash
			s.exp.Build.Steps = append(s.exp.Build.Steps, tc.step)
			d := policy.Decide(s.c, s.exp, ev)
			if d.Verdict != tc.want {
				t.Fatalf("%s, want %s: %v", d.Verdict, tc.want, d.Reasons)
			}
			if tc.want == contracts.NotSatisfied && (!hasCode(d, policy.CodeBuildFailed) || d.Reasons[0].Message != "the build failed at: "+tc.step.Name) {
				t.Errorf("reasons %v, want the build failed at %s", d.Reasons, tc.step.Name)
			}
			if d2 := policy.Decide(s.c, s.exp, nil); tc.want == contracts.NotSatisfied && d2.Verdict != contracts.NotSatisfied {
				t.Errorf("without evidence: %s, want not_satisfied", d2.Verdict)
			}
		})
	}
	// The record is the contract's: a step named twice is refused.
	c := satisfied(t).c
	c.Stack.Preexisting = []contracts.PreexistingFailure{{Step: "lint"}, {Step: "lint", Errors: 3}}
	if err := contracts.Validate(c, contracts.LoadOptions{}); err == nil {
		t.Error("a step recorded twice was accepted")
	}
	c.Stack.Preexisting = []contracts.PreexistingFailure{{Step: "build"}}
	if err := contracts.Validate(c, contracts.LoadOptions{}); err == nil {
		t.Error("the build step was accepted as pre-existing")
	}
}
