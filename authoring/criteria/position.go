package criteria

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/signoff/signoff/authoring/refusal"
	"github.com/signoff/signoff/authoring/survey"
	"github.com/signoff/signoff/contracts"
)

// Position and arrangement goals say where an element goes or how items sit: "stack the
// plan cards vertically" (each box below the previous one, left edges aligned), "a banner at
// the top of the page" (in the first screen, before the main region's content), "a link at the
// bottom" (in the last screen, after it), "a link to X" (the href, and a click that
// arrives at X).

const (
	arrangeStacked = "stacked"
	arrangeTop     = "top"
	arrangeBottom  = "bottom"
	arrangeBelow   = "below"
	arrangeAbove   = "above"
	arrangeBeside  = "beside"
)

type arrangement struct {
	Kind string
	// Items names what stacks ("plan cards").
	Items string
	// RefName and RefRole are what a below, above or next-to goal places the element
	// against: the page's heading (RefName empty), or a heading, link or button by its name.
	RefName, RefRole string
}

var (
	stackVertRe = regexp.MustCompile(`\bstack(?:s|ed|ing)?\s+(?:up\s+)?((?:the|its|their|all|each)\s+)?((?:[a-z][\w-]*\s+){1,3}?)(?:vertically|on top of each other|one (?:above|below|under) (?:the )?(?:other|another))\b`)
	// "the plan cards stack vertically": the items come before the verb.
	itemsStackRe = regexp.MustCompile(`\b((?:[a-z][\w-]*\s+){1,5})stack(?:s)?\s+(?:up\s+)?(?:vertically|on top of each other|one (?:above|below|under) (?:the )?(?:other|another))\b`)
	topRe        = regexp.MustCompile(`\bat the (?:very )?top\b(?:\s+of\s+(?:the\s+)?([\w/-]+))?`)
	// "below the heading", "above the 'Pricing' link", "under the Docs button", "next to the
	// Buy button", "beside the search box's button".
	relativeRe = regexp.MustCompile(`\b(below|under|beneath|above|next to|beside|alongside)\s+(?:the\s+)?(?:(?:main|page(?:'s)?|first)\s+)?(?:['"\x{2018}\x{201c}]([^'"\x{2019}\x{201d}]{1,60})['"\x{2019}\x{201d}]\s+|([a-z][\w-]*(?:\s+[a-z][\w-]*)?)\s+)?(heading|title|link|button)\b`)
	bottomRe   = regexp.MustCompile(`\bat the (?:very )?bottom\b(?:\s+of\s+(?:the\s+)?([\w/-]+))?`)
)

// readArrangement reads an arrangement from a goal in lower case, or nil. "At the top of the
// header" places an element inside a region (a feature's placement), not on the page.
func readArrangement(l string) *arrangement {
	if m := stackVertRe.FindStringSubmatch(l); m != nil {
		return &arrangement{Kind: arrangeStacked, Items: strings.TrimSpace(m[2])}
	}
	if m := itemsStackRe.FindStringSubmatch(l); m != nil {
		if items := subjectOf(strings.Fields(m[1])); items != "" {
			return &arrangement{Kind: arrangeStacked, Items: items}
		}
	}
	if m := relativeRe.FindStringSubmatch(l); m != nil {
		ar := &arrangement{Kind: arrangeBelow, RefName: strings.TrimSpace(m[2] + m[3]), RefRole: m[4]}
		switch m[1] {
		case "above":
			ar.Kind = arrangeAbove
		case "next to", "beside", "alongside":
			ar.Kind = arrangeBeside
		}
		if ar.RefRole == "title" {
			ar.RefRole = "heading"
		}
		return ar
	}
	for _, c := range []struct {
		re   *regexp.Regexp
		kind string
	}{{topRe, arrangeTop}, {bottomRe, arrangeBottom}} {
		// "At the top of /paper" names the page more than a place on it (the paraphrase
		// family of issue 13 reads it so); "at the top of the page" or "of the X page" places.
		if m := c.re.FindStringSubmatch(l); m != nil && placements[m[1]] == "" && !strings.HasPrefix(m[1], "/") {
			return &arrangement{Kind: c.kind}
		}
	}
	return nil
}

// subjectOf is the noun phrase that ends words (what comes before "stack"), past a modal:
// at most three words, back to the first determiner or helper word ("make the plan cards"
// and "the plan cards should" give "plan cards").
func subjectOf(words []string) string {
	for len(words) > 0 && modal[words[len(words)-1]] {
		words = words[:len(words)-1] // "the cards should (stack)"
	}
	start := len(words)
	for start > 0 && len(words)-start < 3 && !subjectStop[words[start-1]] {
		start--
	}
	return strings.Join(words[start:], " ")
}

var modal = map[string]bool{"should": true, "must": true, "will": true, "to": true, "can": true, "would": true, "all": true}

var subjectStop = map[string]bool{"the": true, "its": true, "their": true, "all": true, "each": true, "make": true,
	"let": true, "so": true, "that": true, "have": true, "to": true, "should": true, "must": true, "will": true,
	"we": true, "our": true, "my": true, "your": true, "and": true, "phones": true, "mobile": true, "on": true}

// namedControls are the links or buttons of the page (its own or its layouts') whose names the
// goal says, in the page's order, all of one role: "the Docs and GitHub links" are found by
// what a person reads on them, not by a hook the executor could put anywhere. A name followed
// by "page" names a page ("the Home page"), not a control.
func (p *pagePlan) namedControls() (role string, names []string) {
	if p.page == nil {
		return "", nil
	}
	byRole := map[string][]string{}
	for _, c := range append(append([]survey.Control{}, p.page.Frame.Controls...), p.page.Anchors.Controls...) {
		if len(c.Name) < 2 || slices.Contains(byRole[c.Role], c.Name) {
			continue
		}
		re := regexp.MustCompile(`(?i)(?:^|[^\w])` + regexp.QuoteMeta(c.Name) + `(?:$|[^\w])`)
		for _, loc := range re.FindAllStringIndex(p.it.goal, -1) {
			if !strings.HasPrefix(strings.TrimLeft(strings.ToLower(p.it.goal[loc[1]:]), " "), "page") {
				byRole[c.Role] = append(byRole[c.Role], c.Name)
				break
			}
		}
	}
	for _, r := range []string{"link", "button"} {
		if len(byRole[r]) > len(names) {
			role, names = r, byRole[r]
		}
	}
	return role, names
}

// pageWordRe is a subject that names a page or the screen rather than items on it.
var pageWordRe = regexp.MustCompile(`(?:^|\s)(?:page|screen|site|view|layout|app)$`)

// itemsSelector is what a stacking goal's items are found by: the links or buttons it names,
// by role and name; else a test id the page already has whose words match; else, for items the
// base does not have, a hook the contract declares. A subject that names a page, or nothing,
// is refused: re-aiming the check at the page would pay for any arrangement.
func (p *pagePlan) itemsSelector() (sel, what string, hook *contracts.TestHook, err error) {
	if role, names := p.namedControls(); len(names) >= 2 {
		return contracts.RoleSelector(role, names...), fmt.Sprintf("the %s %ss", humanList(quoteAll(names), "and"), role), nil, nil
	}
	items := p.it.arrange.Items
	if items == "" || pageWordRe.MatchString(items) {
		return "", "", nil, refusal.New(refusal.NoTarget, fmt.Sprintf("the goal does not say which items on %s stack (%q names the page)", p.route, items),
			"name the items as the page shows them, for example \"stack the Docs and GitHub links\"")
	}
	words := strings.Fields(items)
	for i, w := range words {
		words[i] = strings.TrimSuffix(w, "s")
	}
	want := strings.Join(words, "-")
	if p.page != nil {
		for _, t := range p.page.Anchors.TestIDs {
			if t.ID == want || strings.HasSuffix(want, "-"+t.ID) || strings.HasSuffix(t.ID, "-"+want) {
				return hookSelector(t.ID), "the " + items, nil, nil
			}
		}
	}
	sel = hookSelector(slug(want))
	return sel, "the " + items, &contracts.TestHook{Selector: sel, Description: "each of the " + items + " on " + p.route}, nil
}

// placedSelector is what a top or bottom goal's new element is found by: a link or button the
// goal gives the text of, by role and name; anything else by its test hook.
func (p *pagePlan) placedSelector() string {
	f := p.it.feature
	if f.Title != "" && (f.Container == "link" || f.Container == "button") {
		return contracts.RoleSelector(f.Container, f.Title)
	}
	return hookSelector(p.featureHook())
}

// placedText is the text a hooked element must show to be the one a position criterion
// places: the hook alone could sit on some other block (the self-test's variants do that).
func (p *pagePlan) placedText(sel string) string {
	if f := p.it.feature; f != nil && f.Title != "" && !contracts.IsRoleLocator(sel) {
		return f.Title
	}
	return ""
}

// arrangementChecks are the criteria of a position or arrangement goal.
func (p *pagePlan) arrangementChecks() ([]candidate, []contracts.TestHook) {
	ar := p.it.arrange
	var hooks []contracts.TestHook
	vps := []contracts.Viewport{Desktop, Mobile}
	if p.it.mobile {
		vps = []contracts.Viewport{Mobile}
	}
	switch ar.Kind {
	case arrangeStacked:
		sel, what, hook, err := p.itemsSelector()
		if err != nil {
			p.err = err
			return nil, nil
		}
		if hook != nil {
			hooks = append(hooks, *hook)
		}
		c := p.crit(p.idFor("stacked-"+slug(strings.TrimPrefix(what, "the "))), fmt.Sprintf("At %s %s (%s) on %s stack vertically: each starts at or below the previous one's bottom, left edges within %g px%s.",
			vpNames(vps), what, sel, p.route, contracts.StackLeftTolerancePx, p.suffix()),
			contracts.Assertion{Kind: contracts.KindStacked, Selector: sel}, vps...)
		return []candidate{{c: c, role: RoleChange, why: "the goal asks for the items one above another", prio: 0}}, hooks
	case arrangeTop, arrangeBottom:
		if p.it.feature == nil {
			return nil, nil
		}
		sel := p.placedSelector()
		a := contracts.Assertion{Kind: contracts.KindPosition, Selector: sel, Place: contracts.PlaceFirstViewport, HasText: p.placedText(sel)}
		where := "in the first screen and above every other content of the page's main region"
		if ar.Kind == arrangeBottom {
			a.Place, where = contracts.PlaceLastViewport, "in the last screen and below every other content of the page's main region"
		}
		c := p.crit(p.idFor(p.featureHook()+"-"+ar.Kind), fmt.Sprintf("At %s the %s (%s) is at the %s of %s: %s%s.", vpNames(vps), featureName(p.it.feature), sel, ar.Kind, p.route, where, p.suffix()),
			a, vps...)
		return []candidate{{c: c, role: RoleChange, why: "the goal says where the element goes", prio: 1}}, nil
	case arrangeBelow, arrangeAbove, arrangeBeside:
		if p.it.feature == nil {
			return nil, nil
		}
		ref, what, err := p.referenceSelector(ar)
		if err != nil {
			p.err = err
			return nil, nil
		}
		sel := p.placedSelector()
		a := contracts.Assertion{Kind: contracts.KindPosition, Selector: sel, After: ref, HasText: p.placedText(sel)}
		where := "starts below the bottom of " + what
		switch ar.Kind {
		case arrangeAbove:
			a = contracts.Assertion{Kind: contracts.KindPosition, Selector: sel, Before: ref, HasText: p.placedText(sel)}
			where = "ends above the top of " + what
		case arrangeBeside:
			a = contracts.Assertion{Kind: contracts.KindPosition, Selector: sel, Beside: ref, HasText: p.placedText(sel)}
			where = "sits next to " + what
		}
		desc := fmt.Sprintf("At %s the %s (%s) %s (%s) on %s%s.", vpNames(vps), featureName(p.it.feature), sel, where, ref, p.route, p.suffix())
		if ar.Kind == arrangeBeside {
			desc = fmt.Sprintf("At %s the %s (%s) %s (%s) on %s: on its row (their heights overlap by at least half the shorter one), side by side within %g px, with nothing between them%s.",
				vpNames(vps), featureName(p.it.feature), sel, where, ref, p.route, contracts.NextToGapPx, p.suffix())
		}
		c := p.crit(p.idFor(p.featureHook()+"-"+ar.Kind), desc, a, vps...)
		why := "the goal says what the element goes " + ar.Kind
		if ar.Kind == arrangeBeside {
			why = "the goal says what the element goes next to"
		}
		return []candidate{{c: c, role: RoleChange, why: why, prio: 1}}, nil
	}
	return nil, nil
}

// referenceSelector finds what a below, above or next-to goal names on the surveyed page, by role and
// name: the page's first heading for "the heading", else the heading, link or button the
// survey found with that name. What the survey did not find is refused (no_target), never
// re-aimed at the page.
func (p *pagePlan) referenceSelector(ar *arrangement) (sel, what string, err error) {
	if p.page == nil {
		return "", "", refusal.New(refusal.NoTarget, fmt.Sprintf("the goal places the element %s a %s on %s, a page the survey did not read", ar.Kind, ar.RefRole, p.route), "name a page of the app")
	}
	if ar.RefRole == "heading" && (ar.RefName == "" || ar.RefName == "page") && len(p.page.Anchors.Headings) > 0 {
		h := p.page.Anchors.Headings[0]
		return contracts.RoleSelector("heading", h), fmt.Sprintf("the page's heading %q", h), nil
	}
	for _, h := range p.page.Anchors.Headings {
		if ar.RefRole == "heading" && strings.EqualFold(h, ar.RefName) {
			return contracts.RoleSelector("heading", h), fmt.Sprintf("the %q heading", h), nil
		}
	}
	for _, c := range p.page.Anchors.Controls {
		if c.Role == ar.RefRole && strings.EqualFold(c.Name, ar.RefName) {
			return contracts.RoleSelector(c.Role, c.Name), fmt.Sprintf("the %q %s", c.Name, c.Role), nil
		}
	}
	return "", "", refusal.New(refusal.NoTarget, fmt.Sprintf("the goal places the element %s the %q %s, which the survey of %s did not find", ar.Kind, ar.RefName, ar.RefRole, p.route),
		"name a heading, link or button the page shows, by its text")
}

// linkNavCheck clicks the link the goal adds and reads where the page arrives.
func (p *pagePlan) linkNavCheck(hookID, dest string) contracts.Criterion {
	sel := hookSelector(hookID)
	c := p.crit(p.idFor(hookID+"-goes"), fmt.Sprintf("At 1440x1000, after clicking the %s link on %s, the page is at %s%s.", featureName(p.it.feature), p.route, dest, p.suffix()),
		contracts.Assertion{Kind: contracts.KindURL, Operator: contracts.OpEQ, Expected: mustJSON(dest)}, Desktop)
	c.Actions = append(c.Actions, act(contracts.ActionClick, sel, ""))
	return c
}
