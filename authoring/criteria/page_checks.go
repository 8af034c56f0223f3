// The checks a page plan offers: content, layout at phone widths, the desktop guard, a
// feature, a loading state.

package criteria

import (
	"fmt"
	"strings"

	"github.com/signoff/signoff/contracts"
)

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
	word := RouteWord(p.route)
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

func (p *pagePlan) featureHook() string {
	f := p.it.feature
	if h := slug(firstNonEmpty(f.Title, f.Phrase)); h != "" {
		return h
	}
	return RouteWord(p.route) + "-" + slug(f.Container)
}

func featureName(f *feature) string {
	if f.Title != "" {
		return fmt.Sprintf("%q", f.Title)
	}
	return f.Phrase + " " + f.Container
}

// featureCheck: a new link or button the goal names, by role and name; otherwise the exact
// text the user gave, inside the page region they named (when the base has it) or inside a
// test hook the contract declares.
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
	if f.Title != "" && f.Dest == "" && within == sel && (f.Container == "link" || f.Container == "button") {
		// A link or button the goal gives the text of is found as a person finds it, by its
		// role and name: no hook, so none can be put on something else.
		named := contracts.RoleSelector(f.Container, f.Title)
		return p.crit(p.idFor(hookID), fmt.Sprintf("At %s a %s named %q (%s) is visible on %s%s.", vpNames(vps), f.Container, f.Title, named, p.route, p.suffix()),
			contracts.Assertion{Kind: contracts.KindElementPresent, Selector: named, State: contracts.StateVisible}, vps...), nil
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
		sel = hookSelector(RouteWord(p.route) + "-loading")
		hooks = append(hooks, contracts.TestHook{Selector: sel, Description: "the loading state shown while " + p.page.Fetches[0] + " has not answered"})
	}
	c := p.crit(p.idFor("loading-state"), fmt.Sprintf("While %s is held for 3 s, %s shows its loading state (%s) at 1440x1000%s.", p.page.Fetches[0], p.route, sel, p.suffix()),
		contracts.Assertion{Kind: contracts.KindElementPresent, Selector: sel, State: contracts.StateVisible}, Desktop)
	c.Actions = append([]contracts.Action{{Type: contracts.ActionDelayRoute, Route: p.page.Fetches[0] + "*", DelayMS: 3000}}, c.Actions...)
	return c, hooks
}

// headingChecks: "change the heading to 'X'" shows a heading named X, found by role and name
// (a paragraph styled large is not a heading), and the page's old main heading is gone.
func (p *pagePlan) headingChecks() []candidate {
	h := p.it.heading
	sel := contracts.RoleSelector("heading", h)
	out := []candidate{{c: p.crit(p.idFor("heading-"+slug(h)), fmt.Sprintf("At 1440x1000 and 390x844 %s shows a heading named %q (%s)%s.", p.route, h, sel, p.suffix()),
		contracts.Assertion{Kind: contracts.KindElementPresent, Selector: sel, State: contracts.StateVisible}, Desktop, Mobile),
		role: RoleChange, why: "the goal gives the heading's new wording", prio: 0}}
	if len(p.page.Anchors.Headings) > 0 && !strings.EqualFold(p.page.Anchors.Headings[0], h) {
		old := p.page.Anchors.Headings[0]
		oldSel := contracts.RoleSelector("heading", old)
		out = append(out, candidate{c: p.crit(p.idFor("old-heading-gone"), fmt.Sprintf("At 1440x1000 %s no longer shows a heading named %q (%s)%s.", p.route, old, oldSel, p.suffix()),
			contracts.Assertion{Kind: contracts.KindElementAbsent, Selector: oldSel, State: contracts.StateVisible}, Desktop),
			role: RoleChange, why: "the heading is changed, not a second one added", prio: 1})
	}
	return out
}
