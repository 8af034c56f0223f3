package criteria

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/signoff/signoff/authoring/refusal"
	"github.com/signoff/signoff/authoring/survey"
	"github.com/signoff/signoff/contracts"
)

// Generator turns a goal and a survey into criteria. The rules below need no key and are the
// default; an LLM-backed generator can implement the same interface later, and its drafts go
// through the same validation and base check.
type Generator interface {
	Generate(ctx context.Context, in GenerateInput) (*Draft, error)
}

// GenerateInput is what a generator may use: the user's words, routes they named, and the
// survey of the base commit.
type GenerateInput struct {
	Goal   string
	Routes []string
	Survey *survey.Survey
}

// Roles say what a criterion is for. The base check decides what it is: a criterion that
// already passes there is a regression guard whatever its role.
const (
	RoleChange = "change" // checks what the goal asks for: expected to fail on the base commit
	RoleGuard  = "guard"  // checks what must keep working: expected to hold on the base commit
)

// PlannedCriterion records why a criterion is in the contract.
type PlannedCriterion struct {
	ID   string `json:"id"`
	Role string `json:"role"`
	Why  string `json:"why"`
}

// Scope is what a goal touches; the quote is priced from it.
type Scope struct {
	Pages       []string `json:"pages,omitempty"`
	Endpoints   []string `json:"endpoints,omitempty"`
	Auth        bool     `json:"auth,omitempty"`
	BackendOnly bool     `json:"backend_only,omitempty"`
	Mobile      bool     `json:"mobile,omitempty"`
	Layout      bool     `json:"layout,omitempty"`
	Feature     bool     `json:"feature,omitempty"`
	Loading     bool     `json:"loading,omitempty"`
	NewPage     bool     `json:"new_page,omitempty"`
}

// Draft is a generator's proposal: criteria, the test hooks they rely on, and the scope.
type Draft struct {
	Generator string                `json:"generator"`
	Criteria  []contracts.Criterion `json:"criteria"`
	Plan      []PlannedCriterion    `json:"plan"`
	TestHooks []contracts.TestHook  `json:"test_hooks,omitempty"`
	Scope     Scope                 `json:"scope"`
	Notes     []string              `json:"notes,omitempty"`
}

// Role returns the planned role of a criterion.
func (d *Draft) Role(id string) string {
	for _, p := range d.Plan {
		if p.ID == id {
			return p.Role
		}
	}
	return ""
}

// Terms wraps the draft in contract terms for the surveyed repository at its base commit:
// the draft's criteria and test hooks, the evidence they need (no screenshots or trace for a
// backend-only scope), three attempts, payment captured once satisfied.
func (d *Draft) Terms(s *survey.Survey, id, goal string, ver contracts.VerifierRef, price contracts.Price) contracts.Contract {
	policy := []string{contracts.ArtifactObserved, contracts.ArtifactScreenshot, contracts.ArtifactTrace}
	if d.Scope.BackendOnly {
		policy = []string{contracts.ArtifactObserved}
	}
	return contracts.Contract{
		SchemaVersion:   contracts.SchemaVersion,
		ContractID:      id,
		ContractVersion: 1,
		Goal:            goal,
		Repo:            contracts.Repo{Owner: s.Repo.Owner, Name: s.Repo.Name, URL: s.Repo.URL, BaseCommitSHA: s.BaseSHA},
		Stack:           s.Stack(),
		TestHooks:       d.TestHooks,
		AllowedOrigins:  s.ExternalOrigins,
		Criteria:        d.Criteria,
		EvidencePolicy:  contracts.EvidencePolicy{Required: policy},
		Verifier:        ver,
		MaxAttempts:     3,
		ReleaseRule:     contracts.ReleaseCaptureOnSatisfied,
		Price:           price,
	}
}

// Viewports the rules use: a common phone and a common laptop.
var (
	Mobile  = contracts.Viewport{Width: 390, Height: 844}
	Desktop = contracts.Viewport{Width: 1440, Height: 1000}
)

// Rules is the rule-based generator.
type Rules struct{}

// RulesVersion names the rule set in drafts.
const RulesVersion = "rules/1"

var allArtifacts = []string{contracts.ArtifactObserved, contracts.ArtifactScreenshot, contracts.ArtifactTrace}

// Generate applies the rules. A goal that cannot be made objective, or reaches outside the
// repository, is refused with the reason.
func (Rules) Generate(ctx context.Context, gi GenerateInput) (*Draft, error) {
	s := gi.Survey
	if s == nil {
		return nil, &refusal.InputError{Field: "survey", Reason: "missing"}
	}
	if !s.Framework.Supported {
		return nil, refusal.New(refusal.Unsupported, s.Framework.Reason, "")
	}
	goal := strings.TrimSpace(gi.Goal)
	if err := refuseScope(goal, s.Repo.Owner, s.Repo.Name); err != nil {
		return nil, err
	}
	it := readIntent(goal)
	pages, apis, dest, err := pickTargets(s, it, gi.Routes)
	if err != nil {
		return nil, err
	}
	d := &Draft{Generator: RulesVersion}
	if len(it.subjective) > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("not checked (subjective): %s", strings.Join(quoteAll(it.subjective), ", ")))
	}
	if len(pages) == 0 {
		if err := backendPlan(s, it, apis, d); err != nil {
			return nil, err
		}
	} else {
		if len(apis) > 0 {
			d.Scope.Endpoints = apis
			d.Notes = append(d.Notes, "endpoints named alongside pages are checked through the pages: "+strings.Join(apis, ", "))
		}
		if it.sitewideNote != "" {
			d.Notes = append(d.Notes, it.sitewideNote)
		}
		if err := uiPlan(s, it, pages, apis, dest, d); err != nil {
			return nil, err
		}
	}
	if !slices.ContainsFunc(d.Plan, func(p PlannedCriterion) bool { return p.Role == RoleChange }) {
		if len(it.subjective) > 0 {
			return nil, refusal.New(refusal.Subjective, fmt.Sprintf("%s cannot be checked objectively, and nothing else in the goal asks for an observable change", strings.Join(quoteAll(it.subjective), ", ")),
				"say what should be different: a text, an element, a layout at a screen width, a response field")
		}
		return nil, refusal.New(refusal.NoChange, "the goal asks for nothing a check can observe on "+strings.Join(append(pages, apis...), ", "),
			"name the text, element, layout or response field that should change")
	}
	return d, nil
}

func quoteAll(ws []string) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = fmt.Sprintf("%q", w)
	}
	return out
}

var literalPathRe = regexp.MustCompile(`(?:^|[\s("'\x60])(/[a-z0-9][\w/-]*)`)

// pickTargets decides which pages (or endpoints) the contract checks, and where a link
// leads. Routes given explicitly win over routes read from the goal.
func pickTargets(s *survey.Survey, it *intent, explicit []string) (pages, apis []string, dest string, err error) {
	add := func(route string) {
		switch {
		case s.PageAt(route) != nil:
			pages = survey.AppendUnique(pages, route)
		case s.APIAt(route) != nil || strings.HasPrefix(route, "/api/"):
			apis = survey.AppendUnique(apis, route)
		default:
			pages = survey.AppendUnique(pages, route) // a page the change creates
			it.newPage = true
		}
	}
	hits := matchRoutes(s, it.goal)
	dest = pickDest(hits)
	if len(explicit) > 0 {
		for _, r := range explicit {
			add(r)
		}
	} else {
		for _, h := range hits {
			if h.route == dest {
				continue
			}
			add(h.route)
		}
		if it.createPage {
			for _, m := range literalPathRe.FindAllStringSubmatch(it.goal, -1) {
				p := strings.TrimRight(m[1], "/.")
				if s.PageAt(p) == nil && s.APIAt(p) == nil && !strings.HasPrefix(p, "/api/") {
					add(p)
				}
			}
		}
		if len(pages) == 0 && len(apis) == 0 && it.region != "" && !it.sitewide {
			// "Make the header fit on phones", "add a toggle to the header": a part the
			// layouts share, named without a page, is that part wherever it is rendered.
			pages = sharedRegionPages(s, it)
		}
		if len(pages) == 0 && len(apis) == 0 {
			if p := impliedPage(s, it.goal); p != "" {
				pages = append(pages, p)
			}
		}
	}
	// A page named only as a link's destination is not a target.
	if dest != "" && len(pages) > 1 {
		pages = slices.DeleteFunc(pages, func(p string) bool { return p == dest })
	}
	uiSignals := it.mobile || it.layout != nil || it.feature != nil || it.loading || it.behaviour != nil || it.arrange != nil
	if it.sitewide && it.region != "" && len(explicit) == 0 {
		pages, it.sitewideNote = sitewidePages(s, it.region)
		if len(pages) == 0 {
			return nil, nil, "", refusal.New(refusal.NoRoute, "the goal is about the "+regionWord(it.region)+" on every page, and no page of this app renders one",
				"name a page, or pass --route")
		}
		return pages, nil, "", nil
	}
	if len(pages) > 0 && len(apis) > 0 && !uiSignals {
		pages = nil // an endpoint and the page that happens to use it: the endpoint is the change
	}
	if len(pages) == 0 && len(apis) == 0 {
		var names []string
		for _, p := range s.Pages {
			if !p.Dynamic {
				names = append(names, p.Route)
			}
		}
		if len(it.subjective) > 0 {
			return nil, nil, "", refusal.New(refusal.Subjective, fmt.Sprintf("%s cannot be checked objectively, and the goal names no page", strings.Join(quoteAll(it.subjective), ", ")),
				"say what should be different on which page")
		}
		return nil, nil, "", refusal.New(refusal.NoRoute, "the goal names no page or endpoint of this app",
			"name one (pages: "+strings.Join(names, ", ")+"), or pass --route")
	}
	if len(pages) > 2 || len(apis) > 2 {
		return nil, nil, "", refusal.New(refusal.TooBroad, "the goal touches "+strings.Join(append(pages, apis...), ", ")+"; a contract checks at most two pages or endpoints",
			"split it into one request per page")
	}
	if it.feature != nil && dest != "" {
		it.feature.Dest = dest
	}
	return pages, apis, dest, nil
}

// pickDest decides which named page, if any, is where a link leads: the last one after
// "goes to"/"pointing to", else the last one after "link to" when another page is named too
// (so "a link to the onboarding page" alone means a link placed on that page).
func pickDest(hits []routeHit) string {
	pagesNamed := 0
	for _, h := range hits {
		if !h.api {
			pagesNamed++
		}
	}
	for _, strength := range []int{2, 1} {
		dest := ""
		for _, h := range hits {
			if !h.api && h.dest == strength {
				dest = h.route
			}
		}
		if dest != "" && (strength == 2 || pagesNamed > 1) {
			return dest
		}
	}
	return ""
}
