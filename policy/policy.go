// Package policy is the verdict: a pure, deterministic function from a contract, what the
// workflow knows independently, and the verifier's evidence to satisfied, not_satisfied or
// verification_error. It trusts nothing the verifier reports about pass or fail: it checks the
// signature itself and recomputes every criterion from the observed values. It runs inside
// workflow code, so it does no I/O, reads no clock and depends on no map order.
package policy

import (
	"crypto/ed25519"
	"fmt"
	"strings"

	"github.com/signoff/signoff/contracts"
)

// Rules, in the order they are applied.
const (
	RuleIntegrity   = 1
	RuleBuild       = 2
	RuleCriteria    = 3
	RuleIncomplete  = 4
	RuleRuntimeGate = 5
)

// Reason codes.
const (
	CodeNoEvidence        = "evidence_missing"
	CodeSchema            = "evidence_schema"
	CodeSignature         = "signature_invalid"
	CodeContractHash      = "contract_hash_mismatch"
	CodeContractID        = "contract_id_mismatch"
	CodeVerifierDigest    = "verifier_digest_mismatch"
	CodeRuntimeSHAMissing = "runtime_sha_missing"
	CodeRuntimeSHA        = "runtime_sha_mismatch"
	CodeExpectedSHA       = "expected_sha_mismatch"
	CodeVariant           = "evidence_of_variant"
	CodeArtifactDigest    = "artifact_digest"
	CodeArtifactUnlisted  = "artifact_unlisted"
	CodeResultMissing     = "result_missing"
	CodeResultDuplicate   = "result_duplicate"
	CodeResultUnknown     = "result_unknown"
	CodeStatusMismatch    = "reported_status_disagrees"
	CodeTimeline          = "timeline_broken"
	CodeBuildFailed       = "build_failed"
	CodeCriterionFailed   = "criterion_failed"
	CodeCriterionErrored  = "criterion_errored"
	CodeObservedMissing   = "observed_missing"
	CodeArtifactMissing   = "artifact_missing"
	CodeRuntimeErrors     = "runtime_errors"
)

// Reason codes the workflow records without calling Decide: they cannot be re-derived from
// the evidence, so an offline verifier accepts them only with the verdict they always carry.
const (
	CodeEmptyDiff        = "empty_diff"        // rule build, not_satisfied: the attempt changed nothing
	CodeCapabilityFailed = "capability_failed" // rule integrity, verification_error: an activity failed
	CodeNotConfigured    = "not_configured"    // rule integrity, verification_error: a capability is not set up
)

// Why an authorization is cancelled rather than captured (the payment_cancelled event's
// reason, and the text the requester reads).
const (
	CancelCaptureRefused = "capture refused"
	// CancelNoVerdict: the contract ended before any attempt was verified (the payment was
	// never authorized, or the repository lock could not be taken).
	CancelNoVerdict = "no verdict: nothing was verified"
)

// CancelReason is why the authorization of a contract that ended with verdict is cancelled.
func CancelReason(verdict string) string {
	if verdict == "" {
		return CancelNoVerdict
	}
	return "verdict " + verdict
}

// CancelledByPrefix starts the cancel reason of a contract someone cancelled; the payment
// adapter tells the provider the customer asked for it.
const CancelledByPrefix = "cancelled by "

// CancelledBy is the cancel reason of a contract someone cancelled.
func CancelledBy(by string) string { return CancelledByPrefix + by }

// Expectation is what the workflow knows without asking the verifier.
type Expectation struct {
	ContractHash      string            `json:"contract_hash"`
	ImplementationSHA string            `json:"implementation_sha"`
	VerifierPublicKey ed25519.PublicKey `json:"verifier_public_key"`
	VerifierDigest    string            `json:"verifier_digest"`
	Build             contracts.BuildResult
	// ArtifactProblems are digests that did not match the proof store, found by an activity
	// before Decide runs (Decide does no I/O).
	ArtifactProblems []string
	Gate             contracts.GateResult
	// Timeline is the workflow's hash chain so far; a broken chain is an integrity failure.
	Timeline []contracts.Event
}

// Decision is the verdict and every reason for it, in rule then contract order.
type Decision struct {
	Verdict string             `json:"verdict"`
	Reasons []contracts.Reason `json:"reasons"`
}

// FailedCriteria lists the criteria a repair must address, in contract order.
func (d Decision) FailedCriteria() []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range d.Reasons {
		if r.Code == CodeCriterionFailed && !seen[r.Criterion] {
			seen[r.Criterion] = true
			out = append(out, r.Criterion)
		}
	}
	return out
}

// OnlyTimedOut reports a verification_error whose every reason is a criterion that ran out of
// time: what a busy host does, not what the page is. The contract workflow verifies such a
// commit again (contractapi.DefaultReverifyLimit); tests of correct implementations do too.
func (d Decision) OnlyTimedOut() bool {
	if d.Verdict != contracts.VerificationError || len(d.Reasons) == 0 {
		return false
	}
	for _, r := range d.Reasons {
		if r.Code != CodeCriterionErrored || !strings.Contains(r.Message, "("+contracts.StatusTimeout+")") {
			return false
		}
	}
	return true
}

// Summary is the decision in one line, naming the first reason.
func (d Decision) Summary() string {
	if len(d.Reasons) == 0 {
		return d.Verdict
	}
	return d.Verdict + ": " + d.Reasons[0].Message
}

// Decide applies the rules in order; the first rule with reasons decides.
func Decide(c contracts.Contract, exp Expectation, ev *contracts.Evidence) Decision {
	if exp.Build.Passed && len(untolerated(c, exp.Build)) > 0 {
		// The preview went on past a failed step: only a check the contract records as
		// failing on the base, and no worse, is not the executor's to answer for.
		exp.Build.Passed = false
	}
	if ev == nil {
		if !exp.Build.Passed {
			return decision(contracts.NotSatisfied, buildReasons(c, exp.Build))
		}
		return decision(contracts.VerificationError, []contracts.Reason{{Rule: RuleIntegrity, Code: CodeNoEvidence,
			Message: "the verifier produced no evidence for a build that passed"}})
	}
	j := judge(c, exp, ev)
	switch {
	case len(j.integrity) > 0:
		return decision(contracts.VerificationError, j.integrity)
	case !exp.Build.Passed:
		return decision(contracts.NotSatisfied, buildReasons(c, exp.Build))
	case len(j.failed) > 0:
		return decision(contracts.NotSatisfied, j.failed)
	case len(j.incomplete) > 0:
		return decision(contracts.VerificationError, j.incomplete)
	case len(j.runtime) > 0:
		return decision(contracts.NotSatisfied, j.runtime)
	}
	return Decision{Verdict: contracts.Satisfied, Reasons: []contracts.Reason{}}
}

func decision(v string, rs []contracts.Reason) Decision { return Decision{Verdict: v, Reasons: rs} }

// untolerated are the failed steps of a build that the contract does not excuse.
func untolerated(c contracts.Contract, b contracts.BuildResult) []string {
	var out []string
	for _, s := range b.Steps {
		if !s.Passed && !(s.Preexisting && c.Stack.Tolerates(s.Name, s.Errors)) {
			out = append(out, s.Name)
		}
	}
	return out
}

func buildReasons(c contracts.Contract, b contracts.BuildResult) []contracts.Reason {
	failed := untolerated(c, b)
	msg := "the build failed"
	if len(failed) > 0 {
		msg = "the build failed at: " + strings.Join(failed, ", ")
	}
	return []contracts.Reason{{Rule: RuleBuild, Code: CodeBuildFailed, Message: msg}}
}

// judgement collects reasons per rule; Decide picks the first non-empty rule.
type judgement struct {
	integrity, failed, incomplete, runtime []contracts.Reason
}

func (j *judgement) add(rule int, code, criterion, format string, args ...any) *contracts.Reason {
	r := contracts.Reason{Rule: rule, Code: code, Criterion: criterion, Message: fmt.Sprintf(format, args...)}
	var list *[]contracts.Reason
	switch rule {
	case RuleIntegrity:
		list = &j.integrity
	case RuleCriteria:
		list = &j.failed
	case RuleIncomplete:
		list = &j.incomplete
	default:
		list = &j.runtime
	}
	*list = append(*list, r)
	return &(*list)[len(*list)-1]
}

func judge(c contracts.Contract, exp Expectation, ev *contracts.Evidence) *judgement {
	j := &judgement{}
	checkIntegrity(j, c, exp, ev)

	results := map[string][]int{}
	for i, r := range ev.Results {
		results[r.CriterionID] = append(results[r.CriterionID], i)
	}
	known := map[string]bool{}
	artifactKinds := map[string]string{}
	for _, a := range ev.Artifacts {
		artifactKinds[a.Name] = a.Kind
	}
	for n, cr := range c.Criteria {
		known[cr.ID] = true
		idx := results[cr.ID]
		switch len(idx) {
		case 0:
			j.add(RuleIntegrity, CodeResultMissing, cr.ID, "%s: the evidence has no result for this criterion", label(n, cr))
			continue
		case 1:
		default:
			j.add(RuleIntegrity, CodeResultDuplicate, cr.ID, "%s: the evidence has %d results for this criterion", label(n, cr), len(idx))
			continue
		}
		judgeCriterion(j, c, n, cr, ev.Results[idx[0]], artifactKinds, ev.Verifier.Version)
	}
	for _, r := range ev.Results {
		if !known[r.CriterionID] {
			j.add(RuleIntegrity, CodeResultUnknown, r.CriterionID, "the evidence has a result for %q, which is not in the contract", r.CriterionID)
		}
	}

	var pageErrors []string
	for _, r := range ev.Results {
		pageErrors = append(pageErrors, r.PageErrors...)
	}
	if len(pageErrors) > 0 {
		j.add(RuleRuntimeGate, CodeRuntimeErrors, "", "the app threw %d page error(s) during verification, first: %s", len(pageErrors), pageErrors[0])
	}
	if len(exp.Gate.Errors) > 0 {
		j.add(RuleRuntimeGate, CodeRuntimeErrors, "", "the runtime gate (%s) reported %d error(s), first: %s", exp.Gate.Source, len(exp.Gate.Errors), exp.Gate.Errors[0])
	}
	return j
}

func checkIntegrity(j *judgement, c contracts.Contract, exp Expectation, ev *contracts.Evidence) {
	if err := contracts.ValidateEvidence(*ev); err != nil {
		j.add(RuleIntegrity, CodeSchema, "", "the evidence is not valid against its schema: %v", oneLine(err))
	}
	if err := ev.VerifySignature(exp.VerifierPublicKey); err != nil {
		j.add(RuleIntegrity, CodeSignature, "", "the verifier signature does not verify with the verifier key: %v", err)
	}
	if h, err := contracts.Hash(c); err != nil || h != exp.ContractHash {
		j.add(RuleIntegrity, CodeContractHash, "", "the contract being judged is not the approved one (hash %s, approved %s)", shortOrNone(h), shortOrNone(exp.ContractHash))
	}
	if ev.ContractHash != exp.ContractHash {
		j.add(RuleIntegrity, CodeContractHash, "", "the evidence is for contract hash %s, not the approved %s", shortOrNone(ev.ContractHash), shortOrNone(exp.ContractHash))
	}
	if ev.Variant != "" {
		j.add(RuleIntegrity, CodeVariant, "", "the evidence measured Signoff's lazy variant %q of the base check, not the commit", ev.Variant)
	}
	if ev.ContractID != c.ContractID {
		j.add(RuleIntegrity, CodeContractID, "", "the evidence is for contract %q, not %q", ev.ContractID, c.ContractID)
	}
	if ev.Verifier.Digest != c.Verifier.Digest || ev.Verifier.Digest != exp.VerifierDigest {
		j.add(RuleIntegrity, CodeVerifierDigest, "", "verifier digest %s differs from the contract's %s: the contract was frozen against another verifier (probe or assertion semantics), so nothing was measured; quote it again to verify it under this one", shortOrNone(ev.Verifier.Digest), shortOrNone(c.Verifier.Digest))
	}
	switch {
	case ev.RuntimeSHA == "":
		j.add(RuleIntegrity, CodeRuntimeSHAMissing, "", "the preview did not report the commit it runs (/__verification)")
	case ev.RuntimeSHA != exp.ImplementationSHA:
		j.add(RuleIntegrity, CodeRuntimeSHA, "", "the preview runs commit %s, not the implementation commit %s", shortOrNone(ev.RuntimeSHA), shortOrNone(exp.ImplementationSHA))
	}
	if ev.ExpectedSHA != exp.ImplementationSHA {
		j.add(RuleIntegrity, CodeExpectedSHA, "", "the verifier was told to expect %s, not the implementation commit %s", shortOrNone(ev.ExpectedSHA), shortOrNone(exp.ImplementationSHA))
	}
	for _, p := range exp.ArtifactProblems {
		j.add(RuleIntegrity, CodeArtifactDigest, "", "artifact check: %s", p)
	}
	listed := map[string]bool{}
	for _, a := range ev.Artifacts {
		listed[a.Name] = true
	}
	for _, r := range ev.Results {
		for _, name := range r.Artifacts {
			if !listed[name] {
				j.add(RuleIntegrity, CodeArtifactUnlisted, r.CriterionID, "criterion %s names artifact %q, which the evidence does not list with a digest", r.CriterionID, name)
			}
		}
	}
	if len(exp.Timeline) > 0 {
		if _, err := contracts.VerifyChain(exp.Timeline); err != nil {
			j.add(RuleIntegrity, CodeTimeline, "", "the contract timeline is broken: %v", err)
		}
	}
}

func judgeCriterion(j *judgement, c contracts.Contract, n int, cr contracts.Criterion, r contracts.CriterionResult, artifactKinds map[string]string, verifierVersion string) {
	name := label(n, cr)
	if r.Status == contracts.StatusError || r.Status == contracts.StatusTimeout {
		msg := r.Error
		if msg == "" {
			msg = "no detail given"
		}
		j.add(RuleIncomplete, CodeCriterionErrored, cr.ID, "%s: the check could not run (%s): %s", name, r.Status, msg)
		return
	}
	have := map[string]bool{}
	for _, a := range r.Artifacts {
		have[artifactKinds[a]] = true
	}
	for _, kind := range contracts.RequiredArtifacts(c, cr) {
		if kind != contracts.ArtifactObserved && !have[kind] {
			j.add(RuleIncomplete, CodeArtifactMissing, cr.ID, "%s: the required %s is missing", name, kind)
		}
	}
	checks, err := contracts.ChecksFor(cr)
	if err != nil {
		j.add(RuleIncomplete, CodeObservedMissing, cr.ID, "%s: %v", name, err)
		return
	}
	checks = contracts.ChecksMeasuredBy(checks, verifierVersion)
	var failures []contracts.Reason
	complete := true
	for _, ch := range checks {
		res := contracts.EvaluateCheck(ch, r.Observed)
		switch res.Outcome {
		case contracts.CheckUnmeasured:
			complete = false
			j.add(RuleIncomplete, CodeObservedMissing, cr.ID, "%s: %s", name, res.Problem)
		case contracts.CheckFail:
			obs, msg := res.Observed, failureMessage(name, ch, res.Observed, res.Expected)
			if res.Absent != "" {
				obs, msg = "absent", fmt.Sprintf("%s: %s fails, the response lacks it: %s", name, ch.Label, res.Absent)
			}
			failures = append(failures, contracts.Reason{Rule: RuleCriteria, Code: CodeCriterionFailed, Criterion: cr.ID,
				Check: ch.Key, Observed: obs, Expected: res.Expected, Message: msg})
		}
	}
	if !complete {
		return
	}
	recomputed := contracts.StatusPass
	if len(failures) > 0 {
		recomputed = contracts.StatusFail
	}
	if r.Status != recomputed {
		j.add(RuleIntegrity, CodeStatusMismatch, cr.ID, "%s: the verifier reported %s but its observed values give %s", name, r.Status, recomputed)
		return
	}
	j.failed = append(j.failed, failures...)
}

func label(n int, cr contracts.Criterion) string {
	return fmt.Sprintf("criterion %d (%s)", n+1, cr.ID)
}

// displayNames turns observed keys into the words a developer would use.
var displayNames = map[string]string{
	contracts.ObsScrollWidth:   "scrollWidth",
	contracts.ObsInnerWidth:    "innerWidth",
	contracts.ObsInnerHeight:   "innerHeight",
	contracts.ObsClipped:       "elements cut off at the right edge",
	contracts.ObsStatus:        "HTTP status",
	contracts.ObsPageErrors:    "page errors",
	contracts.ObsConsoleErrors: "console errors",
	contracts.ObsCount:         "matching elements",
	contracts.ObsValue:         "value",
	contracts.ObsExpectedValue: "expected value",
	contracts.ObsOverflowing:   "elements past the screen's edge",
	contracts.ObsRequests:      "matching requests",
	contracts.ObsStackOverlaps: "items starting above the previous one's bottom",
	contracts.ObsLeftSpread:    "spread of left edges (px)",
	contracts.ObsFromEnd:       "distance from the page's end (px)",
}

func display(key string) string {
	leaf := key
	if i := strings.LastIndex(key, "/"); i >= 0 {
		leaf = key[i+1:]
	}
	// Drop all_of member indexes ("1.count" -> "count").
	for {
		i := strings.Index(leaf, ".")
		if i <= 0 || strings.Trim(leaf[:i], "0123456789") != "" {
			break
		}
		leaf = leaf[i+1:]
	}
	if d, ok := displayNames[leaf]; ok {
		return d
	}
	return leaf
}

func failureMessage(name string, ch contracts.Check, obs, want any) string {
	vp := ""
	if i := strings.Index(ch.Key, "/"); i >= 0 {
		vp = " at " + ch.Key[:i]
	}
	if ch.ExpectedKey != "" {
		return fmt.Sprintf("%s%s: %s = %s, %s = %s (want %s)", name, vp, display(ch.Key), contracts.FormatValue(obs), display(ch.ExpectedKey), contracts.FormatValue(want), ch.Label)
	}
	return fmt.Sprintf("%s%s: %s: observed %s, expected %s %s", name, vp, ch.Label, contracts.FormatValue(obs), ch.Op, contracts.FormatValue(want))
}

// shortOrNone is contracts.ShortSHA, or "(none)" for a missing hash.
func shortOrNone(h string) string {
	if h == "" {
		return "(none)"
	}
	return contracts.ShortSHA(h)
}

func oneLine(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", "; ")
}
