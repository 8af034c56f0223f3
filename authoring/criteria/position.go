package criteria

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/signoff/signoff/contracts"
)

// Position and arrangement goals say where an element goes or how items sit: "stack the
// plan cards vertically" (each box below the previous one, left edges aligned), "a banner at
// the top of the page" (in the first screen, before the page's <main>), "a link at the
// bottom" (in the last screen, after <main>), "a link to X" (the href, and a click that
// arrives at X).

const (
	arrangeStacked = "stacked"
	arrangeTop     = "top"
	arrangeBottom  = "bottom"
)

type arrangement struct {
	Kind string
	// Items names what stacks ("plan cards").
	Items string
}

var (
	stackVertRe = regexp.MustCompile(`\bstack(?:s|ed|ing)?\s+(?:up\s+)?((?:the|its|their|all|each)\s+)?((?:[a-z][\w-]*\s+){1,3}?)(?:vertically|on top of each other|one (?:above|below|under) (?:the )?(?:other|another))\b`)
	// "the plan cards stack vertically": the items come before the verb.
	itemsStackRe = regexp.MustCompile(`\b((?:[a-z][\w-]*\s+){1,5})stack(?:s)?\s+(?:up\s+)?(?:vertically|on top of each other|one (?:above|below|under) (?:the )?(?:other|another))\b`)
	topRe        = regexp.MustCompile(`\bat the (?:very )?top\b(?:\s+of\s+(?:the\s+)?([\w/-]+))?`)
	bottomRe     = regexp.MustCompile(`\bat the (?:very )?bottom\b(?:\s+of\s+(?:the\s+)?([\w/-]+))?`)
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

// itemsHook is the selector of the items a stacking goal names: a test id the page already
// has whose words match, else a hook the contract declares.
func (p *pagePlan) itemsHook() (string, *contracts.TestHook) {
	words := strings.Fields(p.it.arrange.Items)
	for i, w := range words {
		words[i] = strings.TrimSuffix(w, "s")
	}
	want := strings.Join(words, "-")
	if p.page != nil {
		for _, t := range p.page.Anchors.TestIDs {
			if t.ID == want || strings.HasSuffix(want, "-"+t.ID) || strings.HasSuffix(t.ID, "-"+want) {
				return hookSelector(t.ID), nil
			}
		}
	}
	sel := hookSelector(slug(want))
	return sel, &contracts.TestHook{Selector: sel, Description: "each of the " + p.it.arrange.Items + " on " + p.route}
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
		sel, hook := p.itemsHook()
		if hook != nil {
			hooks = append(hooks, *hook)
		}
		c := p.crit(p.idFor("stacked-"+slug(ar.Items)), fmt.Sprintf("At %s the %s (%s) on %s stack vertically: each starts at or below the previous one's bottom, left edges within %g px%s.",
			vpNames(vps), ar.Items, sel, p.route, contracts.StackLeftTolerancePx, p.suffix()),
			contracts.Assertion{Kind: contracts.KindStacked, Selector: sel}, vps...)
		return []candidate{{c: c, role: RoleChange, why: "the goal asks for the items one above another", prio: 0}}, hooks
	case arrangeTop, arrangeBottom:
		if p.it.feature == nil {
			return nil, nil
		}
		sel := hookSelector(p.featureHook())
		a := contracts.Assertion{Kind: contracts.KindPosition, Selector: sel, Place: contracts.PlaceFirstViewport}
		where := "in the first screen"
		if ar.Kind == arrangeBottom {
			a.Place, where = contracts.PlaceLastViewport, "in the last screen"
		}
		// Before or after the page's own main content, when the page renders a <main> of its
		// own (inside a layout's <main> the element could not be outside it).
		if p.page != nil && p.page.Anchors.HasTag("main") {
			if ar.Kind == arrangeTop {
				a.Before, where = "main", where+", above the page's <main>"
			} else {
				a.After, where = "main", where+", below the page's <main>"
			}
		}
		c := p.crit(p.idFor(p.featureHook()+"-"+ar.Kind), fmt.Sprintf("At %s the %s (%s) is at the %s of %s: %s%s.", vpNames(vps), featureName(p.it.feature), sel, ar.Kind, p.route, where, p.suffix()),
			a, vps...)
		return []candidate{{c: c, role: RoleChange, why: "the goal says where the element goes", prio: 1}}, nil
	}
	return nil, nil
}

// linkNavCheck clicks the link the goal adds and reads where the page arrives.
func (p *pagePlan) linkNavCheck(hookID, dest string) contracts.Criterion {
	sel := hookSelector(hookID)
	c := p.crit(p.idFor(hookID+"-goes"), fmt.Sprintf("At 1440x1000, after clicking the %s link on %s, the page is at %s%s.", featureName(p.it.feature), p.route, dest, p.suffix()),
		contracts.Assertion{Kind: contracts.KindURL, Operator: contracts.OpEQ, Expected: mustJSON(dest)}, Desktop)
	c.Actions = append(c.Actions, act(contracts.ActionClick, sel, ""))
	return c
}
