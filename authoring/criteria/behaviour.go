package criteria

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/signoff/signoff/authoring/refusal"
	"github.com/signoff/signoff/contracts"
)

// Behaviour goals ask what a control does when used: a toggle that darkens the page, a
// button that opens a dialog, a form that submits, a box that filters a list, a button that
// adds to a cart. Each becomes criteria that act (click, fill, press) and then read an
// effect an observer can state: the page's luminance, an element shown, a request made, a
// text shown or gone, a count. A control that does nothing fails them; the element merely
// existing is not enough.

// Behaviour kinds.
const (
	behaviourDark    = "dark"
	behaviourOpens   = "opens"
	behaviourSubmits = "submits"
	behaviourFilters = "filters"
	behaviourCart    = "cart"
)

// Luminance bounds of the dark-mode criteria: a light page reads above LightAbove, a dark one
// below DarkBelow (relative luminance, 0 black to 1 white).
const (
	LightAbove = 0.6
	DarkBelow  = 0.35
)

// actionTimeoutMS caps how long an action waits for its control: on the base commit the
// control the change adds is not there, and waiting the whole budget proves nothing more.
const actionTimeoutMS = 5000

type behaviour struct {
	Kind string
	// Target names what opens ("help dialog"), Text a quoted text the effect shows, Items the
	// quoted words a filter is tried with.
	Target string
	Text   string
	Items  []string
}

var (
	darkRe       = regexp.MustCompile(`\b(?:dark[- ]mode|dark theme|night mode|theme (?:toggle|switch(?:er)?)|(?:light|dark)/(?:dark|light))\b`)
	opensRe      = regexp.MustCompile(`\b(?:opens?|expands?|reveals?|pops? up)\s+(?:up\s+)?(?:a|an|the)\s+((?:[a-z][\w-]*\s+){0,2}?)(menu|dialog|modal|panel|drawer|popover|dropdown)\b`)
	submitGoalRe = regexp.MustCompile(`\bsubmit(?:s|ted|ting)?\b|\bsends?\b[^.;]{0,30}\bform\b`)
	filterRe     = regexp.MustCompile(`\bfilter(?:s|ing)?\b|\bsearch(?:es|ing)?\b`)
	cartRe       = regexp.MustCompile(`\badds?\b[^.;]{0,50}\bto (?:the |a |your )?(?:cart|basket|bag)\b|\badd[- ]to[- ]cart\b`)
	quotedTextRe = regexp.MustCompile(`["“'‘]([^"“”'‘’\n]{2,60}?)["”'’](?:$|[\s).,;:!?])`)
)

// readBehaviour reads what a control must do, or nil.
func readBehaviour(goal string, f *feature) *behaviour {
	l := strings.ToLower(goal)
	var quoted []string
	for _, m := range quotedTextRe.FindAllStringSubmatch(goal, -1) {
		quoted = append(quoted, strings.TrimSpace(m[1]))
	}
	switch {
	case darkRe.MatchString(l):
		return &behaviour{Kind: behaviourDark}
	case cartRe.MatchString(l):
		return &behaviour{Kind: behaviourCart}
	case opensRe.MatchString(l):
		m := opensRe.FindStringSubmatch(l)
		return &behaviour{Kind: behaviourOpens, Target: strings.TrimSpace(m[1] + m[2])}
	case submitGoalRe.MatchString(l):
		b := &behaviour{Kind: behaviourSubmits}
		if len(quoted) > 0 {
			b.Text = quoted[len(quoted)-1]
		}
		return b
	case filterRe.MatchString(l):
		return &behaviour{Kind: behaviourFilters, Items: quoted}
	}
	return nil
}

// triggerHook is the test id of the control the goal adds: the feature's, or one named by
// the behaviour.
func (p *pagePlan) triggerHook() string {
	if p.it.feature != nil {
		return p.featureHook()
	}
	switch p.it.behaviour.Kind {
	case behaviourDark:
		return "dark-mode-toggle"
	case behaviourCart:
		return "add-to-cart"
	case behaviourFilters:
		return RouteWord(p.route) + "-search"
	case behaviourOpens:
		return slug(p.it.behaviour.Target) + "-button"
	}
	return RouteWord(p.route) + "-control"
}

func act(typ, sel, value string) contracts.Action {
	return contracts.Action{Type: typ, Selector: sel, Value: value, TimeoutMS: actionTimeoutMS}
}

// behaviourChecks are the criteria of a behaviour goal, or a refusal when no effect of it can
// be stated objectively.
func (p *pagePlan) behaviourChecks(apis []string) ([]candidate, []contracts.TestHook, error) {
	b := p.it.behaviour
	trigger := hookSelector(p.triggerHook())
	var out []candidate
	var hooks []contracts.TestHook
	add := func(c contracts.Criterion, role, why string, prio int) {
		out = append(out, candidate{c: c, role: role, why: why, prio: prio})
	}
	acted := func(id, desc string, a contracts.Assertion, actions ...contracts.Action) contracts.Criterion {
		c := p.crit(p.idFor(id), desc, a, Desktop)
		c.Actions = append(c.Actions, actions...)
		return c
	}
	declare := func(sel, what string) {
		hooks = append(hooks, contracts.TestHook{Selector: sel, Description: what})
	}
	if p.it.feature == nil {
		what := map[string]string{behaviourDark: "the dark mode toggle", behaviourCart: "the add-to-cart button of the first product",
			behaviourFilters: "the search box", behaviourOpens: "the button that opens the " + b.Target}[b.Kind]
		if what != "" {
			declare(trigger, what+" on "+p.route)
			add(p.crit(p.idFor(p.triggerHook()), fmt.Sprintf("At 1440x1000 %s (%s) is visible on %s%s.", what, trigger, p.route, p.suffix()),
				contracts.Assertion{Kind: contracts.KindElementPresent, Selector: trigger, State: contracts.StateVisible}, Desktop),
				RoleChange, "the control the goal adds", 1)
		}
	}
	switch b.Kind {
	case behaviourDark:
		add(p.crit(p.idFor("light-on-load"), fmt.Sprintf("At 1440x1000 %s is light when it loads: the luminance behind <body> is above %g%s.", p.route, LightAbove, p.suffix()),
			contracts.Assertion{Kind: contracts.KindBackground, Selector: "body", Operator: contracts.OpGT, Expected: mustJSON(LightAbove)}, Desktop),
			RoleGuard, "dark mode is something the visitor turns on: the page starts light", 2)
		add(acted("dark-after-toggle", fmt.Sprintf("At 1440x1000, after clicking %s on %s, the page is dark: the luminance behind <body> is below %g%s.", trigger, p.route, DarkBelow, p.suffix()),
			contracts.Assertion{Kind: contracts.KindBackground, Selector: "body", Operator: contracts.OpLT, Expected: mustJSON(DarkBelow)},
			act(contracts.ActionClick, trigger, "")),
			RoleChange, "the toggle must turn the page dark, not merely exist", 0)
	case behaviourOpens:
		target := hookSelector(slug(b.Target))
		declare(target, "the "+b.Target+" the button opens on "+p.route)
		add(p.crit(p.idFor(slug(b.Target)+"-closed"), fmt.Sprintf("At 1440x1000 the %s (%s) is not displayed when %s loads%s.", b.Target, target, p.route, p.suffix()),
			contracts.Assertion{Kind: contracts.KindElementAbsent, Selector: target, State: contracts.StateVisible}, Desktop),
			RoleGuard, "the "+b.Target+" opens on request, so it starts closed", 2)
		add(acted(slug(b.Target)+"-opens", fmt.Sprintf("At 1440x1000, after clicking %s on %s, the %s (%s) is displayed%s.", trigger, p.route, b.Target, target, p.suffix()),
			contracts.Assertion{Kind: contracts.KindElementPresent, Selector: target, State: contracts.StateVisible},
			act(contracts.ActionClick, trigger, "")),
			RoleChange, "the button must open the "+b.Target, 0)
	case behaviourSubmits:
		cs, err := p.submitChecks(apis)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, cs...)
	case behaviourFilters:
		items := b.Items
		if len(items) < 2 {
			items = p.listItems()
		}
		if len(items) < 2 {
			return nil, nil, refusal.New(refusal.NoEffect, fmt.Sprintf("the goal asks for a filter on %s, but names no two items to tell a filtered list from an unfiltered one, and the page's source shows none", p.route),
				`name two items, for example: typing "Hammer" shows Hammer and hides "Wrench"`)
		}
		keep, drop := items[0], items[1]
		add(p.crit(p.idFor("list-on-load"), fmt.Sprintf("At 1440x1000 %s shows %q and %q before anything is typed%s.", p.route, keep, drop, p.suffix()),
			contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{keep, drop}}, Desktop),
			RoleGuard, "the unfiltered list shows both items", 2)
		add(acted("filter-"+slug(keep), fmt.Sprintf("At 1440x1000, after typing %q into %s on %s and pressing Enter, %q is visible and %q is not displayed%s.", keep, trigger, p.route, keep, drop, p.suffix()),
			contracts.Assertion{Kind: contracts.KindAllOf, AllOf: []contracts.Assertion{
				{Kind: contracts.KindVisibleText, Texts: []string{keep}},
				textGone(drop),
			}},
			act(contracts.ActionFill, trigger, keep), contracts.Action{Type: contracts.ActionPress, Selector: trigger, Key: "Enter", TimeoutMS: actionTimeoutMS}),
			RoleChange, "the box must filter the list: the matching item stays, another goes", 0)
	case behaviourCart:
		count := hookSelector("cart-count")
		declare(count, "the number of items in the cart, shown on "+p.route)
		add(acted("cart-count-after-add", fmt.Sprintf("At 1440x1000, after clicking %s on %s, the cart count (%s) shows 1%s.", trigger, p.route, count, p.suffix()),
			contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{"1"}, Within: count},
			act(contracts.ActionClick, trigger, "")),
			RoleChange, "adding must put the item in the cart, not merely show a button", 0)
	}
	return out, hooks, nil
}

// textGone is a measure that no displayed element's own text contains s.
func textGone(s string) contracts.Assertion {
	q := string(mustJSON(s))
	expr := `Array.from(document.querySelectorAll('body *')).filter((e) => e.textContent.includes(` + q + `) && !Array.from(e.children).some((c) => c.textContent.includes(` + q + `)) && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden').length`
	return contracts.Assertion{Kind: contracts.KindMeasure, Expression: expr, Operator: contracts.OpEQ, Expected: mustJSON(0)}
}

// listItems are short texts the page's source renders literally: candidates for a filter's
// items (the base check confirms they show).
func (p *pagePlan) listItems() []string {
	if p.page == nil {
		return nil
	}
	var out []string
	for _, t := range p.page.Anchors.Texts {
		if len(t) <= 24 && !strings.Contains(t, " ") && t[0] >= 'A' && t[0] <= 'Z' && !containsFold(p.page.Anchors.Headings, t) {
			out = append(out, t)
		}
	}
	return out
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// submitChecks fill the page's form, submit it, and read the request it makes (to the
// endpoint the goal names, else one the page or its form sends to) and the confirmation the
// goal quotes.
func (p *pagePlan) submitChecks(apis []string) ([]candidate, error) {
	b := p.it.behaviour
	endpoint := ""
	if len(apis) > 0 {
		endpoint = apis[0]
	} else if p.page != nil {
		for _, f := range p.page.Fetches {
			if a := p.s.APIAt(f); a != nil && containsFold(a.Methods, "POST") {
				endpoint = f
				break
			}
		}
	}
	if endpoint == "" && b.Text == "" {
		return nil, refusal.New(refusal.NoEffect, "the goal asks for a form that submits, but says neither where it sends (an endpoint) nor what the visitor sees afterwards",
			`name the endpoint or quote the confirmation, for example: submits to /api/contact and shows "Thanks"`)
	}
	if p.page == nil || !p.page.Anchors.HasTag("form") || len(p.page.Inputs) == 0 {
		return nil, refusal.New(refusal.NoEffect, "the goal asks for a form that submits on "+p.route+", but the page's source has no form with named inputs to fill",
			"add the form first, or name the page that has it")
	}
	var actions []contracts.Action
	for _, in := range p.page.Inputs {
		actions = append(actions, act(contracts.ActionFill, in.Selector, sampleValue(in.Type)))
	}
	actions = append(actions, act(contracts.ActionClick, `form [type="submit"]`, ""))
	var out []candidate
	mk := func(id, desc string, a contracts.Assertion) contracts.Criterion {
		c := p.crit(p.idFor(id), desc, a, Desktop)
		c.Actions = append(c.Actions, actions...)
		return c
	}
	filled := fmt.Sprintf("after filling the form on %s and clicking its submit button", p.route)
	if endpoint != "" {
		out = append(out, candidate{c: mk("submit-request", fmt.Sprintf("At 1440x1000, %s, the page sends POST %s%s.", filled, endpoint, p.suffix()),
			contracts.Assertion{Kind: contracts.KindRequest, Method: "POST", Path: endpoint}), role: RoleChange, why: "submitting must reach the endpoint", prio: 0})
	}
	if b.Text != "" {
		out = append(out, candidate{c: mk("submit-confirmation", fmt.Sprintf("At 1440x1000, %s, %q is visible%s.", filled, b.Text, p.suffix()),
			contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{b.Text}}), role: RoleChange, why: "the visitor must see that it was sent", prio: 0})
	}
	return out, nil
}

func sampleValue(typ string) string {
	switch typ {
	case "email":
		return "ada@example.com"
	case "tel":
		return "5550100"
	case "number":
		return "1"
	case "url":
		return "https://example.com"
	}
	return "Ada Lovelace"
}
