package contracts

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// A selector in a contract is CSS, or a user-facing locator in Playwright's role syntax:
//
//	role=link[name="Docs"i]
//	role=link[name=/^(Docs|GitHub)$/i]
//	role=heading[level=1][name="My Projects"i]
//
// A role locator finds elements by what a person perceives: their ARIA role (explicit or implied
// by the tag) and accessible name. It is how a criterion addresses something the user named: an
// implementation cannot satisfy it by putting a test hook on some other element. The verifier's
// probe and Playwright's actions read the same syntax.
//
// Name matching: "x" is a case-insensitive substring; "x"i whole and case-insensitive; "x"s whole
// and case-sensitive; /re/ and /re/i a regular expression (kept to the common subset of RE2 and
// JavaScript: no look-around, no back-references).

// RolePrefix starts a role locator.
const RolePrefix = "role="

// Limits on a role locator, which the verifier compiles in the page.
const (
	MaxLocatorBytes = 512
	maxNamePattern  = 256
)

// RoleLocator is a parsed role locator.
type RoleLocator struct {
	Role string
	// Name is the accessible name to match ("" matches any); NameMode says how.
	Name     string
	NameMode string
	// Level is a heading's level (0: any).
	Level int
}

// Name matching modes.
const (
	NameSubstring = "substring" // "x": contains, ignoring case
	NameExactI    = "exact_i"   // "x"i: equals, ignoring case
	NameExact     = "exact"     // "x"s: equals
	NameRegexp    = "regexp"    // /x/
	NameRegexpI   = "regexp_i"  // /x/i
)

// Roles a locator may name: the ARIA roles a page's elements take, explicitly or by their tag.
var knownRoles = map[string]bool{}

func init() {
	for _, r := range strings.Fields(`alert alertdialog article banner blockquote button caption cell checkbox
		code columnheader combobox complementary contentinfo definition deletion dialog directory document
		emphasis feed figure form generic grid gridcell group heading img insertion link list listbox
		listitem log main marquee math menu menubar menuitem menuitemcheckbox menuitemradio meter navigation
		none note option paragraph presentation progressbar radio radiogroup region row rowgroup
		rowheader scrollbar search searchbox separator slider spinbutton status strong subscript
		superscript switch tab table tablist tabpanel term textbox time timer toolbar tooltip tree
		treegrid treeitem`) {
		knownRoles[r] = true
	}
}

var (
	roleHeadRe  = regexp.MustCompile(`^role=([a-z]+)`)
	roleAttrRe  = regexp.MustCompile(`^\[(name|level)=`)
	quotedRe    = regexp.MustCompile(`^"((?:[^"\\]|\\.)*)"([is]?)\]`)
	regexNameRe = regexp.MustCompile(`^/((?:[^/\\\n]|\\.)+)/(i?)\]`)
	levelRe     = regexp.MustCompile(`^([1-6])\]`)
	// Look-around and back-references mean different things, or nothing, in one of the two
	// engines: refuse them rather than judge by a pattern the reader did not mean.
	unportableRe = regexp.MustCompile(`\(\?[=!<]|\\[1-9]|\\k<`)
)

// IsRoleLocator reports whether a selector is a role locator (else it is CSS).
func IsRoleLocator(sel string) bool { return strings.HasPrefix(sel, RolePrefix) }

// ParseRoleLocator parses a role locator, refusing anything outside the syntax above.
func ParseRoleLocator(sel string) (RoleLocator, error) {
	var l RoleLocator
	if len(sel) > MaxLocatorBytes {
		return l, fmt.Errorf("locator longer than %d bytes", MaxLocatorBytes)
	}
	m := roleHeadRe.FindStringSubmatch(sel)
	if m == nil {
		return l, fmt.Errorf("locator %q: want role=<role>[name=...]", sel)
	}
	if !knownRoles[m[1]] {
		return l, fmt.Errorf("locator %q: %q is not an ARIA role", sel, m[1])
	}
	l.Role = m[1]
	rest := sel[len(m[0]):]
	seen := map[string]bool{}
	for rest != "" {
		am := roleAttrRe.FindStringSubmatch(rest)
		if am == nil || seen[am[1]] {
			return l, fmt.Errorf("locator %q: unexpected %q (want [name=\"...\"], [name=/.../] or [level=N], each once)", sel, rest)
		}
		seen[am[1]] = true
		rest = rest[len(am[0]):]
		switch am[1] {
		case "level":
			lm := levelRe.FindStringSubmatch(rest)
			if lm == nil || l.Role != "heading" {
				return l, fmt.Errorf("locator %q: level is a heading's, 1 to 6", sel)
			}
			l.Level, _ = strconv.Atoi(lm[1])
			rest = rest[len(lm[0]):]
		case "name":
			if qm := quotedRe.FindStringSubmatch(rest); qm != nil {
				var name string
				if err := json.Unmarshal([]byte(`"`+qm[1]+`"`), &name); err != nil {
					return l, fmt.Errorf("locator %q: name: %w", sel, err)
				}
				l.Name, l.NameMode = name, map[string]string{"": NameSubstring, "i": NameExactI, "s": NameExact}[qm[2]]
				rest = rest[len(qm[0]):]
				continue
			}
			rm := regexNameRe.FindStringSubmatch(rest)
			if rm == nil {
				return l, fmt.Errorf("locator %q: name must be \"text\" (optionally followed by i or s) or /pattern/", sel)
			}
			if len(rm[1]) > maxNamePattern || unportableRe.MatchString(rm[1]) {
				return l, fmt.Errorf("locator %q: name pattern is longer than %d bytes or uses look-around or back-references", sel, maxNamePattern)
			}
			if _, err := regexp.Compile(rm[1]); err != nil {
				return l, fmt.Errorf("locator %q: name pattern: %w", sel, err)
			}
			l.Name, l.NameMode = rm[1], NameRegexp
			if rm[2] == "i" {
				l.NameMode = NameRegexpI
			}
			rest = rest[len(rm[0]):]
		}
	}
	return l, nil
}

// RoleSelector writes a role locator whose name is one of names, whole and ignoring case. One
// name is quoted; several become an anchored alternation.
func RoleSelector(role string, names ...string) string {
	switch len(names) {
	case 0:
		return RolePrefix + role
	case 1:
		q, _ := json.Marshal(names[0])
		return RolePrefix + role + "[name=" + string(q) + "i]"
	}
	alts := make([]string, len(names))
	for i, n := range names {
		alts[i] = regexp.QuoteMeta(n)
	}
	return RolePrefix + role + "[name=/^(?:" + strings.Join(alts, "|") + ")$/i]"
}

// DescribeLocator says in words what a selector finds, for criterion descriptions and failures.
func DescribeLocator(sel string) string {
	l, err := ParseRoleLocator(sel)
	if !IsRoleLocator(sel) || err != nil {
		return sel
	}
	what := "the " + l.Role
	if l.Level > 0 {
		what = fmt.Sprintf("the level-%d heading", l.Level)
	}
	switch l.NameMode {
	case "":
		return what + "s"
	case NameRegexp, NameRegexpI:
		return fmt.Sprintf("%s named /%s/", what, l.Name)
	}
	return fmt.Sprintf("%s named %q", what, l.Name)
}
