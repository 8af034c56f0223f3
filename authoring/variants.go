package authoring

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"

	"github.com/signoff/signoff/contracts"
)

// A contract proves before it is quoted that it rejects lazy work: LazyVariants makes, from
// the contract's own criteria, the edits a lazy implementation would make to the base page,
// the base check runs every criterion on each, and JudgeBase refuses a contract that any
// variant satisfies. The variants are Signoff's own edits (contracts.Variant), applied by the
// verifier's browser to the served base; nothing is built and no repository code runs them.

// hookRe is a test hook selector: one attribute with a value ([data-testid="x"]).
var hookRe = regexp.MustCompile(`^\[([a-z][a-z0-9_.-]*)=(?:"([^"\\]*)"|'([^'\\]*)'|([A-Za-z0-9_-]+))\]$`)

// hookOf returns the attribute and value of a test hook selector.
func hookOf(sel string) (attr, value string, ok bool) {
	m := hookRe.FindStringSubmatch(strings.TrimSpace(sel))
	if m == nil {
		return "", "", false
	}
	return m[1], m[2] + m[3] + m[4], true
}

// hooksOnExistingCount is how many of the main region's existing blocks a hook goes on: two
// is what "stacked" needs, a third keeps a count-based check honest.
const hooksOnExistingCount = 3

// criterionParts is what the variants need from the criteria.
type criterionParts struct {
	hooks  [][2]string // attribute, value; in first-seen order
	acted  []string    // selectors that actions click, fill or press
	named  []placedOp  // the elements and texts assertions look for, on their routes
	placed []placedOp  // the elements position assertions place, at the other end
	copies []placedOp  // block copies of the elements a stacked assertion arranges, by role
	// headings: a heading the change is to show, by route.
	headings map[string]string
	routes   []string
}

type placedOp struct {
	route string
	op    contracts.VariantOp
}

// LazyVariants returns the lazy variants of c's goal that its criteria should reject. A
// contract whose criteria name nothing a variant could fake gets none.
func LazyVariants(c contracts.Contract) []contracts.Variant {
	p := partsOf(c)
	hookOps := make([]contracts.VariantOp, 0, len(p.hooks))
	var hookNames []string
	for _, h := range p.hooks {
		hookOps = append(hookOps, contracts.VariantOp{Op: contracts.VariantOpHook, Attr: h[0], Value: h[1], Count: hooksOnExistingCount})
		hookNames = append(hookNames, fmt.Sprintf("[%s=%q]", h[0], h[1]))
	}
	var out []contracts.Variant
	add := func(v contracts.Variant) {
		if len(v.Ops) > contracts.MaxVariantOps {
			v.Ops = v.Ops[:contracts.MaxVariantOps]
		}
		if len(v.Ops) > 0 && contracts.ValidateVariant(v) == nil {
			out = append(out, v)
		}
	}
	if len(hookOps) > 0 {
		add(contracts.Variant{Name: contracts.VariantHooks, Ops: slices.Clone(hookOps),
			Says: "puts " + strings.Join(hookNames, ", ") + " on blocks the base page already has, changing nothing else"})
	}
	if len(p.acted) > 0 {
		ops := slices.Clone(hookOps)
		for _, n := range p.named {
			n.op.Route = n.route
			ops = append(ops, n.op)
		}
		add(contracts.Variant{Name: contracts.VariantInert, Ops: ops,
			Says: "adds every control and text the criteria look for, with no behaviour (a click, a fill or a key press does nothing)"})
	}
	if len(p.placed) > 0 {
		ops := slices.Clone(hookOps)
		var what []string
		for _, n := range p.placed {
			n.op.Route = n.route
			ops = append(ops, n.op)
			what = append(what, fmt.Sprintf("%q at the %s of %s", n.op.Text+n.op.Value, n.op.Where, n.route))
		}
		add(contracts.Variant{Name: contracts.VariantWrongPlace, Ops: ops,
			Says: "adds the placed element at the other end of the page: " + strings.Join(what, ", ")})
	}
	if len(p.copies) > 0 {
		ops := slices.Clone(hookOps)
		var what []string
		for _, n := range p.copies {
			n.op.Route = n.route
			ops = append(ops, n.op)
			what = append(what, fmt.Sprintf("%q", n.op.Text))
		}
		add(contracts.Variant{Name: contracts.VariantCopies, Ops: ops,
			Says: "adds copies of " + strings.Join(what, ", ") + " one above the other at the end of the page, leaving the originals as they were"})
	}
	for _, route := range p.routes {
		heading, ok := p.headings[route]
		if !ok {
			continue
		}
		var others []string
		for _, r := range p.routes {
			if r != route {
				others = append(others, r)
			}
		}
		if len(others) == 0 {
			continue
		}
		ops := []contracts.VariantOp{{Op: contracts.VariantOpRetext, Route: route, Text: heading}}
		for _, r := range others {
			ops = append(ops, contracts.VariantOp{Op: contracts.VariantOpRetext, Route: r, Text: heading})
		}
		add(contracts.Variant{Name: contracts.VariantOtherPage, Ops: ops,
			Says: fmt.Sprintf("makes the heading %q on %s and on %s too", heading, route, strings.Join(others, ", "))})
		break // one page's heading change is the goal; more would be another contract
	}
	return out
}

func partsOf(c contracts.Contract) criterionParts {
	p := criterionParts{headings: map[string]string{}}
	seenHook := map[[2]string]bool{}
	noteHook := func(sel string) {
		if a, v, ok := hookOf(sel); ok && !seenHook[[2]string{a, v}] {
			seenHook[[2]string{a, v}] = true
			p.hooks = append(p.hooks, [2]string{a, v})
		}
	}
	// The texts criteria want inside a hook: an inserted hooked element carries them, so a
	// variant is told apart by where it is or what it does, not by lacking the words.
	hookTexts := map[string]string{}
	for _, cr := range c.Criteria {
		walkAssertions(cr.Assert, func(a contracts.Assertion) {
			if _, _, ok := hookOf(a.Within); ok && a.Kind == contracts.KindVisibleText && hookTexts[a.Within] == "" {
				if t := strings.Join(a.Texts, " "); len(t) <= contracts.MaxVariantText {
					hookTexts[a.Within] = t
				}
			}
		})
	}
	elementFor := func(sel, where string) (contracts.VariantOp, bool) {
		op, ok := elementFor(sel, where)
		if t := hookTexts[strings.TrimSpace(sel)]; ok && t != "" && op.Attr != "" {
			op.Text = t
		}
		return op, ok
	}
	seenNamed := map[string]bool{}
	name := func(route string, op contracts.VariantOp) {
		k := route + "\x00" + op.Tag + "\x00" + op.Attr + "\x00" + op.Value + "\x00" + op.Text
		if !seenNamed[k] && len(p.named) < contracts.MaxVariantOps/2 {
			seenNamed[k] = true
			p.named = append(p.named, placedOp{route, op})
		}
	}
	for _, cr := range c.Criteria {
		if !slices.Contains(p.routes, cr.Route) && cr.Assert.Kind != contracts.KindHTTP {
			p.routes = append(p.routes, cr.Route)
		}
		for _, a := range cr.Actions {
			noteHook(a.Selector)
			switch a.Type {
			case contracts.ActionClick, contracts.ActionFill, contracts.ActionPress:
				if a.Selector == "" {
					continue
				}
				p.acted = append(p.acted, a.Selector)
				if op, ok := elementFor(a.Selector, contracts.VariantEnd); ok {
					name(cr.Route, op)
				}
			}
		}
		walkAssertions(cr.Assert, func(a contracts.Assertion) {
			for _, s := range []string{a.Selector, a.Within, a.Before, a.After, a.Beside} {
				noteHook(s)
			}
			switch a.Kind {
			case contracts.KindVisibleText:
				for _, t := range a.Texts {
					if t != "" && len(t) <= contracts.MaxVariantText {
						name(cr.Route, contracts.VariantOp{Op: contracts.VariantOpInsert, Tag: "p", Text: t, Where: contracts.VariantEnd})
					}
				}
			case contracts.KindElementPresent, contracts.KindInViewport, contracts.KindAttribute, contracts.KindBackground:
				if op, ok := elementFor(a.Selector, contracts.VariantEnd); ok {
					name(cr.Route, op)
				}
				if l, err := contracts.ParseRoleLocator(a.Selector); err == nil && contracts.IsRoleLocator(a.Selector) && l.Role == "heading" && a.Kind == contracts.KindElementPresent {
					if ns := namesOf(l); len(ns) == 1 {
						if _, dup := p.headings[cr.Route]; !dup {
							p.headings[cr.Route] = ns[0]
						}
					}
				}
			case contracts.KindStacked:
				if l, err := contracts.ParseRoleLocator(a.Selector); err == nil && contracts.IsRoleLocator(a.Selector) {
					for _, n := range namesOf(l) {
						p.copies = append(p.copies, placedOp{cr.Route, contracts.VariantOp{Op: contracts.VariantOpInsert, Tag: "div", Role: l.Role, Text: n, Where: contracts.VariantEnd}})
					}
				}
				if op, ok := elementFor(a.Selector, contracts.VariantEnd); ok {
					name(cr.Route, op)
				}
			case contracts.KindPosition:
				// The other end: above everything for "at the bottom" or "below X", below
				// everything for "at the top", "above X" or "next to X" (a row of its own).
				where := contracts.VariantEnd
				if a.Place == contracts.PlaceLastViewport || (a.Place == "" && a.After != "") {
					where = contracts.VariantStart
				}
				if a.Place != "" || a.After != "" || a.Before != "" || a.Beside != "" {
					if op, ok := elementFor(a.Selector, where); ok {
						p.placed = append(p.placed, placedOp{cr.Route, op})
					}
				}
				if op, ok := elementFor(a.Selector, contracts.VariantEnd); ok {
					name(cr.Route, op)
				}
			}
		})
	}
	return p
}

// walkAssertions calls f on a and every assertion nested in it.
func walkAssertions(a contracts.Assertion, f func(contracts.Assertion)) {
	f(a)
	for _, n := range a.AllOf {
		walkAssertions(n, f)
	}
}

// elementFor is an inert element a selector finds: a test hook on a block, or an element of
// the role and name a role locator asks for.
func elementFor(sel, where string) (contracts.VariantOp, bool) {
	op := contracts.VariantOp{Op: contracts.VariantOpInsert, Where: where}
	if a, v, ok := hookOf(sel); ok {
		op.Tag, op.Attr, op.Value, op.Text = "div", a, v, strings.ReplaceAll(v, "-", " ")
		return op, true
	}
	if !contracts.IsRoleLocator(sel) {
		return op, false
	}
	l, err := contracts.ParseRoleLocator(sel)
	if err != nil {
		return op, false
	}
	names := namesOf(l)
	if len(names) == 0 {
		return op, false
	}
	op.Text = names[0]
	switch l.Role {
	case "link":
		op.Tag = "a"
	case "button":
		op.Tag = "button"
	case "heading":
		op.Tag = "h2"
		if l.Level == 1 {
			op.Tag = "h1"
		}
	case "textbox", "searchbox":
		op.Tag = "input"
	case "paragraph":
		op.Tag = "p"
	case "checkbox", "switch", "tab", "menuitem":
		op.Tag, op.Role = "button", l.Role
	default:
		op.Tag, op.Role = "div", l.Role
	}
	return op, true
}

// namesOf returns the accessible names a role locator matches when they are literal: its
// quoted name, or each alternative of an anchored alternation of literals.
func namesOf(l contracts.RoleLocator) []string {
	switch l.NameMode {
	case contracts.NameSubstring, contracts.NameExactI, contracts.NameExact:
		if l.Name == "" {
			return nil
		}
		return []string{l.Name}
	case contracts.NameRegexp, contracts.NameRegexpI:
		body := strings.TrimSuffix(strings.TrimPrefix(l.Name, "^"), "$")
		if strings.HasPrefix(body, "(?:") && strings.HasSuffix(body, ")") {
			body = body[3 : len(body)-1]
		}
		var out []string
		for _, alt := range splitAlternatives(body) {
			re, err := syntax.Parse(alt, syntax.Perl)
			if err != nil || re.Op != syntax.OpLiteral {
				return nil
			}
			out = append(out, string(re.Rune))
		}
		return out
	}
	return nil
}

// splitAlternatives splits a pattern at its top-level, unescaped bars.
func splitAlternatives(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '(':
			depth++
		case ')':
			depth--
		case '|':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}
