package authoring

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/signoff/signoff/authoring/criteria"
	"github.com/signoff/signoff/authoring/pricing"
	"github.com/signoff/signoff/authoring/refusal"
	"github.com/signoff/signoff/authoring/survey"
	"github.com/signoff/signoff/contracts"
)

// Author drafts a contract from a request: admission, a read-only survey of the base commit,
// criteria from the generator, validation, a quote, and the base check.
type Author struct {
	// Admission is applied before anything of the repository is read. Required.
	Admission *Admission
	// Generator proposes criteria; nil is Rules.
	Generator criteria.Generator
	// Checker runs the criteria on the base commit; nil skips the base check (the
	// result says so, and the contract is offered unchecked).
	Checker BaseChecker
	// Verifier is the verifier the contract is frozen against (verify.Ref()). Required.
	Verifier contracts.VerifierRef
	// Pricing prices the scope; nil is pricing.Default.
	Pricing *pricing.Pricing
	// CloneDir receives bare clones of remote repositories.
	CloneDir string
	// ReadToken, when set, reads private https repositories: a read-only token (a GitHub
	// fine-grained token with Contents: read) sent to the repository's host only.
	ReadToken string
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// BusyRetries are the waits before each new base check after one that only timed out
	// (BaseBusy); nil is DefaultBusyRetries, empty (non-nil) tries once.
	BusyRetries []time.Duration
	// Nonce makes each quote's contract id its own; nil draws 8 random hex digits. Asking
	// twice for the same goal at the same base gives two contracts, never one id that two
	// workflows (or two proof folders) would share.
	Nonce func() string
}

// Request is one ask for a contract.
type Request struct {
	Requester string
	Source    *survey.Source
	Goal      string
	// Routes restrict the contract to these pages or endpoints (optional).
	Routes []string
	// Budget, in minor units of the quote's currency, caps the price (0: none).
	Budget int64
	// Progress, when set, hears what a long quote is waiting on, as a sentence for the
	// requester: a base check run again because the host was too busy to measure.
	Progress func(msg string)
}

// Result is a drafted contract and everything that went into it. On refusal it holds what
// was learnt before the refusal (the survey, say), so the caller can show it.
type Result struct {
	Source   *survey.Source      `json:"source"`
	Survey   *survey.Survey      `json:"survey,omitempty"`
	Draft    *criteria.Draft     `json:"draft,omitempty"`
	Contract *contracts.Contract `json:"contract,omitempty"`
	// TermsID is the id of the terms alone (repository, base, goal, routes): the same for
	// every quote of them. Contract.ContractID is this quote's own.
	TermsID   string            `json:"terms_id,omitempty"`
	Hash      string            `json:"contract_hash,omitempty"`
	Estimate  *pricing.Estimate `json:"quote,omitempty"` // JSON name as written files have it
	BaseCheck *BaseJudgment     `json:"discrimination,omitempty"`
	// Offered is true when the contract may be shown for approval.
	Offered bool `json:"offered"`
}

var (
	hexDigestRe = regexp.MustCompile(`^[0-9a-f]{64}$`)
	routeArgRe  = regexp.MustCompile(`^/[A-Za-z0-9._~!$&'()*+,;=:@%/?-]*$`)
)

// Draft runs the whole authoring flow. Refusals are typed errors (refusal.Error,
// AdmissionError, pricing.BudgetError, BaseCheckError, refusal.InputError); anything
// else is a failure to run (git, build, browser).
func (a *Author) Draft(ctx context.Context, req Request) (*Result, error) {
	res := &Result{Source: req.Source}
	goal := strings.TrimSpace(req.Goal)
	switch {
	case req.Source == nil:
		return res, &refusal.InputError{Field: "repo", Reason: "missing"}
	case len(goal) < 3:
		return res, &refusal.InputError{Field: "goal", Reason: "say what should change (at least a few words)"}
	case len(goal) > 2000:
		return res, &refusal.InputError{Field: "goal", Reason: "at most 2000 characters"}
	case !plainText(goal):
		// JSON decoding turns an unpaired surrogate into U+FFFD: what reaches here as one was
		// not text the requester could have meant, and it would be frozen into a contract.
		return res, &refusal.InputError{Field: "goal", Reason: "holds something that is not text (an unpaired surrogate, invalid UTF-8 or a control character): send the goal as plain text"}
	case a.Admission == nil:
		return res, &refusal.InputError{Field: "admission", Reason: "no admission policy configured"}
	case !hexDigestRe.MatchString(a.Verifier.Digest) || a.Verifier.Name == "":
		return res, &refusal.InputError{Field: "verifier", Reason: "the verifier reference (name and digest) is required"}
	case req.Budget < 0:
		return res, &refusal.InputError{Field: "budget", Reason: "must not be negative"}
	}
	for _, r := range req.Routes {
		if !routeArgRe.MatchString(r) || strings.Contains(r, "//") || strings.Contains(r, "..") {
			return res, &refusal.InputError{Field: "route", Reason: fmt.Sprintf("%q is not a path on the app (like /watchlist)", r)}
		}
	}
	if err := a.Admission.Admit(req.Requester, req.Source.Owner, req.Source.Name); err != nil {
		return res, err
	}
	if err := req.Source.Fetch(ctx, a.CloneDir, a.ReadToken); err != nil {
		return res, err
	}
	s, err := survey.Read(ctx, req.Source, survey.Options{Goal: goal})
	if err != nil {
		return res, err
	}
	res.Survey = s
	if s.PreviewEnvProblem != "" {
		return res, &refusal.InputError{Field: "preview environment", Reason: s.PreviewEnvProblem + "; fix the file, commit it and ask again (nothing was started)"}
	}
	gen := a.Generator
	if gen == nil {
		gen = criteria.Rules{}
	}
	draft, err := gen.Generate(ctx, criteria.GenerateInput{Goal: goal, Routes: req.Routes, Survey: s})
	if err != nil {
		return res, err
	}
	res.Draft = draft
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	prices := pricing.Default()
	if a.Pricing != nil {
		prices = *a.Pricing
	}
	q := prices.Estimate(draft.Scope, now())
	res.Estimate = &q
	c := draft.Terms(s, contractID(s, goal, req.Routes, draft), goal, a.Verifier, q.Price)
	nonce := randomNonce
	if a.Nonce != nil {
		nonce = a.Nonce
	}
	res.TermsID = c.ContractID
	c.ContractID = quoteID(s, goal, req.Routes, draft, nonce())
	if err := contracts.Validate(c, contracts.LoadOptions{}); err != nil {
		return res, fmt.Errorf("generated contract is invalid (a generator defect): %w", err)
	}
	hash, err := contracts.Hash(c)
	if err != nil {
		return res, err
	}
	res.Contract, res.Hash = &c, hash
	if err := pricing.CheckBudget(q, req.Budget); err != nil {
		return res, err
	}
	if a.Checker == nil {
		res.BaseCheck = &BaseJudgment{Skipped: "no base check was run"}
		res.Offered = true
		return res, nil
	}
	report, disc, err := a.checkBase(ctx, c, draft, req.Progress)
	if report == nil {
		return res, err
	}
	res.BaseCheck = &disc
	if err != nil {
		return res, err
	}
	// Each change of the terms below is validated and hashed again, and the result offers
	// the changed contract.
	rehash := func(c contracts.Contract, what string) error {
		if err := contracts.Validate(c, contracts.LoadOptions{}); err != nil {
			return fmt.Errorf("contract %s is invalid (a generator defect): %w", what, err)
		}
		hash, err := contracts.Hash(c)
		if err != nil {
			return err
		}
		res.Contract, res.Hash = &c, hash
		return nil
	}
	if len(report.FailingChecks) > 0 {
		// The checks the base fails are recorded in the stack (or, when the goal is about
		// them, must pass).
		var notes []string
		c, notes = RecordFailingChecks(c, goal, report.FailingChecks)
		draft.Notes = append(draft.Notes, notes...)
		if err := rehash(c, "with the base's failing checks"); err != nil {
			return res, err
		}
	}
	if len(disc.Preexisting) > 0 {
		// What the base already fails and the goal does not ask for is not a condition of
		// payment.
		c = omitCriteria(c, disc.Preexisting)
		draft.Notes = append(draft.Notes, disc.PreexistingNotes...)
		if len(c.Criteria) < contracts.MinCriteria {
			return res, &BaseCheckError{Code: BaseTooFew, Reason: fmt.Sprintf("leaving out what the base commit already fails (%s) leaves %d criteria, fewer than %d",
				strings.Join(disc.Preexisting, ", "), len(c.Criteria), contracts.MinCriteria)}
		}
		if err := rehash(c, "without the pre-existing failures"); err != nil {
			return res, err
		}
	}
	if filled, notes, ok := FillStructure(c, report); ok {
		// The pages the goal leaves alone keep the structure the base check saw: the terms
		// take the observed values.
		c = filled
		draft.Notes = append(draft.Notes, notes...)
		if err := rehash(c, "with the base's structure"); err != nil {
			return res, err
		}
	}
	res.Offered = true
	return res, nil
}

// omitCriteria returns c without the criteria named.
func omitCriteria(c contracts.Contract, ids []string) contracts.Contract {
	c.Criteria = slices.DeleteFunc(slices.Clone(c.Criteria), func(cr contracts.Criterion) bool { return slices.Contains(ids, cr.ID) })
	return c
}

// contractID is the id of the terms alone: the same for the same repository, base, goal and
// routes. A quote's contract gets quoteID instead.
func contractID(s *survey.Survey, goal string, routes []string, d *criteria.Draft) string {
	return quoteID(s, goal, routes, d, "")
}

// quoteID is one quote's contract id: the scope's word and a digest of the terms and the
// quote's nonce, so every quote is a contract of its own.
func quoteID(s *survey.Survey, goal string, routes []string, d *criteria.Draft, nonce string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s/%s\n%s\n%s\n%s\n", s.Repo.Owner, s.Repo.Name, s.BaseSHA, goal, strings.Join(routes, "\n"))
	if nonce != "" {
		fmt.Fprintf(h, "nonce %s\n", nonce)
	}
	word := "contract"
	switch {
	case len(d.Scope.Pages) > 0:
		word = criteria.RouteWord(d.Scope.Pages[0])
	case len(d.Scope.Endpoints) > 0:
		word = "api-" + criteria.RouteWord(d.Scope.Endpoints[0])
	}
	if len(word) > 40 {
		word = strings.TrimRight(word[:40], "-")
	}
	if len(word) < 2 {
		word = "contract"
	}
	return word + "-" + hex.EncodeToString(h.Sum(nil))[:10]
}

func randomNonce() string {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		panic("authoring: no randomness for a contract id: " + err.Error())
	}
	return hex.EncodeToString(b)
}

// ExitClass sorts an authoring error for a command line: "input" (exit 2: the request as
// given will not become a contract), "failed" (exit 1: the flow could not run, or the
// contract is vacuous).
func ExitClass(err error) string {
	var d *BaseCheckError
	if errors.As(err, &d) {
		return "failed"
	}
	if IsRefusal(err) {
		return "input"
	}
	return "failed"
}

// plainText: valid UTF-8 without replacement characters or control characters other than
// tab and newline.
func plainText(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r == utf8.RuneError || (unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r') {
			return false
		}
	}
	return true
}

// DefaultBusyRetries: a base check that only timed out is run twice more, after half a minute
// and after two more, before the requester is told the host is busy.
var DefaultBusyRetries = []time.Duration{30 * time.Second, 2 * time.Minute}

// RetryingChecker is a BaseChecker that names its checks (a keyed check is joined, not run
// again): ForRetry gives the checker for the n-th new run of the same contract's check.
type RetryingChecker interface {
	BaseChecker
	ForRetry(n int) BaseChecker
}

// checkBase runs the base check and judges it, running it again after each of BusyRetries
// while the judgment is BaseBusy. A nil report comes with the error that stopped it.
func (a *Author) checkBase(ctx context.Context, c contracts.Contract, draft *criteria.Draft, progress func(string)) (*BaseReport, BaseJudgment, error) {
	waits := a.BusyRetries
	if waits == nil {
		waits = DefaultBusyRetries
	}
	checker := a.Checker
	for n := 0; ; n++ {
		report, err := checker.CheckBase(ctx, c)
		if err != nil {
			return nil, BaseJudgment{}, fmt.Errorf("base check: %w", err)
		}
		disc, err := JudgeBase(draft, report)
		var be *BaseCheckError
		busy := errors.As(err, &be) && be.Code == BaseBusy
		if !busy || n >= len(waits) {
			if busy && n > 0 {
				be.Reason += fmt.Sprintf(" (the check was run %d times)", n+1)
			}
			return report, disc, err
		}
		if progress != nil {
			progress(fmt.Sprintf("Still checking the base commit: the host was too busy to measure it in time, so the check runs again in %s (run %d of %d).",
				waits[n].Round(time.Second), n+2, len(waits)+1))
		}
		select {
		case <-ctx.Done():
			return report, disc, err
		case <-time.After(waits[n]): // backoff before the next run; ctx ends it early
		}
		if rc, ok := a.Checker.(RetryingChecker); ok {
			checker = rc.ForRetry(n + 1)
		}
	}
}
