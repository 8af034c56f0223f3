package policy_test

import (
	"strings"
	"testing"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/policy"
	"github.com/signoff/signoff/policy/policytest"
)

// h1 is a satisfied case of the H1 contract, whose http criteria check JSON members.
func h1(t *testing.T) scenario {
	t.Helper()
	c := loadContract(t, "../e2e/testdata/runs/H1/contract.json")
	hash, _ := contracts.Hash(c)
	ev, err := policytest.Evidence(c, implSHA, policytest.Options{Attempt: 1})
	if err != nil {
		t.Fatal(err)
	}
	exp := policy.Expectation{ContractHash: hash, ImplementationSHA: implSHA, VerifierPublicKey: policytest.VerifierPublicKey(),
		VerifierDigest: c.Verifier.Digest, Build: contracts.BuildResult{Passed: true, Steps: []contracts.BuildStep{{Name: "build", Passed: true}}},
		Gate: contracts.GateResult{Source: "page-errors"}}
	return scenario{c: c, exp: exp, ev: ev}
}

// A JSON member the response lacks is a failed criterion: the implementation is repaired,
// not re-verified. A value that is there but cannot be compared stays unmeasured, and the
// earlier verifier's report of an absent member (status error) is judged as it always was,
// so recorded histories replay to the same verdicts.
func TestAbsentJSONMemberFails(t *testing.T) {
	if d := policy.Decide(h1(t).c, h1(t).exp, h1(t).ev); d.Verdict != contracts.Satisfied {
		t.Fatalf("baseline: %s %v", d.Verdict, d.Reasons)
	}
	cases := []struct {
		name, status, verdict, code, msg string
		observed                         map[string]any
	}{
		{"member absent", contracts.StatusFail, contracts.NotSatisfied, policy.CodeCriterionFailed, `lacks it: json pointer "/version": no member "version"`,
			map[string]any{"json.0.value": nil, "json.0.missing": `json pointer "/version": no member "version"`}},
		{"body not JSON", contracts.StatusFail, contracts.NotSatisfied, policy.CodeCriterionFailed, "lacks it: response is not JSON",
			map[string]any{"json.0.value": nil, "json_error": "response is not JSON: invalid character '<'"}},
		{"null that cannot be compared", contracts.StatusFail, contracts.VerificationError, policy.CodeObservedMissing, "unusable",
			map[string]any{"json.0.value": nil}},
		{"absent, as the earlier verifier reported it", contracts.StatusError, contracts.VerificationError, policy.CodeCriterionErrored, "could not run",
			map[string]any{"json.0.value": nil, "json.0.missing": `json pointer "/version": no member "version"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := h1(t)
			r := result(s, "status-version")
			for k, v := range tc.observed {
				r.Observed[k] = v
			}
			r.Status = tc.status
			if tc.status == contracts.StatusError {
				r.Error = "observed value for body/version is unusable"
			}
			resign(t, &s)
			d := policy.Decide(s.c, s.exp, s.ev)
			if d.Verdict != tc.verdict || !hasCode(d, tc.code) {
				t.Fatalf("verdict %s %v, want %s with %s", d.Verdict, codes(d), tc.verdict, tc.code)
			}
			found := false
			for _, reason := range d.Reasons {
				found = found || strings.Contains(reason.Message, tc.msg)
			}
			if !found {
				t.Errorf("no reason says %q: %+v", tc.msg, d.Reasons)
			}
		})
	}
}
