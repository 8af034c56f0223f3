package conversation

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/signoff/signoff/authoring"
	"github.com/signoff/signoff/authoring/pricing"
	"github.com/signoff/signoff/authoring/refusal"
	"github.com/signoff/signoff/contracts"
)

// repoPhraseRe finds an explicit "repo owner/name" (or "repository ...") in a task.
var repoPhraseRe = regexp.MustCompile(`(?i)\b(?:repo|repository)\s*:?\s+([A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9._-]+)`)

// pickRepo chooses the repository a task is about: one named with "repo owner/name", or an
// allowed slug mentioned anywhere, else the default (the first configured). The goal keeps
// the user's words without the repository phrase.
func (c *Conversation) pickRepo(text string) (Repo, string, error) {
	goal := text
	if m := repoPhraseRe.FindStringSubmatchIndex(text); m != nil {
		slug := text[m[2]:m[3]]
		for _, r := range c.cfg.Repos {
			if strings.EqualFold(r.Slug, slug) {
				return r, tidyGoal(text[:m[0]] + text[m[1]:]), nil
			}
		}
		return Repo{}, "", userErr("%s is not among the repositories I may work on here (%s).", slug, strings.Join(c.repoSlugs(), ", "))
	}
	for _, r := range c.cfg.Repos {
		if i := strings.Index(strings.ToLower(text), strings.ToLower(r.Slug)); i >= 0 {
			goal = tidyGoal(text[:i] + text[i+len(r.Slug):])
			return r, goal, nil
		}
	}
	return c.cfg.Repos[0], tidyGoal(goal), nil
}

// tidyGoal drops what removing a repository phrase leaves behind ("in  ", a dangling "in").
func tidyGoal(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	for _, suffix := range []string{" in", " on", " for", " of", ","} {
		s = strings.TrimSuffix(s, suffix)
	}
	for _, prefix := range []string{"in ", "on ", "for ", ": "} {
		s = strings.TrimPrefix(s, prefix)
	}
	return strings.TrimSpace(strings.TrimPrefix(s, ":"))
}

// requesterID suffixes a drafted contract id with a short digest of the requester.
func requesterID(id, requester string) string {
	sum := sha256.Sum256([]byte(requester))
	suffix := "-" + hex.EncodeToString(sum[:])[:6]
	if len(id)+len(suffix) > 64 {
		id = strings.TrimRight(id[:64-len(suffix)], "-")
	}
	return id + suffix
}

func baseCheckText(d *authoring.BaseJudgment) string {
	switch {
	case d == nil || !d.Checked:
		return "Base check: skipped (this Signoff quotes chat tasks without it); the criteria were not run on the base commit before quoting."
	default:
		label := "Base check"
		if d.Report != nil && d.Report.Where == authoring.WhereQueues {
			label = "Base check (on the execute and verify queues)"
		}
		fails, them := fmt.Sprintf("%d criteria fail", len(d.Failing)), "them"
		if len(d.Failing) == 1 {
			fails, them = "1 criterion fails", "it"
		}
		s := fmt.Sprintf("%s: %s on the base commit (the change must make %s pass)", label, fails, them)
		if len(d.Guards) > 0 {
			s += fmt.Sprintf("; %d already hold and guard against regressions", len(d.Guards))
		}
		s += "."
		if n := len(d.Variants); n > 0 {
			s += fmt.Sprintf(" Self-test: %s.", contracts.VariantSummary(d.Variants))
		}
		return s
	}
}

// refusalText says why a task will not become a contract, and what would make it one.
func refusalText(err error) string {
	var r *refusal.Error
	var a *authoring.AdmissionError
	var b *pricing.BudgetError
	var d *authoring.BaseCheckError
	var i *refusal.InputError
	switch {
	case errors.As(err, &r):
		s := "I cannot turn that into a contract: " + r.Reason + "."
		if r.Hint != "" {
			s += " " + capitalize(r.Hint)
			if !strings.HasSuffix(s, ".") {
				s += "."
			}
		}
		return s
	case errors.As(err, &a):
		return "Not accepted: " + a.Reason + "."
	case errors.As(err, &b):
		return "Over budget: " + b.Reason
	case errors.As(err, &d) && d.Code == authoring.BaseBusy:
		return "Your quote is not ready: " + d.Reason + "."
	case errors.As(err, &d):
		return "No contract offered: " + d.Reason
	case errors.As(err, &i):
		return fmt.Sprintf("That request is incomplete (%s: %s).", i.Field, i.Reason)
	}
	return "I cannot turn that into a contract."
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
