package authoring

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/signoff/signoff/contracts"
)

// Generator turns a goal and a survey into criteria. The rules below need no key and are the
// default; an LLM-backed generator can implement the same interface later, and its drafts go
// through the same validation and discrimination.
type Generator interface {
	Generate(ctx context.Context, in GenerateInput) (*Draft, error)
}

// GenerateInput is what a generator may use: the user's words, routes they named, and the
// survey of the base commit.
type GenerateInput struct {
	Goal   string
	Routes []string
	Survey *Survey
}

// Roles say what a criterion is for. The discrimination run on the base commit decides what
// it is: a criterion that already passes there is a regression guard whatever its role.
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
		return nil, &InputError{Field: "survey", Reason: "missing"}
	}
	if !s.Framework.Supported {
		return nil, refuse(RefuseUnsupported, s.Framework.Reason, "")
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
		if err := uiPlan(s, it, pages, dest, d); err != nil {
			return nil, err
		}
	}
	if !slices.ContainsFunc(d.Plan, func(p PlannedCriterion) bool { return p.Role == RoleChange }) {
		if len(it.subjective) > 0 {
			return nil, refuse(RefuseSubjective, fmt.Sprintf("%s cannot be checked objectively, and nothing else in the goal asks for an observable change", strings.Join(quoteAll(it.subjective), ", ")),
				"say what should be different: a text, an element, a layout at a screen width, a response field")
		}
		return nil, refuse(RefuseNoChange, "the goal asks for nothing a check can observe on "+strings.Join(append(pages, apis...), ", "),
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
func pickTargets(s *Survey, it *intent, explicit []string) (pages, apis []string, dest string, err error) {
	add := func(route string) {
		switch {
		case s.PageAt(route) != nil:
			pages = appendUnique(pages, route)
		case s.APIAt(route) != nil || strings.HasPrefix(route, "/api/"):
			apis = appendUnique(apis, route)
		default:
			pages = appendUnique(pages, route) // a page the change creates
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
	uiSignals := it.mobile || it.layout != nil || it.feature != nil || it.loading
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
			return nil, nil, "", refuse(RefuseSubjective, fmt.Sprintf("%s cannot be checked objectively, and the goal names no page", strings.Join(quoteAll(it.subjective), ", ")),
				"say what should be different on which page")
		}
		return nil, nil, "", refuse(RefuseNoRoute, "the goal names no page or endpoint of this app",
			"name one (pages: "+strings.Join(names, ", ")+"), or pass --route")
	}
	if len(pages) > 2 || len(apis) > 2 {
		return nil, nil, "", refuse(RefuseTooBroad, "the goal touches "+strings.Join(append(pages, apis...), ", ")+"; a contract checks at most two pages or endpoints",
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

// pagePlan builds the criteria for one page.
type pagePlan struct {
	s       *Survey
	it      *intent
	route   string
	page    *Page // nil for a page the change creates
	label   string
	seed    *contracts.Seed
	actions []contracts.Action
	signIn  bool
	items   []string
	guard   []string
	budget  int
}

// candidate is a criterion with its role and a priority for trimming to six (lower stays).
type candidate struct {
	c    contracts.Criterion
	role string
	why  string
	prio int
}

func newPagePlan(s *Survey, it *intent, route string) (*pagePlan, error) {
	p := &pagePlan{s: s, it: it, route: route, page: s.PageAt(route), budget: 30000}
	p.label = route
	if p.page != nil && len(p.page.Anchors.Headings) > 0 {
		p.label = fmt.Sprintf("the %s page (%s)", p.page.Anchors.Headings[0], route)
	}
	if p.page == nil {
		return p, nil
	}
	if p.page.Auth != nil {
		if s.SignIn == nil {
			why := s.SignInProblem
			if why == "" {
				why = "no sign-in form was found"
			}
			return nil, refuse(RefuseAuth, fmt.Sprintf("%s needs a signed-in user (%s) and %s", route, p.page.Auth.Evidence, why),
				"commit a demo account the sign-in form accepts, or choose a public page")
		}
		si := s.SignIn
		p.actions = []contracts.Action{
			{Type: contracts.ActionGoto, Route: si.Route},
			{Type: contracts.ActionFill, Selector: si.EmailSelector, Value: si.Email},
			{Type: contracts.ActionFill, Selector: si.PasswordSelector, Value: si.Password},
			{Type: contracts.ActionClick, Selector: si.SubmitSelector},
			{Type: contracts.ActionGoto, Route: route},
		}
		p.signIn = true
		p.budget = 45000
	}
	for _, k := range p.page.Storage {
		if len(k.Default) > 0 {
			p.seed = &contracts.Seed{LocalStorage: map[string]json.RawMessage{k.Key: k.Default}}
			for _, item := range stringItems(k.Default) {
				if len(item) <= 24 && len(p.items) < 4 {
					p.items = append(p.items, item)
				}
			}
			break
		}
	}
	p.guard = guardTexts(p.page, it)
	return p, nil
}

// guardTexts are existing texts of the page that the goal's words point at, headings first,
// with the page's main heading always among them: what must still be on the page afterwards.
func guardTexts(pg *Page, it *intent) []string {
	var out []string
	if len(pg.Anchors.Headings) > 0 {
		out = append(out, pg.Anchors.Headings[0])
	}
	title := ""
	if it.feature != nil {
		title = it.feature.Title
	}
	pool := append(append([]string{}, pg.Anchors.Headings...), pg.Anchors.Texts...)
	for _, w := range keywords(it.goal) {
		re := regexp.MustCompile(`(?i)\b` + regexp.QuoteMeta(w) + `\b`)
		for _, t := range pool {
			if len(out) >= 3 {
				return out
			}
			if re.MatchString(t) && t != title && !strings.Contains(t, ":") {
				out = appendUnique(out, t)
				break
			}
		}
	}
	return out
}

func (p *pagePlan) suffix() string {
	if p.signIn {
		return ", after signing in as the demo user"
	}
	return ""
}

func (p *pagePlan) crit(id, desc string, a contracts.Assertion, vps ...contracts.Viewport) contracts.Criterion {
	c := contracts.Criterion{
		ID:                id,
		Description:       desc,
		Route:             p.route,
		Viewport:          &vps[0],
		ExtraViewports:    vps[1:],
		Actions:           slices.Clone(p.actions),
		Assert:            a,
		MaxRuntimeMS:      p.budget,
		RequiredArtifacts: slices.Clone(allArtifacts),
	}
	if len(c.ExtraViewports) == 0 {
		c.ExtraViewports = nil
	}
	if p.seed != nil {
		seed := contracts.Seed{LocalStorage: map[string]json.RawMessage{}}
		for k, v := range p.seed.LocalStorage {
			seed.LocalStorage[k] = v
		}
		c.Seed = &seed
	}
	return c
}

func vpName(v contracts.Viewport) string { return fmt.Sprintf("%dx%d", v.Width, v.Height) }

func vpNames(vps []contracts.Viewport) string {
	var ns []string
	for _, v := range vps {
		ns = append(ns, vpName(v))
	}
	return humanList(ns, "and")
}

func humanList(items []string, conj string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " " + conj + " " + items[len(items)-1]
}

// routeWord names a route in test ids: its last static segment.
func routeWord(route string) string {
	names := routeNames(route)
	if route == "/" || len(names) == 0 {
		return "home"
	}
	return slug(names[0])
}

func hookSelector(id string) string { return fmt.Sprintf(`[data-testid=%q]`, id) }

// uiPlan builds criteria for the target pages and merges them, most important first.
func uiPlan(s *Survey, it *intent, pages []string, dest string, d *Draft) error {
	if it.layout != nil && it.feature != nil && (it.feature.Title == "" || readLayout(strings.ToLower(it.feature.Title)) != nil) {
		it.feature = nil // "a list", "cards" or "a Compact Card Layout" named by the layout, not a new element
	}
	it.multiPage = len(pages) > 1
	var all [][]candidate
	for _, route := range pages {
		p, err := newPagePlan(s, it, route)
		if err != nil {
			return err
		}
		cs, hooks := p.candidates(dest)
		d.TestHooks = appendHooks(d.TestHooks, hooks...)
		if p.signIn {
			d.Scope.Auth = true
		}
		all = append(all, cs)
	}
	d.Scope.Pages = pages
	d.Scope.Mobile = it.mobile || it.claimMobile || it.layout != nil
	d.Scope.Layout = it.layout != nil
	d.Scope.Feature = it.feature != nil
	d.Scope.Loading = it.loading
	for _, route := range pages {
		if s.PageAt(route) == nil {
			d.Scope.NewPage = true
		}
	}
	if it.loading && !slices.ContainsFunc(flatten(all), func(c candidate) bool { return strings.HasSuffix(c.c.ID, "loading-state") }) {
		d.Notes = append(d.Notes, "not checked: a loading state (the page requests no data from the browser, so a slow response cannot be simulated)")
	}
	// Multi-page: keep every page's most important criteria before anyone's guards.
	var merged []candidate
	for _, cs := range all {
		merged = append(merged, cs...)
	}
	sort.SliceStable(merged, func(i, j int) bool { return merged[i].prio < merged[j].prio })
	if len(merged) > contracts.MaxCriteria {
		merged = merged[:contracts.MaxCriteria]
	}
	// Keep the contract's reading order: per page, as built.
	order := map[string]int{}
	n := 0
	for _, cs := range all {
		for _, c := range cs {
			order[c.c.ID] = n
			n++
		}
	}
	sort.SliceStable(merged, func(i, j int) bool { return order[merged[i].c.ID] < order[merged[j].c.ID] })
	seen := map[string]int{}
	for _, c := range merged {
		orig := c.c.ID
		if seen[orig]++; seen[orig] > 1 {
			c.c.ID = fmt.Sprintf("%s-%d", strings.TrimRight(orig[:min(len(orig), 60)], "-"), seen[orig])
		}
		d.Criteria = append(d.Criteria, c.c)
		d.Plan = append(d.Plan, PlannedCriterion{ID: c.c.ID, Role: c.role, Why: c.why})
	}
	return nil
}

func flatten(all [][]candidate) []candidate {
	var out []candidate
	for _, cs := range all {
		out = append(out, cs...)
	}
	return out
}

func appendHooks(list []contracts.TestHook, hooks ...contracts.TestHook) []contracts.TestHook {
	for _, h := range hooks {
		if !slices.ContainsFunc(list, func(x contracts.TestHook) bool { return x.Selector == h.Selector }) {
			list = append(list, h)
		}
	}
	return list
}

// candidates lists the page's criteria in reading order.
func (p *pagePlan) candidates(dest string) ([]candidate, []contracts.TestHook) {
	it := p.it
	var out []candidate
	var hooks []contracts.TestHook
	id := p.idFor
	add := func(c contracts.Criterion, role, why string, prio int) {
		out = append(out, candidate{c: c, role: role, why: why, prio: prio})
	}
	mobileish := it.mobile || it.layout != nil || it.claimMobile
	content := p.contentCheck()

	if p.page == nil { // a new page
		add(p.crit(id("loads-desktop"), fmt.Sprintf("%s loads at 1440x1000 with an HTTP status below 400 and no page error.", p.route),
			contracts.Assertion{Kind: contracts.KindLoads}, Desktop), RoleChange, "the page the goal creates must exist", 0)
		add(p.crit(id("loads-mobile"), fmt.Sprintf("%s loads at 390x844 with an HTTP status below 400 and no page error.", p.route),
			contracts.Assertion{Kind: contracts.KindLoads}, Mobile), RoleChange, "the new page must also load on a phone", 1)
	} else if mobileish {
		add(p.crit(id("loads-mobile"), fmt.Sprintf("%s loads at 390x844 with an HTTP status below 400 and no page error%s.", capital(p.label), p.suffix()),
			contracts.Assertion{Kind: contracts.KindLoads}, Mobile), RoleGuard, "the page must load on a phone", 4)
	} else {
		add(p.crit(id("loads-desktop"), fmt.Sprintf("%s loads at 1440x1000 with an HTTP status below 400 and no page error%s.", capital(p.label), p.suffix()),
			contracts.Assertion{Kind: contracts.KindLoads}, Desktop), RoleGuard, "the page must keep loading", 4)
	}

	// No horizontal overflow on a phone: the change itself for mobile goals, a guard for
	// anything that adds to a page.
	{
		a := contracts.Assertion{Kind: contracts.KindNoHorizontalOverflow}
		desc := fmt.Sprintf("At 390x844 nothing on %s scrolls or is cut off horizontally%s.", p.route, p.suffix())
		if len(content) > 0 {
			a = contracts.Assertion{Kind: contracts.KindAllOf, AllOf: []contracts.Assertion{a, {Kind: contracts.KindVisibleText, Texts: content}}}
			desc = fmt.Sprintf("At 390x844, with %s shown, nothing on %s scrolls or is cut off horizontally%s.", humanList(content, "and"), p.route, p.suffix())
		}
		role, why, prio := RoleGuard, "new content must not break the phone layout", 2
		switch {
		case it.claimMobile:
			role, why, prio = RoleChange, fmt.Sprintf("the %q text is a claim about phones; it must be true", it.feature.Title), 0
		case mobileish:
			role, why, prio = RoleChange, "the goal is about phones: content must fit the screen", 0
		}
		add(p.crit(id("mobile-no-overflow"), desc, a, Mobile), role, why, prio)
	}

	// A layout change is checked by structure: the old one gone, the items inside the new one.
	if it.layout != nil && p.page != nil {
		c, hook := p.layoutCheck()
		hooks = append(hooks, hook)
		add(c, RoleChange, "the new layout below the breakpoint, checked by structure rather than by text both layouts show", 0)
	}

	if f := it.feature; f != nil {
		c, hs := p.featureCheck(mobileish)
		hooks = append(hooks, hs...)
		add(c, RoleChange, "the new element the goal asks for", 0)
		if f.Dest != "" && (f.Container == "link" || f.Container == "button") {
			hookID := p.featureHook()
			sel := fmt.Sprintf(`a%s[href=%q]`, hookSelector(hookID), f.Dest)
			add(p.crit(id(hookID+"-target"), fmt.Sprintf("At 1440x1000 the %s link on %s points to %s.", featureName(f), p.route, f.Dest),
				contracts.Assertion{Kind: contracts.KindElementPresent, Selector: sel, State: contracts.StateVisible}, Desktop),
				RoleChange, "the link must lead where the goal says", 1)
		}
	}

	if it.loading && p.page != nil && len(p.page.Fetches) > 0 {
		c, hs := p.loadingCheck()
		hooks = append(hooks, hs...)
		add(c, RoleChange, "the goal asks for a loading state while data is slow", 1)
	}

	// What must keep working.
	if mobileish && p.page != nil && (it.layout == nil || it.layoutScoped()) {
		why := "a phone fix must not break the desktop layout"
		if it.desktopKeep {
			why = "the goal says the desktop layout stays"
		}
		add(p.desktopCheck(), RoleGuard, why, 2)
	} else if len(p.guard) > 0 {
		add(p.crit(id("page-content"), fmt.Sprintf("At 1440x1000 %s still shows %s%s.", p.route, humanList(quoteAll(p.guard), "and"), p.suffix()),
			contracts.Assertion{Kind: contracts.KindVisibleText, Texts: p.guard}, Desktop), RoleGuard, "existing content the goal refers to must remain", 2)
	}
	add(p.crit(id("no-page-errors"), fmt.Sprintf("No uncaught page error on %s at 390x844 or 1440x1000%s.", p.route, p.suffix()),
		contracts.Assertion{Kind: contracts.KindNoPageErrors}, Mobile, Desktop), RoleGuard, "the page must not throw", 3)
	return out, hooks
}

// multi is set when more than one page shares the contract (criterion ids then name the page).
func (p *pagePlan) multi() bool { return p.it != nil && p.it.multiPage }

// contentCheck is the text that proves the page rendered its data before geometry is read.
func (p *pagePlan) contentCheck() []string {
	if len(p.items) > 0 {
		return p.items[:min(3, len(p.items))]
	}
	if len(p.guard) > 0 {
		return p.guard[:1]
	}
	return nil
}

// tableStructure matches a table however it is built: the element, or an ARIA table or grid
// made of other elements, so a table restyled as divs still counts as the table.
const tableStructure = `table, [role="table"], [role="grid"]`

// oldStructure is the structure a layout change replaces, as a selector, and its name: the
// table the page renders today (the goal's "table", "rows", "columns" or "grid" on such a
// page). It is "" when the page renders no table: nothing structural names what goes.
func (p *pagePlan) oldStructure() (selector, name string) {
	if p.page != nil && p.page.Anchors.HasTag("table") {
		return tableStructure, "table"
	}
	return "", ""
}

// structureWords names a layout's new structure in descriptions: one of them, and many.
func structureWords(to string) (one, many string) {
	switch to {
	case "card":
		return "card", "cards"
	case "accordion":
		return "accordion section", "accordion sections"
	}
	return "block", "separate blocks"
}

// layoutCheck checks a layout change by structure at the narrow widths: the new structure is
// displayed and holds the page's items, and the old one is not displayed. Text both layouts
// show proves nothing about which one is on screen.
func (p *pagePlan) layoutCheck() (contracts.Criterion, contracts.TestHook) {
	l := p.it.layout
	word := routeWord(p.route)
	hookID := word + "-" + l.To
	sel := hookSelector(hookID)
	one, many := structureWords(l.To)
	where := "the narrow-screen layout"
	if !p.it.layoutScoped() {
		where = "the new layout"
	}
	example := ""
	if len(p.items) > 0 {
		example = fmt.Sprintf(" (for example %s)", p.items[0])
	}
	hook := contracts.TestHook{Selector: sel,
		Description: fmt.Sprintf("one %s per %s item in %s of %s, each holding its item's text%s", one, word, where, p.route, example)}
	// The phone, and the widest screen below the breakpoint; a breakpoint at or under the
	// phone's width leaves only the latter, since the phone already gets the wide layout.
	vps := []contracts.Viewport{Mobile}
	if w := l.Breakpoint - 1; l.Breakpoint > 0 && w != Mobile.Width && w >= contracts.MinViewportWidth && w <= contracts.MaxViewportWidth {
		if w < Mobile.Width {
			vps = nil
		}
		vps = append(vps, contracts.Viewport{Width: w, Height: Mobile.Height})
	}
	if !p.it.layoutScoped() {
		vps = append(vps, Desktop) // the new layout everywhere, not only on small screens
	}
	parts := []contracts.Assertion{{Kind: contracts.KindElementPresent, Selector: sel, State: contracts.StateVisible}}
	said := []string{fmt.Sprintf("%s elements (%s) are displayed", one, sel)}
	if len(p.items) > 0 {
		texts := p.items[:min(3, len(p.items))]
		parts = append(parts, contracts.Assertion{Kind: contracts.KindVisibleText, Texts: texts, Within: sel})
		said = append(said, fmt.Sprintf("%s are visible inside them", humanList(texts, "and")))
	}
	if old, name := p.oldStructure(); old != "" {
		parts = append(parts, contracts.Assertion{Kind: contracts.KindElementAbsent, Selector: old, State: contracts.StateVisible})
		said = append(said, fmt.Sprintf("no %s (%s) is displayed", name, old))
	}
	a := parts[0]
	if len(parts) > 1 {
		a = contracts.Assertion{Kind: contracts.KindAllOf, AllOf: parts}
	}
	desc := fmt.Sprintf("At %s %s shows its items as %s: %s%s.", vpNames(vps), p.route, many, strings.Join(said, "; "), p.suffix())
	return p.crit(p.idFor("mobile-"+l.To+"s"), desc, a, vps...), hook
}

func (p *pagePlan) idFor(base string) string {
	if p.multi() {
		base = routeWord(p.route) + "-" + base
	}
	if len(base) > 64 {
		base = strings.TrimRight(base[:64], "-")
	}
	return base
}

// desktopCheck is the structure a desktop visitor sees today, checked at 1440x1000.
func (p *pagePlan) desktopCheck() contracts.Criterion {
	_, structure := p.oldStructure()
	id := p.idFor("desktop-" + firstNonEmpty(structure, "content"))
	switch {
	case structure != "" && len(p.items) > 0:
		return p.crit(id, fmt.Sprintf("At 1440x1000 a %s is displayed on %s and shows %s%s.", structure, p.route, humanList(p.items, "and"), p.suffix()),
			contracts.Assertion{Kind: contracts.KindVisibleText, Texts: p.items, Within: structure}, Desktop)
	case structure != "":
		return p.crit(id, fmt.Sprintf("At 1440x1000 a %s is displayed on %s%s.", structure, p.route, p.suffix()),
			contracts.Assertion{Kind: contracts.KindElementPresent, Selector: structure, State: contracts.StateVisible}, Desktop)
	case len(p.guard) > 0:
		return p.crit(id, fmt.Sprintf("At 1440x1000 %s still shows %s%s.", p.route, humanList(quoteAll(p.guard), "and"), p.suffix()),
			contracts.Assertion{Kind: contracts.KindVisibleText, Texts: p.guard}, Desktop)
	}
	return p.crit(p.idFor("loads-desktop"), fmt.Sprintf("%s loads at 1440x1000 with an HTTP status below 400 and no page error%s.", capital(p.label), p.suffix()),
		contracts.Assertion{Kind: contracts.KindLoads}, Desktop)
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

func (p *pagePlan) featureHook() string {
	f := p.it.feature
	if h := slug(firstNonEmpty(f.Title, f.Phrase)); h != "" {
		return h
	}
	return routeWord(p.route) + "-" + slug(f.Container)
}

func featureName(f *feature) string {
	if f.Title != "" {
		return fmt.Sprintf("%q", f.Title)
	}
	return f.Phrase + " " + f.Container
}

// featureCheck: the exact text the user gave, inside the page region they named (when the base
// has it) or inside a test hook the contract declares.
func (p *pagePlan) featureCheck(mobileFirst bool) (contracts.Criterion, []contracts.TestHook) {
	f := p.it.feature
	hookID := p.featureHook()
	sel := hookSelector(hookID)
	vps := []contracts.Viewport{Desktop, Mobile}
	if mobileFirst {
		vps = []contracts.Viewport{Mobile, Desktop}
	}
	var hooks []contracts.TestHook
	within := sel
	if f.Placement != "" && p.page != nil && p.page.Anchors.HasTag(f.Placement) {
		within = f.Placement
	}
	needHook := within == sel || f.Dest != ""
	if needHook {
		what := "the new " + strings.TrimSpace(firstNonEmpty(f.Phrase, strings.ToLower(f.Title))+" "+f.Container)
		if f.Title != "" {
			what = fmt.Sprintf("the new %s showing %q", f.Container, f.Title)
		}
		if f.Dest != "" {
			what += fmt.Sprintf(" (an <a> with href=%q)", f.Dest)
		}
		hooks = append(hooks, contracts.TestHook{Selector: sel, Description: what})
	}
	id := p.idFor(hookID)
	if f.Title != "" {
		where := fmt.Sprintf("in the new %s (%s)", f.Container, sel)
		if within != sel {
			where = fmt.Sprintf("inside the page's %s (<%s>)", regionWord(within), within)
		}
		return p.crit(id, fmt.Sprintf("At %s %q is visible %s on %s%s.", vpNames(vps), f.Title, where, p.route, p.suffix()),
			contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{f.Title}, Within: within}, vps...), hooks
	}
	return p.crit(id, fmt.Sprintf("At %s the %s (%s) is visible on %s%s.", vpNames(vps), featureName(f), sel, p.route, p.suffix()),
		contracts.Assertion{Kind: contracts.KindElementPresent, Selector: sel, State: contracts.StateVisible}, vps...), hooks
}

// regionWord names a page region by the word a person uses for its tag.
func regionWord(tag string) string {
	switch tag {
	case "nav":
		return "navigation"
	case "aside":
		return "sidebar"
	}
	return tag
}

// loadingCheck holds the page's data request and checks the loading state is shown meanwhile.
func (p *pagePlan) loadingCheck() (contracts.Criterion, []contracts.TestHook) {
	sel := p.page.Loading
	var hooks []contracts.TestHook
	if sel == "" {
		sel = hookSelector(routeWord(p.route) + "-loading")
		hooks = append(hooks, contracts.TestHook{Selector: sel, Description: "the loading state shown while " + p.page.Fetches[0] + " has not answered"})
	}
	c := p.crit(p.idFor("loading-state"), fmt.Sprintf("While %s is held for 3 s, %s shows its loading state (%s) at 1440x1000%s.", p.page.Fetches[0], p.route, sel, p.suffix()),
		contracts.Assertion{Kind: contracts.KindElementPresent, Selector: sel, State: contracts.StateVisible}, Desktop)
	c.Actions = append([]contracts.Action{{Type: contracts.ActionDelayRoute, Route: p.page.Fetches[0] + "*", DelayMS: 3000}}, c.Actions...)
	return c, hooks
}

func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// backendPlan builds http criteria for an endpoint change: no browser, no viewport.
func backendPlan(s *Survey, it *intent, apis []string, d *Draft) error {
	route := apis[0]
	a := s.APIAt(route)
	if a != nil && a.Auth {
		return refuse(RefuseAuth, route+" answers only with a session, and http criteria carry no cookies", "choose a public endpoint or a page that uses it")
	}
	if len(it.fields) == 0 {
		return refuse(RefuseUnspecified, "the goal does not say which response field must have which value",
			`for example: add a currency field set to "USD" to each quote from `+route)
	}
	method := "GET"
	if it.method == "POST" && (a == nil || slices.Contains(a.Methods, "POST")) {
		method = "POST"
	}
	word := routeWord(route)
	d.Scope = Scope{Endpoints: apis, BackendOnly: true}
	add := func(id, desc, role, why string, checks []contracts.JSONCheck, path string) {
		c := contracts.Criterion{ID: id, Description: desc, Route: path,
			Assert:       contracts.Assertion{Kind: contracts.KindHTTP, Method: method, Status: 200, JSON: checks},
			MaxRuntimeMS: 10000, RequiredArtifacts: []string{contracts.ArtifactObserved}}
		d.Criteria = append(d.Criteria, c)
		d.Plan = append(d.Plan, PlannedCriterion{ID: id, Role: role, Why: why})
	}
	add(word+"-status", fmt.Sprintf("%s %s answers 200.", method, route), RoleGuard, "the endpoint must keep answering", nil, route)
	col := (*Collection)(nil)
	if a != nil {
		col = a.Collection
	}
	if col != nil && col.KeyField != "" && len(col.Items) > 0 {
		ptr := "/" + escapePointer(col.Member) + "/0/" + escapePointer(col.KeyField)
		add(word+"-shape", fmt.Sprintf("%s %s still returns %s[0].%s = %q.", method, route, col.Member, col.KeyField, col.Items[0]), RoleGuard,
			"the existing response shape must be preserved (items from "+col.From+")",
			[]contracts.JSONCheck{{Pointer: ptr, Operator: contracts.OpEQ, Expected: mustJSON(col.Items[0])}}, route)
	}
	fieldChecks := func(prefix string) []contracts.JSONCheck {
		var out []contracts.JSONCheck
		for _, f := range it.fields {
			out = append(out, contracts.JSONCheck{Pointer: prefix + "/" + escapePointer(f.Name), Operator: contracts.OpEQ, Expected: f.Value})
		}
		return out
	}
	names := make([]string, len(it.fields))
	for i, f := range it.fields {
		names[i] = fmt.Sprintf("%s = %s", f.Name, string(f.Value))
	}
	fieldID := slug(it.fields[0].Name)
	if col != nil && len(col.Items) > 0 {
		first := "/" + escapePointer(col.Member) + "/0"
		add(word+"-"+fieldID+"-first", fmt.Sprintf("%s %s returns %s on the first of %s.", method, route, humanList(names, "and"), col.Member), RoleChange,
			"the response field the goal asks for", fieldChecks(first), route)
		if n := len(col.Items); n > 1 {
			last := fmt.Sprintf("/%s/%d", escapePointer(col.Member), n-1)
			add(word+"-"+fieldID+"-last", fmt.Sprintf("%s %s returns %s on the last of %s (item %d).", method, route, humanList(names, "and"), col.Member, n), RoleChange,
				"every item carries the field, not just the first", fieldChecks(last), route)
		}
	} else {
		add(word+"-"+fieldID, fmt.Sprintf("%s %s returns %s.", method, route, humanList(names, "and")), RoleChange,
			"the response field the goal asks for", fieldChecks(""), route)
	}
	// Fill up to the minimum with what must keep answering: the home page, then other public
	// endpoints.
	var extra []string
	if s.PageAt("/") != nil && s.PageAt("/").Auth == nil {
		extra = append(extra, "/")
	}
	for _, o := range s.APIRoutes {
		if o.Route != route && !o.Internal && !o.Auth && slices.Contains(o.Methods, "GET") {
			extra = append(extra, o.Route)
		}
	}
	for _, r := range extra {
		if len(d.Criteria) >= contracts.MinCriteria {
			break
		}
		add(routeWord(r)+"-still-serves", fmt.Sprintf("GET %s still answers 200.", r), RoleGuard, "the rest of the app keeps serving", nil, r)
	}
	if len(d.Criteria) < contracts.MinCriteria {
		return refuse(RefuseUnspecified, "the endpoint change gives fewer than four independent checks",
			"name more fields and values, or the items the response should hold")
	}
	return nil
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
