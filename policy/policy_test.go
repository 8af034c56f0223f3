package policy_test

import (
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/policy"
	"github.com/signoff/signoff/policy/policytest"
)

const implSHA = "2222222222222222222222222222222222222222"

var (
	verifierKey = policytest.VerifierKey
	otherKey    = ed25519.NewKeyFromSeed([]byte("signoff-policy-test-mallory-key!"))
)

// scenario is one Decide call: a contract, what the workflow knows, and the evidence.
type scenario struct {
	c   contracts.Contract
	exp policy.Expectation
	ev  *contracts.Evidence
}

func loadW1(t *testing.T) contracts.Contract {
	t.Helper()
	return loadContract(t, "../fixtures/runs/W1/contract.json")
}

func loadContract(t *testing.T, path string) contracts.Contract {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := contracts.Load(b, contracts.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return *c
}

// satisfied builds a signed, complete, passing case for W1.
func satisfied(t *testing.T) scenario {
	t.Helper()
	c := loadW1(t)
	hash, err := contracts.Hash(c)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := policytest.Evidence(c, implSHA, policytest.Options{Attempt: 1})
	if err != nil {
		t.Fatal(err)
	}
	var chain contracts.Chain
	for _, typ := range []string{"quoted", "approved", "payment_authorized", "attempt_started", "verified"} {
		if _, err := chain.Append(typ, "2026-11-29T10:00:00Z", map[string]string{"hash": hash}); err != nil {
			t.Fatal(err)
		}
	}
	exp := policy.Expectation{
		ContractHash: hash, ImplementationSHA: implSHA, VerifierPublicKey: policytest.VerifierPublicKey(),
		VerifierDigest: c.Verifier.Digest, Build: contracts.BuildResult{Passed: true, Steps: []contracts.BuildStep{{Name: "build", Passed: true}}},
		Gate: contracts.GateResult{Source: "page-errors"}, Timeline: chain.Events,
	}
	return scenario{c: c, exp: exp, ev: ev}
}

func sign(t *testing.T, ev *contracts.Evidence, key ed25519.PrivateKey) {
	t.Helper()
	if err := ev.Sign(key); err != nil {
		t.Fatal(err)
	}
}

func result(s scenario, id string) *contracts.CriterionResult {
	for i := range s.ev.Results {
		if s.ev.Results[i].CriterionID == id {
			return &s.ev.Results[i]
		}
	}
	panic("no result " + id)
}

func codes(d policy.Decision) []string {
	var out []string
	for _, r := range d.Reasons {
		out = append(out, r.Code)
	}
	return out
}

func hasCode(d policy.Decision, code string) bool {
	for _, r := range d.Reasons {
		if r.Code == code {
			return true
		}
	}
	return false
}

func TestSatisfiedBaseline(t *testing.T) {
	s := satisfied(t)
	d := policy.Decide(s.c, s.exp, s.ev)
	if d.Verdict != contracts.Satisfied {
		t.Fatalf("baseline: %s %v", d.Verdict, d.Reasons)
	}
}

// corruption is one seeded change to a satisfied case, and where the rules must land it.
type corruption struct {
	name    string
	apply   func(t *testing.T, s *scenario)
	verdict string
	code    string
}

// resign re-signs with the verifier's key: the corruption is then one the verifier itself
// made (a buggy or lying verifier), not a tampering in transit.
func resign(t *testing.T, s *scenario) { sign(t, s.ev, verifierKey) }

var corruptions = []corruption{
	{"runtime SHA wrong", func(t *testing.T, s *scenario) {
		s.ev.RuntimeSHA = "3333333333333333333333333333333333333333"
		resign(t, s)
	}, contracts.VerificationError, policy.CodeRuntimeSHA},
	{"runtime SHA missing", func(t *testing.T, s *scenario) { s.ev.RuntimeSHA = ""; resign(t, s) }, contracts.VerificationError, policy.CodeRuntimeSHAMissing},
	{"runtime SHA is the base commit (stale build)", func(t *testing.T, s *scenario) {
		s.ev.RuntimeSHA = "1111111111111111111111111111111111111111"
		resign(t, s)
	}, contracts.VerificationError, policy.CodeRuntimeSHA},
	{"scrollWidth one pixel over, reported pass", func(t *testing.T, s *scenario) {
		result(*s, "mobile-no-overflow").Observed["390x844/scroll_width"] = 391.0
		resign(t, s)
	}, contracts.VerificationError, policy.CodeStatusMismatch},
	{"visible text reported pass but observed false", func(t *testing.T, s *scenario) {
		result(*s, "mobile-cards").Observed["390x844/1.text.2.visible"] = false
		resign(t, s)
	}, contracts.VerificationError, policy.CodeStatusMismatch},
	{"a failure reported as fail although the values pass", func(t *testing.T, s *scenario) {
		result(*s, "desktop-table").Status = contracts.StatusFail
		resign(t, s)
	}, contracts.VerificationError, policy.CodeStatusMismatch},
	{"artifact digest missing from the evidence", func(t *testing.T, s *scenario) {
		s.ev.Artifacts = s.ev.Artifacts[1:]
		resign(t, s)
	}, contracts.VerificationError, policy.CodeArtifactUnlisted},
	{"artifact does not match its digest in the proof store", func(t *testing.T, s *scenario) {
		s.exp.ArtifactProblems = []string{"trace-loads-mobile.zip: sha256 differs"}
	}, contracts.VerificationError, policy.CodeArtifactDigest},
	{"signature by another key", func(t *testing.T, s *scenario) { sign(t, s.ev, otherKey) }, contracts.VerificationError, policy.CodeSignature},
	{"signature missing", func(t *testing.T, s *scenario) { s.ev.Signature = "" }, contracts.VerificationError, policy.CodeSignature},
	{"observed value edited after signing", func(t *testing.T, s *scenario) {
		result(*s, "mobile-no-overflow").Observed["390x844/scroll_width"] = 380.0
	}, contracts.VerificationError, policy.CodeSignature},
	{"evidence for another contract hash", func(t *testing.T, s *scenario) {
		s.ev.ContractHash = strings.Repeat("ab", 32)
		resign(t, s)
	}, contracts.VerificationError, policy.CodeContractHash},
	{"contract terms changed after approval", func(t *testing.T, s *scenario) { s.c.Price.Amount = 1 }, contracts.VerificationError, policy.CodeContractHash},
	{"another verifier digest", func(t *testing.T, s *scenario) {
		s.ev.Verifier.Digest = strings.Repeat("cd", 32)
		resign(t, s)
	}, contracts.VerificationError, policy.CodeVerifierDigest},
	{"verifier told another expected SHA", func(t *testing.T, s *scenario) {
		s.ev.ExpectedSHA = "4444444444444444444444444444444444444444"
		resign(t, s)
	}, contracts.VerificationError, policy.CodeExpectedSHA},
	{"evidence of a base check's lazy variant, signed by the verifier", func(t *testing.T, s *scenario) {
		s.ev.Variant = "hooks-on-existing@0123456789abcdef"
		resign(t, s)
	}, contracts.VerificationError, policy.CodeVariant},
	{"dropped criterion result", func(t *testing.T, s *scenario) {
		s.ev.Results = s.ev.Results[:len(s.ev.Results)-1]
		resign(t, s)
	}, contracts.VerificationError, policy.CodeResultMissing},
	{"duplicated criterion result", func(t *testing.T, s *scenario) {
		s.ev.Results = append(s.ev.Results, s.ev.Results[0])
		resign(t, s)
	}, contracts.VerificationError, policy.CodeResultDuplicate},
	{"result for a criterion not in the contract", func(t *testing.T, s *scenario) {
		extra := s.ev.Results[0]
		extra.CriterionID = "looks-good"
		s.ev.Results = append(s.ev.Results, extra)
		resign(t, s)
	}, contracts.VerificationError, policy.CodeResultUnknown},
	{"reordered chain", func(t *testing.T, s *scenario) {
		tl := append([]contracts.Event(nil), s.exp.Timeline...)
		tl[1], tl[2] = tl[2], tl[1]
		s.exp.Timeline = tl
	}, contracts.VerificationError, policy.CodeTimeline},
	{"schema-invalid evidence", func(t *testing.T, s *scenario) {
		result(*s, "loads-mobile").Status = "probably"
		resign(t, s)
	}, contracts.VerificationError, policy.CodeSchema},
	{"observed value missing", func(t *testing.T, s *scenario) {
		delete(result(*s, "loads-desktop").Observed, "1440x1000/status")
		resign(t, s)
	}, contracts.VerificationError, policy.CodeObservedMissing},
	{"observed value of the wrong type", func(t *testing.T, s *scenario) {
		result(*s, "loads-desktop").Observed["1440x1000/status"] = "200"
		resign(t, s)
	}, contracts.VerificationError, policy.CodeObservedMissing},
	{"required trace missing", func(t *testing.T, s *scenario) {
		r := result(*s, "mobile-cards")
		r.Artifacts = r.Artifacts[:1]
		resign(t, s)
	}, contracts.VerificationError, policy.CodeArtifactMissing},
	{"criterion timed out", func(t *testing.T, s *scenario) {
		r := result(*s, "desktop-table")
		r.Status, r.Error = contracts.StatusTimeout, "30000 ms elapsed"
		resign(t, s)
	}, contracts.VerificationError, policy.CodeCriterionErrored},
	{"honest overflow failure", func(t *testing.T, s *scenario) {
		r := result(*s, "mobile-no-overflow")
		r.Observed["390x844/scroll_width"] = 927.0
		r.Status = contracts.StatusFail
		resign(t, s)
	}, contracts.NotSatisfied, policy.CodeCriterionFailed},
	{"page error during verification", func(t *testing.T, s *scenario) {
		result(*s, "loads-desktop").PageErrors = []string{"TypeError: x is undefined"}
		resign(t, s)
	}, contracts.NotSatisfied, policy.CodeRuntimeErrors},
	{"runtime gate reports errors", func(t *testing.T, s *scenario) {
		s.exp.Gate = contracts.GateResult{Source: "sentry", Errors: []string{"ReferenceError in /watchlist"}}
	}, contracts.NotSatisfied, policy.CodeRuntimeErrors},
	{"build failed", func(t *testing.T, s *scenario) {
		s.exp.Build = contracts.BuildResult{Passed: false, Steps: []contracts.BuildStep{{Name: "lint", Passed: false}}}
	}, contracts.NotSatisfied, policy.CodeBuildFailed},
	{"no evidence at all", func(t *testing.T, s *scenario) { s.ev = nil }, contracts.VerificationError, policy.CodeNoEvidence},
	{"verifier key swapped in the expectation", func(t *testing.T, s *scenario) {
		s.exp.VerifierPublicKey = otherKey.Public().(ed25519.PublicKey)
	}, contracts.VerificationError, policy.CodeSignature},
}

// TestCorruptionSelfTest is a mutation suite over the verdict: each seeded corruption of a
// satisfied case must leave satisfied and land where the rules say.
func TestCorruptionSelfTest(t *testing.T) {
	caught := 0
	for _, c := range corruptions {
		s := satisfied(t)
		c.apply(t, &s)
		d := policy.Decide(s.c, s.exp, s.ev)
		switch {
		case d.Verdict == contracts.Satisfied:
			t.Errorf("%s: still satisfied", c.name)
		case d.Verdict != c.verdict || !hasCode(d, c.code):
			t.Errorf("%s: %s %v, want %s with %s", c.name, d.Verdict, codes(d), c.verdict, c.code)
		default:
			caught++
		}
	}
	if len(corruptions) < 15 {
		t.Fatalf("only %d corruptions", len(corruptions))
	}
	fmt.Printf("policy corruption self-test: %d corruptions, %d caught\n", len(corruptions), caught)
}

func TestFailureMessageNamesObservedValues(t *testing.T) {
	s := satisfied(t)
	r := result(s, "mobile-no-overflow")
	r.Observed["390x844/scroll_width"] = 927.0
	r.Status = contracts.StatusFail
	resign(t, &s)
	d := policy.Decide(s.c, s.exp, s.ev)
	if d.Verdict != contracts.NotSatisfied {
		t.Fatalf("%s %v", d.Verdict, d.Reasons)
	}
	msg := d.Reasons[0].Message
	if !strings.Contains(msg, "criterion 3") || !strings.Contains(msg, "scrollWidth = 927, innerWidth = 390") {
		t.Fatalf("message %q does not name the observed values", msg)
	}
	if got := d.FailedCriteria(); len(got) != 1 || got[0] != "mobile-no-overflow" {
		t.Fatalf("failed criteria %v", got)
	}
	if d.Reasons[0].Observed != 927.0 || d.Reasons[0].Expected != 390.0 {
		t.Fatalf("reason values %v %v", d.Reasons[0].Observed, d.Reasons[0].Expected)
	}
}

// TestRuleOrder pins every ordering between rules: when two rules apply, the earlier decides.
func TestRuleOrder(t *testing.T) {
	type change func(t *testing.T, s *scenario)
	integrity := func(t *testing.T, s *scenario) { s.ev.RuntimeSHA = "" }
	build := func(t *testing.T, s *scenario) { s.exp.Build = contracts.BuildResult{Passed: false} }
	failed := func(t *testing.T, s *scenario) {
		r := result(*s, "mobile-no-overflow")
		r.Observed["390x844/scroll_width"] = 927.0
		r.Status = contracts.StatusFail
	}
	errored := func(t *testing.T, s *scenario) {
		r := result(*s, "desktop-table")
		r.Status, r.Error = contracts.StatusError, "selector timed out"
	}
	gate := func(t *testing.T, s *scenario) {
		s.exp.Gate = contracts.GateResult{Source: "sentry", Errors: []string{"boom"}}
	}
	rules := []struct {
		rule    int
		f       change
		verdict string
	}{
		{policy.RuleIntegrity, integrity, contracts.VerificationError},
		{policy.RuleBuild, build, contracts.NotSatisfied},
		{policy.RuleCriteria, failed, contracts.NotSatisfied},
		{policy.RuleIncomplete, errored, contracts.VerificationError},
		{policy.RuleRuntimeGate, gate, contracts.NotSatisfied},
	}
	for i, a := range rules {
		for _, b := range rules[i+1:] {
			s := satisfied(t)
			a.f(t, &s)
			b.f(t, &s)
			resign(t, &s)
			d := policy.Decide(s.c, s.exp, s.ev)
			if d.Verdict != a.verdict || len(d.Reasons) == 0 || d.Reasons[0].Rule != a.rule {
				t.Errorf("rules %d and %d together: %s %v, want rule %d (%s)", a.rule, b.rule, d.Verdict, d.Reasons, a.rule, a.verdict)
			}
		}
		// Alone, each rule decides by itself.
		s := satisfied(t)
		a.f(t, &s)
		resign(t, &s)
		if d := policy.Decide(s.c, s.exp, s.ev); d.Verdict != a.verdict || d.Reasons[0].Rule != a.rule {
			t.Errorf("rule %d alone: %s %v", a.rule, d.Verdict, d.Reasons)
		}
	}
}

func TestBuildFailedWithoutEvidence(t *testing.T) {
	s := satisfied(t)
	s.exp.Build = contracts.BuildResult{Passed: false, Steps: []contracts.BuildStep{{Name: "build", Passed: false}}}
	d := policy.Decide(s.c, s.exp, nil)
	if d.Verdict != contracts.NotSatisfied || !hasCode(d, policy.CodeBuildFailed) {
		t.Fatalf("%s %v", d.Verdict, d.Reasons)
	}
}

// TestDecideIsDeterministic runs the same inputs many times: workflow code depends on it.
func TestDecideIsDeterministic(t *testing.T) {
	s := satisfied(t)
	r := result(s, "mobile-no-overflow")
	r.Observed["390x844/scroll_width"] = 927.0
	r.Status = contracts.StatusFail
	r2 := result(s, "mobile-cards")
	r2.Observed["390x844/0.count"] = 1.0
	r2.Status = contracts.StatusFail
	resign(t, &s)
	first, _ := json.Marshal(policy.Decide(s.c, s.exp, s.ev))
	for i := 0; i < 50; i++ {
		again, _ := json.Marshal(policy.Decide(s.c, s.exp, s.ev))
		if string(again) != string(first) {
			t.Fatalf("run %d differs:\n%s\n%s", i, first, again)
		}
	}
}

func TestMeasureAndHTTPChecks(t *testing.T) {
	cases := []struct {
		a        contracts.Assertion
		observed map[string]any
		pass     bool
	}{
		{contracts.Assertion{Kind: contracts.KindMeasure, Expression: "document.title", Operator: "contains", Expected: json.RawMessage(`"Watch"`)},
			map[string]any{"390x844/value": "Watchlist"}, true},
		{contracts.Assertion{Kind: contracts.KindMeasure, Expression: "x", Operator: ">", Expected: json.RawMessage(`3`)},
			map[string]any{"390x844/value": 3.0}, false},
		{contracts.Assertion{Kind: contracts.KindMeasure, Expression: "a", Operator: "<=", ExpectedFrom: "b"},
			map[string]any{"390x844/value": 3.0, "390x844/expected_value": 3.0}, true},
		{contracts.Assertion{Kind: contracts.KindInViewport, Selector: "#cta"},
			map[string]any{"390x844/count": 1.0, "390x844/left": 0.0, "390x844/top": 10.0, "390x844/right": 391.0, "390x844/inner_width": 390.0, "390x844/bottom": 50.0, "390x844/inner_height": 844.0}, false},
		{contracts.Assertion{Kind: contracts.KindElementPresent, Selector: "#x", State: "attached"}, map[string]any{"390x844/count": 0.0}, false},
		{contracts.Assertion{Kind: contracts.KindNoConsoleErrors}, map[string]any{"390x844/console_errors": 0.0}, true},
	}
	for i, c := range cases {
		c.observed["390x844/"+contracts.ObsLeftOrigin] = "" // the page stayed on the preview
		cr := contracts.Criterion{ID: "m", Viewport: &contracts.Viewport{Width: 390, Height: 844}, Assert: c.a}
		checks, err := contracts.ChecksFor(cr)
		if err != nil {
			t.Fatal(err)
		}
		all := true
		for _, ch := range checks {
			want := ch.Expected
			if ch.ExpectedKey != "" {
				want = c.observed[ch.ExpectedKey]
			}
			ok, err := contracts.Compare(ch.Op, c.observed[ch.Key], want)
			if err != nil {
				t.Fatalf("case %d: %v", i, err)
			}
			all = all && ok
		}
		if all != c.pass {
			t.Errorf("case %d (%s): pass=%v, want %v", i, c.a.Kind, all, c.pass)
		}
	}
	httpCr := contracts.Criterion{ID: "h", Assert: contracts.Assertion{Kind: contracts.KindHTTP, Status: 200,
		JSON: []contracts.JSONCheck{{Pointer: "/quotes/0/symbol", Operator: "==", Expected: json.RawMessage(`"NVDA"`)}}}}
	checks, err := contracts.ChecksFor(httpCr)
	if err != nil || len(checks) != 2 || checks[0].Key != "status" || checks[1].Key != "json.0.value" {
		t.Fatalf("http checks %+v %v", checks, err)
	}
}

// OnlyTimedOut is a verification_error that time alone made: any other reason, or another
// verdict, is not.
func TestOnlyTimedOut(t *testing.T) {
	late := contracts.Reason{Code: policy.CodeCriterionErrored, Criterion: "a", Message: "criterion 1 (a): the check could not run (timeout): 390x844: the page did not settle"}
	broke := contracts.Reason{Code: policy.CodeCriterionErrored, Criterion: "b", Message: "criterion 2 (b): the check could not run (error): no such element"}
	for _, tc := range []struct {
		d    policy.Decision
		want bool
	}{
		{policy.Decision{Verdict: contracts.VerificationError, Reasons: []contracts.Reason{late}}, true},
		{policy.Decision{Verdict: contracts.VerificationError, Reasons: []contracts.Reason{late, broke}}, false},
		{policy.Decision{Verdict: contracts.VerificationError}, false},
		{policy.Decision{Verdict: contracts.NotSatisfied, Reasons: []contracts.Reason{late}}, false},
	} {
		if got := tc.d.OnlyTimedOut(); got != tc.want {
			t.Errorf("%+v: OnlyTimedOut %v, want %v", tc.d, got, tc.want)
		}
	}
}
