// A page plan: one route's anchors and the goal's intent, from which its criteria come.

package criteria

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/signoff/signoff/authoring/refusal"
	"github.com/signoff/signoff/authoring/survey"
	"github.com/signoff/signoff/contracts"
)

// pagePlan builds the criteria for one page.
type pagePlan struct {
	s       *survey.Survey
	it      *intent
	route   string
	page    *survey.Page // nil for a page the change creates
	label   string
	seed    *contracts.Seed
	actions []contracts.Action
	signIn  bool
	items   []string
	guard   []string
	budget  int
	// apis are endpoints the goal names beside the page; err is a refusal met while
	// building the page's criteria.
	apis []string
	err  error
}

// candidate is a criterion with its role and a priority for trimming to six (lower stays).
type candidate struct {
	c    contracts.Criterion
	role string
	why  string
	prio int
}

func newPagePlan(s *survey.Survey, it *intent, route string) (*pagePlan, error) {
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
			return nil, refusal.New(refusal.Auth, fmt.Sprintf("%s needs a signed-in user (%s) and %s", route, p.page.Auth.Evidence, why),
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
			for _, item := range survey.StringItems(k.Default) {
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
func guardTexts(pg *survey.Page, it *intent) []string {
	var out []string
	if len(pg.Anchors.Headings) > 0 && it.heading == "" {
		out = append(out, pg.Anchors.Headings[0])
	}
	title := ""
	if it.feature != nil {
		title = it.feature.Title
	}
	pool := append(append([]string{}, pg.Anchors.Headings...), pg.Anchors.Texts...)
	for _, w := range survey.Keywords(it.goal) {
		re := regexp.MustCompile(`(?i)\b` + regexp.QuoteMeta(w) + `\b`)
		for _, t := range pool {
			if len(out) >= 3 {
				return out
			}
			if re.MatchString(t) && t != title && !strings.Contains(t, ":") && (it.heading == "" || len(pg.Anchors.Headings) == 0 || t != pg.Anchors.Headings[0]) {
				out = survey.AppendUnique(out, t)
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

// RouteWord names a route in test ids: its last static segment. Exported for package
// authoring, which names a contract's id after the first route of its scope the same way.
func RouteWord(route string) string {
	names := routeNames(route)
	if route == "/" || len(names) == 0 {
		return "home"
	}
	return slug(names[0])
}

func hookSelector(id string) string { return fmt.Sprintf(`[data-testid=%q]`, id) }

// uiPlan builds criteria for the target pages and merges them, most important first.
func uiPlan(s *survey.Survey, it *intent, pages, apis []string, dest string, d *Draft) error {
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
		p.apis = apis
		cs, hooks := p.candidates(dest)
		if p.err != nil {
			return p.err
		}
		d.TestHooks = appendHooks(d.TestHooks, hooks...)
		if p.signIn {
			d.Scope.Auth = true
		}
		all = append(all, cs)
	}
	var defaultNote string
	switch {
	case it.keepOthers:
		guards, note := otherPageGuards(s, pages, maxOtherPageGuards, false)
		all = append(all, guards)
		d.Notes = append(d.Notes, note)
	case len(pages) == 1 && !it.sitewide:
		// A goal about one page leaves the others as they are even when it does not say so;
		// one page is guarded, and the guard is the first criterion left out of a full contract.
		guards, note := otherPageGuards(s, pages, 1, true)
		all = append(all, guards)
		defaultNote = note
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
	if defaultNote != "" {
		if slices.ContainsFunc(merged, func(c candidate) bool { return c.why == whyDefaultGuard }) {
			d.Notes = append(d.Notes, defaultNote)
		} else {
			d.Notes = append(d.Notes, fmt.Sprintf("not checked: that other pages stay as they are (the page's own criteria fill the contract's %d)", contracts.MaxCriteria))
		}
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
		desc := fmt.Sprintf("At 390x844 nothing on %s scrolls or is cut off horizontally%s%s.", p.route, noScrollers, p.suffix())
		if len(content) > 0 {
			a = contracts.Assertion{Kind: contracts.KindAllOf, AllOf: []contracts.Assertion{a, {Kind: contracts.KindVisibleText, Texts: content}}}
			desc = fmt.Sprintf("At 390x844, with %s shown, nothing on %s scrolls or is cut off horizontally%s%s.", humanList(content, "and"), p.route, noScrollers, p.suffix())
		}
		role, why, prio := RoleGuard, "new content must not break the phone layout", 2
		switch {
		case it.claimMobile:
			role, why, prio = RoleChange, fmt.Sprintf("the %q text is a claim about phones; it must be true", it.feature.Title), 0
		case mobileish:
			role, why, prio = RoleChange, "the goal is about phones: content must fit the screen", 0
		}
		if it.overflowScoped() && p.page.HasRegion(it.region) {
			role, why, prio = RoleGuard, "the rest of the page must not start overflowing (left out where the base already overflows)", 2
		}
		if role == RoleChange && !it.claimMobile && it.arrange != nil && it.layout == nil && !overflowRe.MatchString(it.lower) {
			// "On phones, stack the cards": the arrangement is what is asked; a page that
			// already scrolls sideways for another reason is not this goal's to fix.
			role, why, prio = RoleGuard, "the arrangement must not make the page overflow (left out where the base already overflows)", 2
		}
		add(p.crit(id("mobile-no-overflow"), desc, a, Mobile), role, why, prio)
		if it.overflowScoped() && p.page.HasRegion(it.region) {
			add(p.regionOverflowCheck(), RoleChange, "the goal is about the "+regionWord(it.region)+": it alone must fit the phone's width", 0)
		}
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
			if f.Container == "link" {
				add(p.linkNavCheck(hookID, f.Dest), RoleChange, "following the link must arrive where the goal says", 1)
			}
		}
	}

	if it.heading != "" && p.page != nil {
		out = append(out, p.headingChecks()...)
	}

	if it.loading && p.page != nil && len(p.page.Fetches) > 0 {
		c, hs := p.loadingCheck()
		hooks = append(hooks, hs...)
		add(c, RoleChange, "the goal asks for a loading state while data is slow", 1)
	}

	if it.behaviour != nil {
		cs, hs, err := p.behaviourChecks(p.apis)
		if err != nil {
			p.err = err
		}
		out = append(out, cs...)
		hooks = append(hooks, hs...)
	}
	if it.arrange != nil && it.layout == nil {
		cs, hs := p.arrangementChecks()
		out = append(out, cs...)
		hooks = append(hooks, hs...)
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

func (p *pagePlan) idFor(base string) string {
	if p.multi() {
		base = RouteWord(p.route) + "-" + base
	}
	if len(base) > 64 {
		base = strings.TrimRight(base[:64], "-")
	}
	return base
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
