package criteria

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/signoff/signoff/authoring/survey"
	"github.com/signoff/signoff/contracts"
)

// Scope: a goal about one part of a page ("the header must not overflow on phones") checks
// overflow within that part, so what the rest of the page does cannot fail a fix of the part
// asked for. The page-level overflow check stays as a guard, and the base check leaves it out
// of the contract when the base already fails it (Author.Draft, omitPreexisting).
//
// Site-wide: a goal about a part every page shares ("the header on every page") is checked
// on the pages the survey found that render it, up to SiteWideRoutes of them.

// SiteWideRoutes bounds the pages a site-wide goal is checked on. A contract holds at most
// contracts.MaxCriteria criteria; one per page, and one left for a guard.
const SiteWideRoutes = contracts.MaxCriteria - 1

var (
	regionRe     = regexp.MustCompile(`\b(header|footer|nav|navigation|navbar|nav bar|sidebar)\b`)
	overflowRe   = regexp.MustCompile(`\b(?:overflow\w*|fits?|fitting|scroll(?:s|ing)? (?:sideways|horizontally)|horizontal(?:ly)? scroll\w*|cut off|wider than)\b`)
	sitewideRe   = regexp.MustCompile(`\b(?:every|all(?: the)?|each|any)\s+(?:pages?|screens?|routes?)\b|\bsite[- ]wide\b|\beverywhere\b|\bacross the (?:site|app)\b`)
	regionTagFor = map[string]string{"header": "header", "footer": "footer", "nav": "nav", "navigation": "nav", "navbar": "nav", "nav bar": "nav", "sidebar": "aside"}
)

// readRegion returns the tag of the page part a goal (lower case) is about, or "".
func readRegion(l string) string {
	if m := regionRe.FindStringSubmatch(l); m != nil {
		return regionTagFor[m[1]]
	}
	return ""
}

// noScrollers is what a phone-width overflow criterion assumes, said in its description so the
// quote shows it: the contract does not set allow_scrollers.
const noScrollers = " (scrollers allowed: no: a table or picture wider than the screen in a sideways scroller counts)"

// overflowScoped reports whether the goal asks that one part of the page fit.
func (in *intent) overflowScoped() bool {
	return in.region != "" && overflowRe.MatchString(in.lower)
}

// regionOverflowCheck: nothing inside the region reaches past the phone's edge.
func (p *pagePlan) regionOverflowCheck() contracts.Criterion {
	tag := p.it.region
	return p.crit(p.idFor(regionWord(tag)+"-no-overflow"), fmt.Sprintf("At 390x844 nothing inside the %s (<%s>) of %s reaches past the screen's edge or is cut off%s.", regionWord(tag), tag, p.route, p.suffix()),
		contracts.Assertion{Kind: contracts.KindNoHorizontalOverflow, Within: tag}, Mobile)
}

// sitewidePages picks the pages a site-wide goal is checked on: every static public page
// that renders the region (itself or through a layout), the home page first, at most
// SiteWideRoutes; the note says which were checked and which left out.
func sitewidePages(s *survey.Survey, region string) (pages []string, note string) {
	var all []string
	for _, pg := range s.Pages {
		if pg.Dynamic || pg.Auth != nil || !pg.HasRegion(region) {
			continue
		}
		if pg.Route == "/" {
			all = append([]string{pg.Route}, all...)
		} else {
			all = append(all, pg.Route)
		}
	}
	if len(all) <= SiteWideRoutes {
		return all, fmt.Sprintf("site-wide: checked on every page that renders the %s: %s", regionWord(region), strings.Join(all, ", "))
	}
	return all[:SiteWideRoutes], fmt.Sprintf("site-wide: checked on %s (at most %d pages a contract); left out: %s",
		strings.Join(all[:SiteWideRoutes], ", "), SiteWideRoutes, strings.Join(all[SiteWideRoutes:], ", "))
}

// sharedRegionPages are the pages a goal about a shared part, named without a page, is
// checked on: for a fit on phones every page that renders the part (up to SiteWideRoutes, as
// a site-wide goal), for anything else the first of them (the home page when it renders the
// part), since a part the layouts share is the same on each. None when no page renders it.
func sharedRegionPages(s *survey.Survey, it *intent) []string {
	all, note := sitewidePages(s, it.region)
	if len(all) == 0 {
		return nil
	}
	if it.overflowScoped() {
		it.sitewide = true // checked like "the header on every page"
		it.sitewideNote = note
		return all
	}
	it.sitewideNote = fmt.Sprintf("the goal names the %s and no page: checked on %s, the first page that renders it", regionWord(it.region), all[0])
	return all[:1]
}

// whyDefaultGuard is the plan's reason for the guard a one-page goal gets without asking.
const whyDefaultGuard = "a goal about one page leaves the other pages as they are"

// maxOtherPageGuards bounds the pages a "without changing other pages" goal guards: each is a
// page load per viewport in every verification.
const maxOtherPageGuards = 2

// otherPageGuards are the criteria of "without changing the other pages": on the first (at
// most max) other surveyed pages that are public, static and have a heading, their heading and
// up to two texts of their own (not their layout's) still show at both viewports. A change that
// also edits one of them fails a criterion on that page's route. byDefault marks the guard every
// one-page goal gets without asking: it says so, and it is dropped first from a full contract.
func otherPageGuards(s *survey.Survey, targets []string, max int, byDefault bool) ([]candidate, string) {
	var out []candidate
	var guarded []string
	for i := range s.Pages {
		pg := &s.Pages[i]
		if slices.Contains(targets, pg.Route) || pg.Dynamic || pg.Auth != nil || len(pg.Anchors.Headings) == 0 {
			continue
		}
		if len(out) == max {
			break
		}
		texts := []string{pg.Anchors.Headings[0]}
		for _, t := range pg.Anchors.Texts {
			if len(texts) < 3 && t != texts[0] && !slices.Contains(pg.Frame.Texts, t) && !strings.Contains(t, ":") {
				texts = append(texts, t)
			}
		}
		pp := &pagePlan{s: s, it: &intent{}, route: pg.Route, page: pg, budget: 30000}
		// The texts from the survey, and the main region's structure as the base check
		// observes it (the Author fills the structure in from the base check before the
		// quote: StructureFromBase).
		c := pp.crit("unchanged-"+RouteWord(pg.Route), fmt.Sprintf("The goal leaves other pages as they are: at 1440x1000 and 390x844 %s still shows %s, and its main region has the headings, links, buttons, images, lists and controls it has on the base commit.", pg.Route, humanList(quoteAll(texts), "and")),
			contracts.Assertion{Kind: contracts.KindAllOf, AllOf: []contracts.Assertion{{Kind: contracts.KindVisibleText, Texts: texts}, {Kind: contracts.KindStructure}}}, Desktop, Mobile)
		cand := candidate{c: c, role: RoleGuard, why: "the goal says the other pages stay as they are", prio: 1}
		if byDefault {
			cand.why, cand.prio = whyDefaultGuard, 3 // after the page's own guards, no-page-errors too
		}
		out = append(out, cand)
		guarded = append(guarded, pg.Route)
	}
	if len(guarded) == 0 {
		return nil, "not checked: that other pages stay as they are (the survey found no other public page with a heading)"
	}
	if byDefault {
		return out, fmt.Sprintf("other pages guarded by default (the goal is about one page): %s (its heading and texts, and its main region's structure as the base check sees it)", strings.Join(guarded, ", "))
	}
	return out, fmt.Sprintf("other pages guarded: %s (their heading and texts, and their main region's structure as the base check sees it; at most %d pages)", strings.Join(guarded, ", "), max)
}
