package criteria

import (
	"regexp"
	"strconv"
	"strings"
)

// Reading a layout change from a goal.
//
// A layout change asks for a page's items in a different structure (cards, a list, stacked
// blocks) at some or all screen widths. The rules read it from the words alone, in two
// strengths:
//
//   - phrases that can only mean a layout: "a card layout", "a mobile card view", "replace the
//     table with cards", "cards instead of the table", "show each row as a card", "each row
//     becomes a card", "a card per symbol", "stack the rows";
//   - phrases that mean one only next to a screen width: "switch to cards under 768px",
//     "show compact cards on phones", "cards on phones".
//
// A single named element ("add a Market Status card to the header") is a feature, not a
// layout; nor are cards placed beside the page's content ("cards above the table"); a
// layout the page already has ("fix the card layout") is not a new one; and a goal
// about phones that names no new structure ("fix the overflow on mobile") is checked by the
// overflow rule alone.

// adj are words that may stand between an article or verb and the new structure.
const adj = `(?:compact|simple|small|smaller|stacked|vertical|responsive|mobile|mobile-friendly|phone-friendly|individual|separate|tappable|touch-friendly|narrow|single-column|one-column|full-width|condensed|stackable)`

var (
	// cards instead of the table
	cardsForRe = regexp.MustCompile(`\b((?:a\s+)?list of (?:cards|tiles)|cards?|card layout|card view|tiles?|a list|list items|stacked (?:rows|blocks|items)|an? accordion)\b[^.;]{0,40}?\b(?:instead of|rather than|in place of|replacing|to replace)\s+(?:the\s+|a\s+|an\s+|its\s+)?(?:[\w-]+\s+){0,2}?(table|grid|columns|rows)\b`)
	// instead of the table, cards
	insteadCardsRe = regexp.MustCompile(`\b(?:instead of|rather than|in place of)\s+(?:the\s+|a\s+|an\s+|its\s+)?(?:[\w-]+\s+){0,2}?(table|grid|columns|rows)\b[^.;]{0,60}?\b((?:a\s+)?list of (?:cards|tiles)|cards|card (?:layout|view|per)|tiles|a list|stacked (?:rows|blocks|items)|accordions?)\b`)
	// replace the table with cards, collapse the table into cards
	replaceRe = regexp.MustCompile(`\b(?:replac|swap|turn|convert|switch|chang|collaps|transform|reflow|break|split)\w*\s+(?:out\s+)?(?:the\s+|its\s+|each\s+|every\s+|all\s+(?:of\s+)?(?:the\s+)?)?(?:[\w-]+\s+){0,2}?(table|grid|columns|rows)\s+(?:out\s+)?(?:with|for|into|to|over\s+to)\s+(?:an?\s+|one\s+)?(?:[\w-]+\s+){0,2}?(cards?|lists?|stacks?|stacked|accordions?|tiles?)\b`)
	// show each symbol as a card, render the rows as compact cards
	showAsRe = regexp.MustCompile(`\b(?:show|display|render|lay(?:s)? out|laid out|present|format|list)\w*\s+(?:each|every|the|all(?:\s+of)?(?:\s+the)?|its|their)\s+(?:[\w'’-]+\s+){1,3}?as\s+(?:an?\s+)?(?:` + adj + `\s+)*((?:a\s+)?list of (?:cards|tiles)|cards?|tiles?|list items?|stacked (?:rows|blocks|items)|accordions?|a list)\b`)
	// each row becomes a card, turn every symbol into a card
	perItemRe = regexp.MustCompile(`\b(?:each|every)\s+(?:[\w'’-]+\s+)?(?:row|item|entry|symbol|ticker|stock|position|holding|line)\s+(?:becomes?|turns?\s+into|(?:is\s+)?(?:shown|displayed|rendered|laid out)\s+as|gets?)\s+(?:its\s+own\s+|an?\s+|one\s+)?(?:` + adj + `\s+)*(card|tile|accordion)\b|\b(?:turn|convert|make|collaps|transform|break)\w*\s+(?:each|every)\s+(?:[\w'’-]+\s+)?(?:row|item|entry|symbol|ticker|stock|position|holding|line)\s+(?:into|to)\s+(?:its\s+own\s+|an?\s+)?(?:` + adj + `\s+)*(card|tile|accordion)\b`)
	// a (compact) card layout, a mobile card view, a list view
	layoutPhraseRe = regexp.MustCompile(`\b(card|tile|list|stacked|accordion)(?:[- ](?:based|style))?\s+(?:layouts?|views?|designs?|formats?|modes?|presentation|version|ui)\b|\b(card)\s+(?:lists?|grids?)\b`)
	// a card per symbol
	cardPerRe = regexp.MustCompile(`\b(?:(?:an?|one)\s+)?(?:` + adj + `\s+)*(card|tile)\s+per\b`)
	// stack the rows, the columns stacked
	stackRe = regexp.MustCompile(`\bstack(?:s|ed|ing)?\s+(?:up\s+)?(?:the\s+|each\s+|every\s+|all\s+(?:of\s+)?(?:the\s+)?|its\s+|their\s+)?(?:[\w'’-]+\s+){0,2}?(rows|items|entries|symbols|tickers|columns|cells|fields|positions|holdings|stocks|lines|values)\b|\b(rows|items|entries|columns|cells|fields)\s+(?:are\s+|get\s+|should\s+be\s+)?stacked\b`)

	// Weak: a change to cards that is a layout only next to a screen width.
	switchToRe    = regexp.MustCompile(`\b(?:switch|mov|chang|flip|convert|collaps|turn|reflow|transform|fall\w*\s+back|break)\w*\s+(?:(?:the|its|this|each|every)\s+)?(?:[\w-]+\s+){0,2}?(?:over\s+)?(?:in)?to\s+(?:an?\s+|one\s+)?(?:` + adj + `\s+)*(cards|tiles|stacks?|stacked\s+(?:rows|blocks|items|cards)|accordions?|lists?)\b|\bbecom\w*\s+(?:an?\s+)?(?:` + adj + `\s+)*(cards|tiles|stacks?|accordions?|lists?)\b`)
	cardForEachRe = regexp.MustCompile(`\b(?:(?:an?|one)\s+)?(?:` + adj + `\s+)*(card|tile)\s+for\s+(?:each|every)\b`)
	pluralCardsRe = regexp.MustCompile(`\b(?:use|uses|using|show|shows|showing|display\w*|render\w*|get|gets|with|in|as|into)\s+(?:` + adj + `\s+)*(cards|tiles)\b|(?:^|[:;,.(]\s*)(?:` + adj + `\s+)*(cards|tiles)\s+(?:on|for|below|under|at|in|when|beneath)\b`)

	// existingRe ends text that makes the following structure one the page already has.
	existingRe = regexp.MustCompile(`\b(?:(?:fix|repair|debug|tweak|adjust|correct|restyle|polish)\w*\s+(?:the|its|our|this)\s+(?:[\w-]+\s+)?|(?:existing|current|old)\s+(?:[\w-]+\s+)?)$`)
	// besideRe follows a structure placed next to another element ("cards above the
	// table"): an addition to the page, not its items in a new structure.
	besideRe = regexp.MustCompile(`^\s+(?:above|below|under|over|beneath|next to|beside|alongside|on top of|at the (?:top|bottom) of)\s+(?:the|a|an|its)\s+(?:[\w-]+\s+)?(?:table|header|heading|title|chart|page|nav|navigation|footer|form|summary|banner|section|list|sidebar)\b`)
	// oldMentionRe finds the structure the goal says is being replaced.
	oldMentionRe = regexp.MustCompile(`\b(tables?|grid|rows|columns)\b`)
)

// Breakpoints: the first width at which the narrow layout no longer applies.
var (
	belowRe     = regexp.MustCompile(`(?:below|under|beneath|<|less than|smaller than|narrower than)\s*(?:the\s+|a\s+)?(?:breakpoint\s+(?:of\s+)?)?(\d{3,4})`)
	upToRe      = regexp.MustCompile(`(?:up to|max-width:?|at most|<=|≤|no wider than|not wider than)\s*(\d{3,4})`)
	andBelowRe  = regexp.MustCompile(`(\d{3,4})\s*(?:px|pixels)?\s*(?:wide\s+)?(?:and below|and under|or less|or narrower|and narrower|and smaller|or smaller|and down|or below)`)
	breakNameRe = regexp.MustCompile(`(\d{3,4})\s*(?:px|pixels)?\s+breakpoint|breakpoint\s+(?:of\s+|at\s+)?(\d{3,4})`)
)

// readLayout returns the layout change a goal (in lower case) asks for, or nil.
func readLayout(l string) *layoutChange {
	lc := findLayout(l)
	if lc == nil {
		return nil
	}
	lc.Breakpoint = readBreakpoint(l)
	if lc.From == "" {
		if m := oldMentionRe.FindStringSubmatch(l); m != nil {
			lc.From = layoutSource(m[1])
		}
	}
	return lc
}

func findLayout(l string) *layoutChange {
	if m := cardsForRe.FindStringSubmatch(l); m != nil {
		return &layoutChange{To: layoutTarget(m[1]), From: layoutSource(m[2])}
	}
	if m := insteadCardsRe.FindStringSubmatch(l); m != nil {
		return &layoutChange{To: layoutTarget(m[2]), From: layoutSource(m[1])}
	}
	if m := replaceRe.FindStringSubmatch(l); m != nil {
		return &layoutChange{From: layoutSource(m[1]), To: layoutTarget(m[2])}
	}
	for _, re := range []*regexp.Regexp{showAsRe, perItemRe, layoutPhraseRe, cardPerRe, stackRe} {
		if w := newStructure(l, re); w != "" {
			return &layoutChange{To: layoutTarget(w)}
		}
	}
	if !mobileRe.MatchString(l) && readBreakpoint(l) == 0 {
		return nil
	}
	for _, re := range []*regexp.Regexp{switchToRe, cardForEachRe, pluralCardsRe} {
		if w := newStructure(l, re); w != "" {
			return &layoutChange{To: layoutTarget(w)}
		}
	}
	return nil
}

// newStructure returns the structure word of the first match of re that is not a structure the
// page already has ("fix the card layout"), or "".
func newStructure(l string, re *regexp.Regexp) string {
	for _, m := range re.FindAllStringSubmatchIndex(l, -1) {
		if existingRe.MatchString(l[:m[0]]) || besideRe.MatchString(l[m[1]:]) {
			continue
		}
		for g := 1; 2*g+1 < len(m); g++ {
			if m[2*g] >= 0 {
				return l[m[2*g]:m[2*g+1]]
			}
		}
	}
	return ""
}

// notWidthRe follows a number that is not a width ("under 1000 ms").
var notWidthRe = regexp.MustCompile(`^\s*(?:ms|milliseconds?|s|secs?|seconds?|%|percent|kb|mb|rows?|items?|users?|symbols?|dollars?|usd)\b`)

// readBreakpoint returns the width the goal names as the narrow layout's upper bound
// (exclusive), or 0.
func readBreakpoint(l string) int {
	width := func(re *regexp.Regexp) int {
		for _, m := range re.FindAllStringSubmatchIndex(l, -1) {
			for g := 1; 2*g+1 < len(m); g++ {
				if m[2*g] < 0 {
					continue
				}
				n, _ := strconv.Atoi(l[m[2*g]:m[2*g+1]])
				if n >= 320 && n <= 2560 && !notWidthRe.MatchString(l[m[2*g+1]:]) {
					return n
				}
			}
		}
		return 0
	}
	if n := width(belowRe); n > 0 {
		return n
	}
	if n := width(upToRe); n > 0 {
		return n + 1
	}
	if n := width(andBelowRe); n > 0 {
		return n + 1
	}
	return width(breakNameRe)
}

// layoutTarget names the new structure: "card", "accordion" or "item" (a list entry or a
// stacked block).
func layoutTarget(w string) string {
	switch {
	case strings.Contains(w, "card"), strings.Contains(w, "tile"):
		return "card"
	case strings.Contains(w, "accordion"):
		return "accordion"
	}
	return "item"
}

// layoutSource names the structure being replaced: a table (its rows and columns too) or a
// grid.
func layoutSource(w string) string {
	if w == "grid" {
		return "grid"
	}
	return "table"
}
