package authoring

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/signoff/signoff/contracts"
)

// Author drafts a contract from a request: admission, a read-only survey of the base commit,
// criteria from the generator, validation, a quote, and the discrimination run on the base.
type Author struct {
	// Admission is applied before anything of the repository is read. Required.
	Admission *Admission
	// Generator proposes criteria; nil is Rules.
	Generator Generator
	// Checker runs the criteria on the base commit; nil skips the discrimination check (the
	// result says so, and the contract is offered unchecked).
	Checker BaseChecker
	// Verifier is the verifier the contract is frozen against (verify.Ref()). Required.
	Verifier contracts.VerifierRef
	// Pricing prices the scope; nil is DefaultPricing.
	Pricing *Pricing
	// CloneDir receives bare clones of remote repositories.
	CloneDir string
	// ReadToken, when set, reads private https repositories: a read-only token (a GitHub
	// fine-grained token with Contents: read) sent to the repository's host only.
	ReadToken string
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Request is one ask for a contract.
type Request struct {
	Requester string
	Source    *Source
	Goal      string
	// Routes restrict the contract to these pages or endpoints (optional).
	Routes []string
	// Budget, in minor units of the quote's currency, caps the price (0: none).
	Budget int64
}

// Result is a drafted contract and everything that went into it. On refusal it holds what
// was learnt before the refusal (the survey, say), so the caller can show it.
type Result struct {
	Source         *Source             `json:"source"`
	Survey         *Survey             `json:"survey,omitempty"`
	Draft          *Draft              `json:"draft,omitempty"`
	Contract       *contracts.Contract `json:"contract,omitempty"`
	Hash           string              `json:"contract_hash,omitempty"`
	Quote          *Quote              `json:"quote,omitempty"`
	Discrimination *Discrimination     `json:"discrimination,omitempty"`
	// Offered is true when the contract may be shown for approval.
	Offered bool `json:"offered"`
}

var (
	hexDigestRe = regexp.MustCompile(`^[0-9a-f]{64}$`)
	routeArgRe  = regexp.MustCompile(`^/[A-Za-z0-9._~!$&'()*+,;=:@%/?-]*$`)
)

// Draft runs the whole authoring flow. Refusals are typed errors (RefusalError,
// AdmissionError, BudgetError, DiscriminationError, InputError); anything else is a failure
// to run (git, build, browser).
func (a *Author) Draft(ctx context.Context, req Request) (*Result, error) {
	res := &Result{Source: req.Source}
	goal := strings.TrimSpace(req.Goal)
	switch {
	case req.Source == nil:
		return res, &InputError{Field: "repo", Reason: "missing"}
	case len(goal) < 3:
		return res, &InputError{Field: "goal", Reason: "say what should change (at least a few words)"}
	case len(goal) > 2000:
		return res, &InputError{Field: "goal", Reason: "at most 2000 characters"}
	case a.Admission == nil:
		return res, &InputError{Field: "admission", Reason: "no admission policy configured"}
	case !hexDigestRe.MatchString(a.Verifier.Digest) || a.Verifier.Name == "":
		return res, &InputError{Field: "verifier", Reason: "the verifier reference (name and digest) is required"}
	case req.Budget < 0:
		return res, &InputError{Field: "budget", Reason: "must not be negative"}
	}
	for _, r := range req.Routes {
		if !routeArgRe.MatchString(r) || strings.Contains(r, "//") || strings.Contains(r, "..") {
			return res, &InputError{Field: "route", Reason: fmt.Sprintf("%q is not a path on the app (like /watchlist)", r)}
		}
	}
	if err := a.Admission.Admit(req.Requester, req.Source.Owner, req.Source.Name); err != nil {
		return res, err
	}
	if err := req.Source.Fetch(ctx, a.CloneDir, a.ReadToken); err != nil {
		return res, err
	}
	survey, err := SurveyRepo(ctx, req.Source, SurveyOptions{Goal: goal})
	if err != nil {
		return res, err
	}
	res.Survey = survey
	gen := a.Generator
	if gen == nil {
		gen = Rules{}
	}
	draft, err := gen.Generate(ctx, GenerateInput{Goal: goal, Routes: req.Routes, Survey: survey})
	if err != nil {
		return res, err
	}
	res.Draft = draft
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	pricing := DefaultPricing()
	if a.Pricing != nil {
		pricing = *a.Pricing
	}
	q := pricing.Quote(draft.Scope, now())
	res.Quote = &q
	c := assemble(survey, goal, req.Routes, draft, a.Verifier, q.Price)
	if err := contracts.Validate(c, contracts.LoadOptions{}); err != nil {
		return res, fmt.Errorf("generated contract is invalid (a generator defect): %w", err)
	}
	hash, err := contracts.Hash(c)
	if err != nil {
		return res, err
	}
	res.Contract, res.Hash = &c, hash
	if err := checkBudget(q, req.Budget); err != nil {
		return res, err
	}
	if a.Checker == nil {
		res.Discrimination = &Discrimination{Skipped: "no base check was run"}
		res.Offered = true
		return res, nil
	}
	report, err := a.Checker.CheckBase(ctx, c)
	if err != nil {
		return res, fmt.Errorf("discrimination check on the base commit: %w", err)
	}
	disc, err := Discriminate(draft, report)
	res.Discrimination = &disc
	if err != nil {
		return res, err
	}
	res.Offered = true
	return res, nil
}

// assemble builds the contract terms from a draft.
func assemble(s *Survey, goal string, routes []string, d *Draft, ver contracts.VerifierRef, price contracts.Price) contracts.Contract {
	policy := []string{contracts.ArtifactObserved, contracts.ArtifactScreenshot, contracts.ArtifactTrace}
	if d.Scope.BackendOnly {
		policy = []string{contracts.ArtifactObserved}
	}
	return contracts.Contract{
		SchemaVersion:   contracts.SchemaVersion,
		ContractID:      contractID(s, goal, routes, d),
		ContractVersion: 1,
		Goal:            goal,
		Repo:            contracts.Repo{Owner: s.Repo.Owner, Name: s.Repo.Name, URL: s.Repo.URL, BaseCommitSHA: s.BaseSHA},
		Stack:           stackFor(s),
		TestHooks:       d.TestHooks,
		Criteria:        d.Criteria,
		EvidencePolicy:  contracts.EvidencePolicy{Required: policy},
		Verifier:        ver,
		MaxAttempts:     3,
		ReleaseRule:     contracts.ReleaseCaptureOnSatisfied,
		Price:           price,
	}
}

// contractID is stable for the same repository, base, goal and routes, so asking twice gives
// the same contract (and hash) rather than two competing quotes.
func contractID(s *Survey, goal string, routes []string, d *Draft) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s/%s\n%s\n%s\n%s\n", s.Repo.Owner, s.Repo.Name, s.BaseSHA, goal, strings.Join(routes, "\n"))
	word := "contract"
	switch {
	case len(d.Scope.Pages) > 0:
		word = routeWord(d.Scope.Pages[0])
	case len(d.Scope.Endpoints) > 0:
		word = "api-" + routeWord(d.Scope.Endpoints[0])
	}
	if len(word) > 40 {
		word = strings.TrimRight(word[:40], "-")
	}
	if len(word) < 2 {
		word = "contract"
	}
	return word + "-" + hex.EncodeToString(h.Sum(nil))[:10]
}

// stackFor says how the app is installed, built and started, from the survey.
func stackFor(s *Survey) contracts.Stack {
	var install, build, start string
	switch s.PackageManager {
	case "bun":
		install, build, start = "bun install --frozen-lockfile", "bun run build", "bun run start"
	case "pnpm":
		install, build, start = "pnpm install --frozen-lockfile", "pnpm run build", "pnpm run start"
	case "yarn":
		install, build, start = "yarn install --frozen-lockfile", "yarn build", "yarn start"
	default:
		install, build, start = "npm ci", "npm run build", "npm run start"
		if s.Lockfile == "" {
			install = "npm install"
		}
	}
	if s.AppDir != "" {
		cd := "cd " + s.AppDir + " && "
		install, build, start = cd+install, cd+build, cd+start
	}
	return contracts.Stack{Framework: s.Framework.ContractFramework(), PackageManager: s.PackageManager,
		Install: install, Build: build, Start: start, Port: s.Port, AppDir: s.AppDir}
}

// ExitClass sorts an authoring error for a command line: "input" (exit 2: the request as
// given will not become a contract), "failed" (exit 1: the flow could not run, or the
// contract is vacuous).
func ExitClass(err error) string {
	var d *DiscriminationError
	if errors.As(err, &d) {
		return "failed"
	}
	if IsRefusal(err) {
		return "input"
	}
	return "failed"
}
