package criteria

import (
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/signoff/signoff/authoring/refusal"
	"github.com/signoff/signoff/authoring/survey"
)

// intent is what the rules read from a goal: which pages or endpoints, and which kinds of
// change. It is built from word patterns only; anything it does not recognise adds no
// criterion, and a goal with nothing checkable is refused.
type intent struct {
	goal, lower string

	mobile      bool
	desktopKeep bool
	layout      *layoutChange
	loading     bool
	feature     *feature
	fields      []fieldSpec
	method      string
	subjective  []string
	claimMobile bool
	createPage  bool // the goal asks for a page (new routes named in it become targets)
	newPage     bool
	multiPage   bool
	// behaviour is what a control must do when used (behaviour.go); arrange is where an
	// element goes or how items sit (position.go); region is the part of the page a goal
	// about overflow is scoped to, and sitewide a goal about every page (scope.go).
	behaviour *behaviour
	arrange   *arrangement
	region    string
	sitewide  bool
	// sitewideNote says which pages a site-wide goal is checked on.
	sitewideNote string
	// heading is the new text of the page's main heading ("change the heading to 'X'");
	// keepOthers is set when the goal says the other pages stay as they are.
	heading    string
	keepOthers bool
}

var (
	headingChangeRe = regexp.MustCompile(`(?i)\b(?:change|rename|set|update|make|retitle)\s+(?:the\s+)?(?:main\s+|page\s+|top\s+)?(?:heading|title|h1|headline)\b[^.;'"“‘]{0,60}?\bto\s+(?:be\s+|read\s+|say\s+)?['"“‘]([^'"“”‘’]{1,80})['"”’]`)
	keepOthersRe    = regexp.MustCompile(`(?i)\bwithout\s+(?:changing|touching|affecting|modifying|altering)\s+(?:the\s+|any\s+)?(?:other|rest of the)\s+pages?\b|\b(?:leave|leaving|keep|keeping)\s+(?:the\s+|all\s+|every\s+)?other\s+pages?\s+(?:alone|unchanged|as (?:they are|is)|intact)\b|\bother\s+pages?\s+(?:stay|stays|remain|remains|must stay|should stay)\s+(?:unchanged|the same|as (?:they are|is))\b`)
)

type layoutChange struct {
	From, To   string
	Breakpoint int
}

// feature is a new element the goal asks for.
type feature struct {
	// Title is text to show exactly as the user wrote it (quoted or capitalised), or "".
	Title string
	// Phrase names the element in lower case when no exact text was given.
	Phrase    string
	Container string
	// Placement is an element of the page the feature goes in (header, nav, ...), if named.
	Placement string
	// Dest is the route a link or button leads to.
	Dest string
}

type fieldSpec struct {
	Name  string
	Value json.RawMessage
}

var (
	mobileRe     = regexp.MustCompile(`\b(mobile|phones?|smartphones?|iphones?|android|responsive|small(?:er)? screens?|narrow(?:er)? screens?|narrow viewports?|handheld|390\s*px)\b`)
	desktopRe    = regexp.MustCompile(`\b(?:keep|keeps|kept|keeping|preserv(?:e|es|ed|ing)|retain(?:s|ed|ing)?|maintain(?:s|ed|ing)?|unchanged|intact|leave|leaving|untouched|not break|don't break|still|as is|stays?)\b[^.;]{0,40}\b(?:desktop|wide(?:r)? screens?|large(?:r)? screens?|table)\b|\b(?:desktop|wide(?:r)? screens?|large(?:r)? screens?)\b[^.;]{0,40}\b(?:kept|unchanged|stays?|intact|preserved|as is|still|keeps?)\b`)
	loadingRe    = regexp.MustCompile(`\b(loading (?:state|indicator|spinner|skeleton|message)|spinner|skeleton|while (?:the )?[\w ]{1,20}(?:load|loads|is loading|are loading))\b`)
	subjectiveRe = regexp.MustCompile(`\b(nicer|prettier|pretty|beautiful|beautify|gorgeous|look(?:s|ing)? (?:good|great|better|nicer|nice|clean|modern|professional)|cleaner|modern(?:i[sz]e)?|sleek|polish(?:ed)?|elegant|attractive|intuitive|user[- ]friendly|friendlier|delightful|professional|fresh(?:er)?|snappier|feel(?:s)? (?:better|nicer|faster|smoother)|(?:improve|enhance|better|nicer)\s+(?:the\s+)?(?:ux|ui|user experience|design|look|feel|aesthetics?|experience)|look and feel|ux|vibe)\b`)
	rewriteRe    = regexp.MustCompile(`(?i)\b(?:rewrite|re-write|port|migrate|convert|rebuild|reimplement|re-implement)\b[^.;]{0,40}\b(?:in|to|into|using|with|on)\s+(rust|go|golang|python|java|kotlin|swift|c\+\+|c#|ruby|php|elixir|scala|haskell|vue|angular|svelte|django|rails|laravel|flutter|remix|astro|react native)\b`)
	infraRe      = regexp.MustCompile(`(?i)\b(kubernetes|k8s|terraform|helm charts?|dockerfile|docker(?:i[sz]e)?|ci/cd|ci pipeline|github actions|circleci|jenkins|aws|gcp|azure|cloudflare|vercel|netlify|dns|ssl|tls certificates?|load balancers?|autoscal\w*|nginx|cdn|s3 buckets?|database migrations?|postgres(?:ql)?|mysql|redis|kafka|monitoring|alerting|uptime|server provisioning|deploy(?:ment)? pipeline)\b`)
	otherRepoRe  = regexp.MustCompile(`(?:github\.com|gitlab\.com|bitbucket\.org)/([\w.-]+/[\w.-]+)|(?:^|[\s(])([A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)\s+(?:repo|repository)\b|\b(?:repo|repository)\s+([A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)`)
	manyReposRe  = regexp.MustCompile(`\b(?:another|other|different|separate|all (?:our|the|of our)|every)\s+(?:repos?|repositories|projects|services|microservices)\b`)
	tooBroadRe   = regexp.MustCompile(`\b(?:every|all|all the|each)\s+(?:pages?|screens?|routes?|views?)\b|\b(?:whole|entire)\s+(?:app|site|application|website|codebase|product)\b`)
	claimRe      = regexp.MustCompile(`(?i)mobile[- ]?(?:optimi[sz]ed|friendly|ready|first)|responsive|optimi[sz]ed for (?:mobile|phones?)|works? on (?:mobile|phones?)`)
	changeVerbRe = regexp.MustCompile(`\b(add|adds|adding|show|shows|showing|display|displays|put|insert|include|includes|introduce|render|place|see|give|mark|label|highlight)\b`)
	newPageRe    = regexp.MustCompile(`\b(?:add|create|build|new|make)\b[^.;]{0,30}\bpage\b`)
	postRe       = regexp.MustCompile(`\bPOST\b`)
)

// containers are the words that name a new element.
var containers = []string{"strip", "bar", "banner", "section", "panel", "card", "badge", "label", "widget", "button",
	"link", "summary", "box", "indicator", "chip", "tag", "notice", "message", "note", "callout", "alert", "counter",
	"heading", "subtitle", "caption", "column", "tab", "pill", "footer note", "progress bar", "checklist", "list"}

// placements are page regions a new element can be put in, and the tag that renders them.
var placements = map[string]string{"header": "header", "nav": "nav", "navigation": "nav", "footer": "footer",
	"sidebar": "aside", "table": "table", "form": "form"}

// refuseScope refuses goals no contract on this repository can cover.
func refuseScope(goal, owner, name string) error {
	lower := strings.ToLower(goal)
	if m := rewriteRe.FindStringSubmatch(goal); m != nil {
		return refusal.New(refusal.OutOfScope, "rewriting the app in "+m[1]+" is not a bounded change to this app a browser can verify",
			"ask for a specific change to a page or endpoint")
	}
	if m := infraRe.FindStringSubmatch(goal); m != nil {
		return refusal.New(refusal.OutOfScope, "infrastructure and deployment work ("+m[1]+") cannot be verified against a preview of the app",
			"ask for a change to a page or endpoint of the app")
	}
	for _, m := range otherRepoRe.FindAllStringSubmatch(goal, -1) {
		other := strings.TrimSuffix(m[1]+m[2]+m[3], ".git")
		if !strings.EqualFold(other, owner+"/"+name) {
			return refusal.New(refusal.OutOfScope, "the goal names another repository ("+other+"); a contract covers "+owner+"/"+name+" at one commit",
				"ask for a quote on that repository separately")
		}
	}
	if manyReposRe.MatchString(lower) {
		return refusal.New(refusal.OutOfScope, "the goal reaches beyond this repository; a contract covers "+owner+"/"+name+" at one commit", "")
	}
	if tooBroadRe.MatchString(lower) && !(sitewideRe.MatchString(lower) && readRegion(lower) != "") {
		return refusal.New(refusal.TooBroad, "the goal covers the whole app; a contract checks one or two pages or endpoints",
			"name the pages (for example --route /watchlist)")
	}
	return nil
}

// readIntent reads the kinds of change from the goal.
func readIntent(goal string) *intent {
	in := &intent{goal: goal, lower: strings.ToLower(goal), method: "GET"}
	l := in.lower
	in.mobile = mobileRe.MatchString(l)
	in.desktopKeep = desktopRe.MatchString(l)
	in.loading = loadingRe.MatchString(l)
	in.createPage = newPageRe.MatchString(l)
	if postRe.MatchString(goal) {
		in.method = "POST"
	}
	for _, m := range subjectiveRe.FindAllString(l, -1) {
		in.subjective = survey.AppendUnique(in.subjective, m)
	}
	in.layout = readLayout(l)
	in.feature = readFeature(goal)
	if in.feature != nil && in.feature.Title != "" && claimRe.MatchString(in.feature.Title) {
		in.claimMobile = true
	}
	in.fields = readFields(goal)
	in.behaviour = readBehaviour(goal, in.feature)
	if in.behaviour != nil && (in.behaviour.Kind == behaviourSubmits || in.behaviour.Kind == behaviourOpens) && in.feature != nil && in.feature.Title == in.behaviour.Text {
		in.feature = nil // the quoted text is what the action reveals, not an element on load
	}
	in.arrange = readArrangement(l)
	if in.arrange != nil && in.arrange.Kind == arrangeStacked && in.layout != nil && in.layout.From == "" {
		// "The plan cards should stack vertically on phones" names cards that exist and asks
		// how they sit; with no old structure to replace it is an arrangement, not a layout
		// change to cards.
		in.layout = nil
	}
	in.region = readRegion(l)
	in.sitewide = sitewideRe.MatchString(l)
	if m := headingChangeRe.FindStringSubmatch(goal); m != nil {
		in.heading = strings.TrimSpace(m[1])
		if in.feature != nil && in.feature.Title == in.heading {
			in.feature = nil // the quoted text is the heading's new wording, not a new element
		}
	}
	in.keepOthers = keepOthersRe.MatchString(goal)
	return in
}

// layoutScoped reports whether a layout change is for small screens only (a breakpoint, a
// phone, or a desktop layout to keep), rather than for every screen.
func (in *intent) layoutScoped() bool {
	return in.layout != nil && (in.mobile || in.layout.Breakpoint > 0 || in.desktopKeep)
}

var (
	quotedTitleRe = regexp.MustCompile(`(?:^|[\s(:])["“'‘]([^"“”'‘’\n]{2,60}?)["”'’](?:$|[\s).,;:!?])`)
	capSeqRe      = regexp.MustCompile(`\b([A-Z][\w-]*(?:\s+[A-Z][\w-]*)+)\b`)
	placeRe       = regexp.MustCompile(`\b(?:to|in|into|inside|on|at the top of|under|below|above|next to|beside|within)\s+(?:the\s+)?(?:[\w-]+\s+){0,2}(header|footer|nav|navigation|sidebar|table|form)\b`)
	namedAsRe     = regexp.MustCompile(`\b(?:says|saying|reads|reading|labell?ed|titled|called|named|marked as|as)\s+["“']?([A-Z][^.,;:"“”'‘’()]{1,40}?)["”']?(?:\s+(?:with|in|on|at|to|next|so|label|badge|link|button|tag|text)\b|[.,;:!]|$)`)
	containerRe   = regexp.MustCompile(`\b(` + strings.Join(containers, "|") + `)s?\b`)
	apiContextRe  = regexp.MustCompile(`\b(api|endpoint|json|route handler|response)\b`)
	articlePhrase = regexp.MustCompile(`\b(?:an?|the|new|some)\s+((?:[A-Za-z][\w'-]*\s+){1,4}?)(` + strings.Join(containers, "|") + `)\b`)
)

// readFeature finds a new element the goal asks for: its exact text when the user gave one
// (quoted or capitalised), its kind (a strip, a link, a badge) and where it goes.
func readFeature(goal string) *feature {
	lower := strings.ToLower(goal)
	f := &feature{}
	if m := quotedTitleRe.FindStringSubmatch(goal); m != nil {
		f.Title = strings.TrimSpace(m[1])
	}
	if m := articlePhrase.FindStringSubmatchIndex(goal); m != nil {
		phrase := strings.TrimSpace(goal[m[2]:m[3]])
		f.Container = strings.ToLower(goal[m[4]:m[5]])
		if f.Title == "" {
			words := strings.Fields(phrase)
			// Drop leading adjectives that are not part of a name ("small", "new").
			for len(words) > 0 && isFiller(words[0]) {
				words = words[1:]
			}
			phrase = strings.Join(words, " ")
			if phrase != "" && phrase[0] >= 'A' && phrase[0] <= 'Z' {
				f.Title = phrase
			} else {
				f.Phrase = strings.ToLower(phrase)
			}
		}
	}
	if f.Title == "" {
		if m := namedAsRe.FindStringSubmatch(goal); m != nil {
			f.Title = strings.TrimSpace(m[1])
		}
	}
	if f.Title == "" {
		for _, loc := range capSeqRe.FindAllStringIndex(goal, -1) {
			seq := goal[loc[0]:loc[1]]
			words := strings.Fields(seq)
			if sentenceStart(goal, loc[0]) {
				words = words[1:]
			}
			if len(words) >= 2 {
				f.Title = strings.Join(words, " ")
				break
			}
		}
	}
	if f.Container == "" {
		if m := containerRe.FindStringSubmatch(lower); m != nil {
			f.Container = m[1]
		}
	}
	if m := placeRe.FindStringSubmatch(lower); m != nil {
		f.Placement = placements[m[1]]
	}
	if f.Title == "" && f.Phrase == "" {
		return nil
	}
	if f.Title == "" && f.Container == "" {
		return nil
	}
	if !changeVerbRe.MatchString(lower) && f.Container == "" {
		return nil
	}
	if f.Container == "" {
		f.Container = "section"
	}
	return f
}

func isFiller(w string) bool {
	switch strings.ToLower(w) {
	case "small", "little", "new", "simple", "short", "big", "large", "clear", "visible", "prominent", "tiny", "compact":
		return true
	}
	return false
}

// sentenceStart reports whether position i begins the goal or a sentence in it.
func sentenceStart(s string, i int) bool {
	before := strings.TrimRight(s[:i], " \t")
	return before == "" || strings.HasSuffix(before, ".") || strings.HasSuffix(before, ":") || strings.HasSuffix(before, "!") || strings.HasSuffix(before, "?") || strings.HasSuffix(before, ";")
}

var (
	fieldSetRe  = regexp.MustCompile("[`\"']?([A-Za-z_]\\w*)[`\"']?\\s+(?:field|member|key|property|attribute)\\s+(?:set\\s+to|with\\s+(?:the\\s+)?value|equal\\s+to|equals|=|of|:|that\\s+is|containing)\\s*[`\"']?([^`\"'\\s,;)]+)")
	fieldNameRe = regexp.MustCompile("(?:field|member|key|property)\\s+[`\"']?([A-Za-z_]\\w*)[`\"']?\\s*(?:=|:|set\\s+to|with\\s+value|equal\\s+to|equals)\\s*[`\"']?([^`\"'\\s,;)]+)")
	fieldKVRe   = regexp.MustCompile("[`\"']?([A-Za-z_]\\w*)[`\"']?\\s*(?::|=)\\s*[`\"']([^`\"'\\n]+)[`\"']")
	fieldEqRe   = regexp.MustCompile(`\b([a-z_]\w*)=([\w.-]+)`)
)

// readFields reads response fields a backend goal asks for, with their values.
func readFields(goal string) []fieldSpec {
	var out []fieldSpec
	add := func(name, value string) {
		value = strings.TrimRight(value, ".")
		lname := strings.ToLower(name)
		if value == "" || survey.IsStopword(lname) || lname == "get" || lname == "post" {
			return
		}
		if slices.ContainsFunc(out, func(f fieldSpec) bool { return f.Name == name }) {
			return
		}
		out = append(out, fieldSpec{Name: name, Value: literalValue(value)})
	}
	for _, re := range []*regexp.Regexp{fieldSetRe, fieldNameRe, fieldKVRe, fieldEqRe} {
		for _, m := range re.FindAllStringSubmatch(goal, -1) {
			add(m[1], m[2])
		}
	}
	return out
}

// literalValue turns a value written in a goal into JSON: numbers and booleans as such,
// anything else as a string.
func literalValue(v string) json.RawMessage {
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return json.RawMessage(v)
	}
	if v == "true" || v == "false" || v == "null" {
		return json.RawMessage(v)
	}
	b, _ := json.Marshal(v)
	return b
}

// routeHit is a route the goal names, and where.
type routeHit struct {
	route string
	api   bool
	pos   int
	score int
	// dest is how strongly the words before the mention make it a link's destination:
	// 0 not at all, 1 "link to", 2 "goes to" / "pointing to".
	dest int
}

var (
	strongDestRe = regexp.MustCompile(`(?:go(?:es|ing)?|lead(?:s|ing)?|point(?:s|ing)?|navigat\w*|tak(?:e|es|ing)|back|redirect(?:s|ing)?|send(?:s|ing)?)\s+(?:\w+\s+){0,2}(?:to|at)\s+(?:the\s+)?$`)
	weakDestRe   = regexp.MustCompile(`(?:link(?:s|ing)?|open(?:s|ing)?|button)\s+(?:\w+\s+){0,1}(?:to|at|for)\s+(?:the\s+)?$`)
)

// matchRoutes finds the pages and endpoints a goal names: by path, by the route's name, or by
// the page's main heading. Routes a link leads to are marked as destinations.
func matchRoutes(s *survey.Survey, goal string) []routeHit {
	lower := strings.ToLower(goal)
	joined := maskTitles(strings.Join(strings.Fields(lower), " "))
	var hits []routeHit
	try := func(route string, api bool, phrases []string, score int) {
		best := -1
		for _, p := range phrases {
			if p == "" {
				continue
			}
			re := regexp.MustCompile(`(?:^|[^\w/-])` + regexp.QuoteMeta(p) + `(?:$|[^\w/-])`)
			if loc := re.FindStringIndex(joined); loc != nil && (best < 0 || loc[0] < best) {
				best = loc[0]
			}
		}
		if best < 0 {
			return
		}
		for i := range hits {
			if hits[i].route == route {
				if score > hits[i].score {
					hits[i].score = score
				}
				if best < hits[i].pos {
					hits[i].pos = best
				}
				return
			}
		}
		hits = append(hits, routeHit{route: route, api: api, pos: best, score: score})
	}
	apiContext := apiContextRe.MatchString(lower)
	for _, pg := range s.Pages {
		if pg.Dynamic {
			continue
		}
		try(pg.Route, false, []string{strings.ToLower(pg.Route)}, 10)
		for _, n := range routeNames(pg.Route) {
			try(pg.Route, false, []string{n + " page", n + " screen", n + " view", n}, 6)
		}
		if len(pg.Anchors.Headings) > 0 {
			h := strings.ToLower(pg.Anchors.Headings[0])
			if len(strings.Fields(h)) >= 2 || len(h) >= 6 {
				try(pg.Route, false, []string{h}, 7)
			}
		}
	}
	for _, a := range s.APIRoutes {
		if a.Internal {
			continue
		}
		try(a.Route, true, []string{strings.ToLower(a.Route)}, 10)
		if apiContext {
			for _, n := range routeNames(a.Route) {
				try(a.Route, true, []string{n + " api", n + " endpoint", "api " + n, n + " route"}, 8)
			}
		}
	}
	for i := range hits {
		before := joined[:hits[i].pos+1]
		switch {
		case strongDestRe.MatchString(before):
			hits[i].dest = 2
		case weakDestRe.MatchString(before):
			hits[i].dest = 1
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].pos < hits[j].pos })
	// A page named only inside a longer match of another (the "paper" in "Paper trading")
	// is the same page; keep the strongest hit per position.
	return hits
}

// titleRe finds the quoted text of a new element ("a 'Contact us' link"): what it shows, not
// a page the goal names.
var titleRe = regexp.MustCompile(`(?:^|\s)['"“‘]([^'"“”‘’]{1,80})['"”’]\s+(?:` + strings.Join(containers, "|") + `)\b`)

// maskTitles blanks the quoted titles of new elements in s, keeping every other byte where
// it was, so "a 'See pricing' link that goes to the pricing page" leads to the pricing page
// because of the words after "goes to", not because of the link's label.
func maskTitles(s string) string {
	b := []byte(s)
	for _, re := range []*regexp.Regexp{titleRe, controlListRe} {
		for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
			for i := m[2]; i < m[3]; i++ {
				b[i] = ' '
			}
		}
	}
	return string(b)
}

// controlListRe finds the names in "the Products and Pricing links" or "the Docs, Blog and
// GitHub buttons": controls the goal is about, not pages it names.
var controlListRe = regexp.MustCompile(`\b((?:[\w'-]+(?:\s*,\s*|\s+(?:and|&)\s+))+[\w'-]+)\s+(?:links|buttons|tabs|menu items)\b`)

// routeNames are the words a person uses for a route: its last static segment, spaced and
// joined ("watchlist", "watch list"; "sign in", "signin", "login").
func routeNames(route string) []string {
	if route == "/" {
		return []string{"home page", "homepage", "landing page", "home screen"}
	}
	segs := strings.Split(strings.Trim(route, "/"), "/")
	last := ""
	for i := len(segs) - 1; i >= 0; i-- {
		if !strings.HasPrefix(segs[i], "[") && segs[i] != "api" {
			last = strings.ToLower(segs[i])
			break
		}
	}
	if last == "" {
		return nil
	}
	spaced := strings.NewReplacer("-", " ", "_", " ").Replace(last)
	names := []string{last, spaced}
	switch last {
	case "signin", "sign-in", "login", "log-in":
		names = append(names, "sign in", "sign-in", "login", "log in")
	case "watchlist":
		names = append(names, "watch list")
	}
	if strings.HasSuffix(last, "s") && len(last) > 4 {
		names = append(names, strings.TrimSuffix(last, "s"))
	}
	return names
}

// impliedPage picks the one page whose anchors share the most words with the goal, for goals
// that name no route.
func impliedPage(s *survey.Survey, goal string) string {
	words := survey.Keywords(goal)
	best, bestN, tie := "", 0, false
	for _, pg := range s.Pages {
		if pg.Dynamic {
			continue
		}
		var corpus []string
		corpus = append(corpus, pg.Anchors.Headings...)
		corpus = append(corpus, pg.Anchors.Texts...)
		for _, t := range pg.Anchors.TestIDs {
			corpus = append(corpus, strings.ReplaceAll(t.ID, "-", " "))
		}
		for _, k := range pg.Storage {
			corpus = append(corpus, k.Key)
		}
		text := strings.ToLower(strings.Join(corpus, " | "))
		n := 0
		for _, w := range words {
			if regexp.MustCompile(`\b` + regexp.QuoteMeta(w) + `\b`).MatchString(text) {
				n++
			}
		}
		switch {
		case n > bestN:
			best, bestN, tie = pg.Route, n, false
		case n == bestN && n > 0:
			tie = true
		}
	}
	if tie || bestN == 0 {
		return ""
	}
	return best
}

// slug makes a test-id or contract-id fragment: lower case, words joined by hyphens.
func slug(s string) string {
	words := survey.Words(strings.ToLower(strings.NewReplacer("'", "", "’", "").Replace(s)))
	out := strings.Join(words, "-")
	if len(out) > 40 {
		out = strings.TrimRight(out[:40], "-")
	}
	return out
}
