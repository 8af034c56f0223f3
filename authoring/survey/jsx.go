package survey

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// The survey reads source as text. These are deliberately shallow readers of JSX/TSX: they
// find anchors (test ids, headings, literal text, structural tags), localStorage keys, literal
// constants and imports. Anything they miss makes a criterion weaker or absent, never wrong
// on purpose, and the base check shows whether the anchors hold.

var (
	testIDRe    = regexp.MustCompile(`<([a-zA-Z][\w.]*)\b[^<>]*?\bdata-testid=["']([^"']+)["']`)
	headingRe   = regexp.MustCompile(`(?s)<h([1-6])\b[^>]*>\s*([^<{}]+?)\s*</h[1-6]>`)
	textNodeRe  = regexp.MustCompile(`[>}]([^<>{}]+)[<{]`)
	dataTextRe  = regexp.MustCompile(`\b(?:title|label|heading|caption)\s*:\s*"([^"\n]{2,80})"`)
	tagRe       = regexp.MustCompile(`<(table|ul|ol|dl|header|nav|footer|form|section|aside|main|article|figure)\b`)
	itemAttrRe  = regexp.MustCompile(`\b(data-[a-z][a-z0-9-]*)=\{`)
	classRe     = regexp.MustCompile(`className=["']([^"']+)["']`)
	hrefRe      = regexp.MustCompile(`href=["'](/[^"'\s]*)["']`)
	importRe    = regexp.MustCompile(`(?m)(?:^|[;\s])(?:import|export)\s[^;'"]*?from\s+["']([^"']+)["']|(?:^|[;\s])import\s+["']([^"']+)["']|require\(\s*["']([^"']+)["']\s*\)`)
	useClientRe = regexp.MustCompile(`^\s*(?://[^\n]*\n\s*)*["']use client["']`)
	storageRe   = regexp.MustCompile(`localStorage\.getItem\(\s*["']([^"']+)["']\s*\)`)
	defaultIdRe = regexp.MustCompile(`\b(default[A-Z]\w*|DEFAULT_[A-Z0-9_]+)\b`)
	fetchRe     = regexp.MustCompile("fetch\\(\\s*[\"'`](/[^\"'`?$]*)")
	loadingIDRe = regexp.MustCompile(`(?i)loading|spinner|skeleton|placeholder`)
	// A link or button with literal text, possibly after self-closing children (an icon):
	// <a href="/docs">Docs</a>, <Link ...><Icon />GitHub</Link>, <Button type="submit">Save</Button>.
	controlRe   = regexp.MustCompile(`<(a|Link|button|Button)\b((?:[^<>{}]|\{[^{}]*\})*)>((?:[^<]|<[A-Za-z][^<>]*/>)*?)</(?:a|Link|button|Button)>`)
	selfCloseRe = regexp.MustCompile(`<[A-Za-z][^<>]*/>|\{[^{}]*\}`)
	ariaLabelRe = regexp.MustCompile(`\baria-label=["']([^"']+)["']`)
)

// Control is a link or button in a page's source and its accessible name as a person reads it
// (its text, or its aria-label): what a goal that names "the Docs link" means.
type Control struct {
	Role string `json:"role"`
	Name string `json:"name"`
}

// TestID is a data-testid in a page's source and the element it is on.
type TestID struct {
	ID  string `json:"id"`
	Tag string `json:"tag"`
}

// Anchors are what a criterion can point at on the base commit.
type Anchors struct {
	TestIDs   []TestID  `json:"test_ids,omitempty"`
	Headings  []string  `json:"headings,omitempty"`
	Texts     []string  `json:"texts,omitempty"`
	Tags      []string  `json:"tags,omitempty"`
	ItemAttrs []string  `json:"item_attrs,omitempty"`
	Classes   []string  `json:"classes,omitempty"`
	Links     []string  `json:"links,omitempty"`
	Controls  []Control `json:"controls,omitempty"`
}

// HasTag reports whether the source renders the element.
func (a Anchors) HasTag(tag string) bool { return slices.Contains(a.Tags, tag) }

// AppendUnique appends the items that are not empty and not in list yet. Exported for
// package criteria, which builds its lists of routes and texts the same way.
func AppendUnique(list []string, items ...string) []string {
	for _, s := range items {
		if s != "" && !slices.Contains(list, s) {
			list = append(list, s)
		}
	}
	return list
}

// readAnchors extracts anchors from one source file.
func readAnchors(src string, into *Anchors) {
	for _, m := range testIDRe.FindAllStringSubmatch(src, -1) {
		t := TestID{ID: m[2], Tag: strings.ToLower(m[1])}
		if !slices.Contains(into.TestIDs, t) {
			into.TestIDs = append(into.TestIDs, t)
		}
	}
	for _, m := range headingRe.FindAllStringSubmatch(src, -1) {
		into.Headings = AppendUnique(into.Headings, cleanText(m[2]))
	}
	for _, m := range textNodeRe.FindAllStringSubmatch(src, -1) {
		if t := cleanText(m[1]); looksLikeText(t) {
			into.Texts = AppendUnique(into.Texts, t)
		}
	}
	for _, m := range dataTextRe.FindAllStringSubmatch(src, -1) {
		into.Texts = AppendUnique(into.Texts, cleanText(m[1]))
	}
	for _, m := range tagRe.FindAllStringSubmatch(src, -1) {
		into.Tags = AppendUnique(into.Tags, m[1])
	}
	for _, m := range itemAttrRe.FindAllStringSubmatch(src, -1) {
		if m[1] != "data-testid" {
			into.ItemAttrs = AppendUnique(into.ItemAttrs, m[1])
		}
	}
	for _, m := range classRe.FindAllStringSubmatch(src, -1) {
		into.Classes = AppendUnique(into.Classes, strings.Fields(m[1])...)
	}
	for _, m := range hrefRe.FindAllStringSubmatch(src, -1) {
		into.Links = AppendUnique(into.Links, m[1])
	}
	for _, m := range controlRe.FindAllStringSubmatch(src, -1) {
		role := "link"
		if strings.EqualFold(m[1], "button") {
			role = "button"
		}
		name := cleanText(selfCloseRe.ReplaceAllString(m[3], " "))
		if l := ariaLabelRe.FindStringSubmatch(m[2]); l != nil {
			name = cleanText(l[1])
		}
		if c := (Control{Role: role, Name: name}); name != "" && len(name) <= 80 && !slices.Contains(into.Controls, c) {
			into.Controls = append(into.Controls, c)
		}
	}
}

func cleanText(s string) string { return strings.Join(strings.Fields(s), " ") }

// looksLikeText keeps prose and drops code that the text-node pattern also matches
// (generic type arguments, arrow functions, comparisons).
func looksLikeText(s string) bool {
	if len(s) < 3 || len(s) > 80 || jsKeywords[s] {
		return false
	}
	if strings.ContainsAny(s, "=;()[]&|`\\") || strings.Contains(s, "=>") {
		return false
	}
	letters := 0
	for _, r := range s {
		if r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' {
			letters++
		}
	}
	return letters >= 2
}

var jsKeywords = map[string]bool{"catch": true, "else": true, "try": true, "finally": true, "return": true,
	"const": true, "let": true, "var": true, "async": true, "await": true, "default": true, "export": true,
	"function": true, "null": true, "true": true, "false": true, "undefined": true, "new": true, "typeof": true}

// localImports lists the module specifiers a file imports that may be inside the repository.
func localImports(src string) []string {
	var out []string
	for _, m := range importRe.FindAllStringSubmatch(src, -1) {
		spec := m[1] + m[2] + m[3]
		if strings.HasPrefix(spec, ".") || strings.HasPrefix(spec, "@/") || strings.HasPrefix(spec, "~/") {
			out = AppendUnique(out, spec)
		}
	}
	return out
}

// constLiteral finds `const name = <literal>` in src and returns the literal as JSON.
func constLiteral(src, name string) (json.RawMessage, bool) {
	re, err := regexp.Compile(`(?:export\s+)?(?:const|let|var)\s+` + regexp.QuoteMeta(name) + `\s*(?::[^=\n]+)?=\s*`)
	if err != nil {
		return nil, false
	}
	loc := re.FindStringIndex(src)
	if loc == nil {
		return nil, false
	}
	return jsLiteral(src[loc[1]:])
}

// jsLiteral converts a JavaScript literal at the start of s (array, object, string, number,
// boolean) into JSON. It refuses anything holding identifiers or calls: only data the page
// would see verbatim becomes a seed or an expected value.
func jsLiteral(s string) (json.RawMessage, bool) {
	s = strings.TrimLeft(s, " \t\r\n")
	if s == "" {
		return nil, false
	}
	end := literalEnd(s)
	if end <= 0 {
		return nil, false
	}
	lit := s[:end]
	var b strings.Builder
	for i := 0; i < len(lit); i++ {
		c := lit[i]
		switch {
		case c == '"' || c == '\'':
			j := i + 1
			var str strings.Builder
			for ; j < len(lit) && lit[j] != c; j++ {
				if lit[j] == '\\' && j+1 < len(lit) {
					str.WriteByte(lit[j])
					j++
				}
				str.WriteByte(lit[j])
			}
			raw := str.String()
			if c == '\'' {
				raw = strings.ReplaceAll(strings.ReplaceAll(raw, `\'`, `'`), `"`, `\"`)
			}
			b.WriteString(`"` + raw + `"`)
			i = j
		case isIdentStart(c):
			j := i
			for j < len(lit) && (isIdentStart(lit[j]) || lit[j] >= '0' && lit[j] <= '9') {
				j++
			}
			word := lit[i:j]
			rest := strings.TrimLeft(lit[j:], " \t\r\n")
			switch {
			case strings.HasPrefix(rest, ":"): // a bare object key
				b.WriteString(`"` + word + `"`)
			case word == "true" || word == "false" || word == "null":
				b.WriteString(word)
			default:
				return nil, false
			}
			i = j - 1
		case c == ',':
			rest := strings.TrimLeft(lit[i+1:], " \t\r\n")
			if strings.HasPrefix(rest, "]") || strings.HasPrefix(rest, "}") {
				continue // trailing comma
			}
			b.WriteByte(c)
		case c == '/' && i+1 < len(lit) && lit[i+1] == '/':
			for i < len(lit) && lit[i] != '\n' {
				i++
			}
		default:
			b.WriteByte(c)
		}
	}
	out := json.RawMessage(b.String())
	if !json.Valid(out) {
		return nil, false
	}
	var compact strings.Builder
	var v any
	if err := json.Unmarshal(out, &v); err != nil {
		return nil, false
	}
	enc, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	compact.Write(enc)
	return json.RawMessage(compact.String()), true
}

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// literalEnd returns the length of the literal at the start of s: a balanced bracket
// expression or a quoted string, or a run up to the end of the statement.
func literalEnd(s string) int {
	switch s[0] {
	case '[', '{':
		depth := 0
		for i := 0; i < len(s); i++ {
			switch s[i] {
			case '"', '\'', '`':
				q := s[i]
				for i++; i < len(s) && s[i] != q; i++ {
					if s[i] == '\\' {
						i++
					}
				}
			case '[', '{', '(':
				depth++
			case ']', '}', ')':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	case '"', '\'':
		for i := 1; i < len(s); i++ {
			if s[i] == '\\' {
				i++
				continue
			}
			if s[i] == s[0] {
				return i + 1
			}
		}
		return -1
	}
	i := strings.IndexAny(s, ";\n,")
	if i < 0 {
		return len(s)
	}
	return i
}

// StringItems returns the strings of a JSON array of strings. Exported for package criteria,
// which reads the items a page seeds from a storage key's default.
func StringItems(raw json.RawMessage) []string {
	var items []string
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil
	}
	return items
}

var (
	inputTagRe = regexp.MustCompile(`<input\b[^>]*>`)
	attrRe     = regexp.MustCompile(`\b(name|type|id)=["']([^"']+)["']`)
	textareaRe = regexp.MustCompile(`<(?:textarea|select)\b[^>]*\bname=["']([^"']+)["']`)
)

// readInputs lists the named fields a page's form asks for (hidden fields and buttons
// excluded): what a criterion fills before it submits.
func readInputs(src string) []Input {
	var out []Input
	for _, tag := range inputTagRe.FindAllString(src, -1) {
		attrs := map[string]string{}
		for _, m := range attrRe.FindAllStringSubmatch(tag, -1) {
			attrs[m[1]] = m[2]
		}
		switch attrs["type"] {
		case "hidden", "submit", "button", "checkbox", "radio", "file", "reset", "image":
			continue
		}
		if attrs["name"] == "" {
			continue
		}
		out = append(out, Input{Selector: fmt.Sprintf(`input[name=%q]`, attrs["name"]), Type: attrs["type"]})
	}
	for _, m := range textareaRe.FindAllStringSubmatch(src, -1) {
		if strings.HasPrefix(m[0], "<textarea") {
			out = append(out, Input{Selector: fmt.Sprintf(`textarea[name=%q]`, m[1]), Type: "text"})
		}
	}
	return out
}
