package github

import (
	"fmt"
	"strings"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
)

// prTitle is "Verified contract: <goal>", the goal's first line, within GitHub's title limit.
func prTitle(goal string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(goal), "\n")
	if r := []rune(line); len(r) > 200 {
		line = string(r[:200]) + "…"
	}
	return "Verified contract: " + line
}

// fenced puts user-supplied text where GitHub renders it literally: no mentions, links or
// HTML from a goal or an observed page text.
func fenced(s string) string {
	s = strings.ReplaceAll(s, "```", "'''")
	return "```text\n" + strings.TrimRight(s, "\n") + "\n```\n"
}

func code(s string) string { return "`" + strings.ReplaceAll(s, "`", "'") + "`" }

// prBody carries the contract hash, the criteria and the base commit.
func prBody(req capability.PublishRequest) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Signoff contract %s. This PR is merge-eligible only while its head is the commit Signoff verified.\n\n", code(req.ContractID))
	b.WriteString("**Goal**\n\n" + fenced(req.Goal) + "\n")
	fmt.Fprintf(&b, "| | |\n|---|---|\n| Contract hash | %s |\n| Base commit | %s |\n| Latest attempt | %d, commit %s |\n\n",
		code(req.ContractHash), code(req.Repo.BaseCommitSHA), req.Attempt, code(req.CommitSHA))
	b.WriteString("**Criteria** (frozen; every attempt reruns all of them)\n\n")
	var list strings.Builder
	for i, c := range req.Criteria {
		fmt.Fprintf(&list, "%d. [%s] %s\n", i+1, c.ID, c.Description)
	}
	b.WriteString(fenced(list.String()))
	return b.String()
}

// proofMarker identifies one verdict's comment, so a retried report never posts it twice.
func proofMarker(b contracts.Bundle) string {
	try := b.Try
	if try == 0 {
		try = 1
	}
	return fmt.Sprintf("<!-- signoff-proof contract=%s attempt=%d try=%d -->", b.ContractID, b.Attempt, try)
}

// ProofComment renders a bundle as the PR comment: every line maps to a value in the bundle.
func ProofComment(b contracts.Bundle) string {
	try := b.Try
	if try == 0 {
		try = 1
	}
	var s strings.Builder
	s.WriteString(proofMarker(b) + "\n")
	fmt.Fprintf(&s, "### Signoff verdict: %s\n\nAttempt %d, verification %d of contract %s.\n\n", code(b.Verdict), b.Attempt, try, code(b.ContractID))
	build := "failed"
	if b.Build.Passed {
		build = "passed"
	}
	fmt.Fprintf(&s, "| | |\n|---|---|\n| Contract hash | %s |\n| Verified commit | %s |\n| Base commit | %s |\n| Evidence digest | %s |\n| Timeline head | %s |\n| Build | %s |\n| Runtime gate | %s, %d error(s) |\n",
		code(b.ContractHash), code(b.ImplementationSHA), code(b.BaseSHA), code(b.EvidenceDigest), code(b.TimelineHead),
		build, code(b.Gate.Source), len(b.Gate.Errors))
	if b.Payment.State != "" {
		pay := b.Payment.State
		if b.Payment.Local {
			pay += " (local test double: no money moves)"
		}
		fmt.Fprintf(&s, "| Payment | %s |\n", pay)
	}
	if b.Signature != "" {
		fmt.Fprintf(&s, "| Bundle signature | %s |\n", code(b.Signature))
	}
	if len(b.Reasons) > 0 {
		var r strings.Builder
		for _, reason := range b.Reasons {
			r.WriteString("- ")
			if reason.Criterion != "" {
				r.WriteString(reason.Criterion + ": ")
			}
			r.WriteString(reason.Message + "\n")
		}
		s.WriteString("\n**Reasons**\n\n" + fenced(r.String()))
	}
	s.WriteString("\nRe-check offline with `signoff proof verify <bundle> --verifier-fingerprint F --control-fingerprint F`, using the fingerprints `signoff keys` prints for this deployment: a proof signed by other keys does not verify.\n")
	return s.String()
}

func statusDescription(b contracts.Bundle, final bool) string {
	switch {
	case b.Verdict == contracts.Satisfied:
		return fmt.Sprintf("satisfied: verified at attempt %d", b.Attempt)
	case final:
		msg := b.Verdict
		if len(b.Reasons) > 0 {
			msg += ": " + b.Reasons[0].Message
		}
		return msg
	default:
		return fmt.Sprintf("attempt %d %s; repair or re-verification under way", b.Attempt, b.Verdict)
	}
}
