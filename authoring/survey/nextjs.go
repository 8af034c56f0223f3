// The Next.js half of the survey: the app and pages routers, each page's anchors and gates,
// route handlers and middleware. A second framework gets its own file beside this one.

package survey

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
)

var pageFileRe = regexp.MustCompile(`^(?:src/)?app/(?:(.*)/)?page\.(?:tsx|jsx|ts|js|mdx)$`)

var routeFileRe = regexp.MustCompile(`^(?:src/)?app/(?:(.*)/)?route\.(?:ts|js|mjs)$`)

var pagesFileRe = regexp.MustCompile(`^(?:src/)?pages/(.*)\.(?:tsx|jsx|ts|js)$`)

func (sv *surveyor) router() string {
	app, pages := false, false
	for _, f := range sv.appFiles() {
		if pageFileRe.MatchString(f) || routeFileRe.MatchString(f) {
			app = true
		}
		if pagesFileRe.MatchString(f) {
			pages = true
		}
	}
	switch {
	case app && pages:
		return "app+pages"
	case app:
		return "app"
	case pages:
		return "pages"
	}
	return ""
}

// appRoute turns the folder part of an app-router file into its URL path. Private folders
// (a literal leading "_") and intercepting routes serve no URL of their own; route groups and
// parallel-route slots do not appear in the URL; "%5F" is an encoded underscore and routable.
func appRoute(dir string) (route string, dynamic, ok bool) {
	if dir == "" {
		return "/", false, true
	}
	var segs []string
	for _, raw := range strings.Split(dir, "/") {
		switch {
		case strings.HasPrefix(raw, "_"), strings.HasPrefix(raw, "(."):
			return "", false, false
		case strings.HasPrefix(raw, "(") && strings.HasSuffix(raw, ")"), strings.HasPrefix(raw, "@"):
			continue
		}
		seg := raw
		if dec, err := url.PathUnescape(raw); err == nil {
			seg = dec
		}
		if strings.HasPrefix(seg, "[") {
			dynamic = true
		}
		segs = append(segs, seg)
	}
	return "/" + strings.Join(segs, "/"), dynamic, true
}

func (sv *surveyor) readRoutes() {
	s := sv.s
	sv.alias = sv.aliasRoot()
	var middleware string
	var middlewareFile string
	for _, f := range []string{"middleware.ts", "middleware.js", "src/middleware.ts", "src/middleware.js", "proxy.ts", "src/proxy.ts"} {
		if src := sv.r.ReadString(sv.p(f)); src != "" {
			middleware, middlewareFile = src, f
			break
		}
	}
	for _, f := range sv.appFiles() {
		if m := pageFileRe.FindStringSubmatch(f); m != nil {
			if route, dynamic, ok := appRoute(m[1]); ok {
				s.Pages = append(s.Pages, sv.readPage(route, f, dynamic))
			}
			continue
		}
		if m := routeFileRe.FindStringSubmatch(f); m != nil {
			if route, _, ok := appRoute(m[1]); ok {
				s.APIRoutes = append(s.APIRoutes, sv.readAPI(route, f))
			}
			continue
		}
		if m := pagesFileRe.FindStringSubmatch(f); m != nil {
			rel := m[1]
			if strings.HasPrefix(path.Base(rel), "_") {
				continue
			}
			route := strings.TrimSuffix("/"+rel, "/index")
			if route == "" || route == "/index" {
				route = "/"
			}
			if strings.HasPrefix(rel, "api/") {
				s.APIRoutes = append(s.APIRoutes, sv.readAPI(route, f))
			} else {
				s.Pages = append(s.Pages, sv.readPage(route, f, strings.Contains(rel, "[")))
			}
		}
	}
	if middleware != "" {
		sv.applyMiddleware(middleware, middlewareFile)
	}
	sort.Slice(s.Pages, func(i, j int) bool { return s.Pages[i].Route < s.Pages[j].Route })
	sort.Slice(s.APIRoutes, func(i, j int) bool { return s.APIRoutes[i].Route < s.APIRoutes[j].Route })
}

var aliasRe = regexp.MustCompile(`"@/\*"\s*:\s*\[\s*"(?:\./)?([^"*]*)\*"`)

// aliasRoot reads what "@/" means from tsconfig.json or jsconfig.json (app-relative).
func (sv *surveyor) aliasRoot() string {
	for _, f := range []string{"tsconfig.json", "jsconfig.json"} {
		if m := aliasRe.FindStringSubmatch(sv.r.ReadString(sv.p(f))); m != nil {
			return strings.TrimSuffix(m[1], "/")
		}
	}
	return ""
}

// resolve turns an import specifier in file `from` (app-relative) into an app-relative path
// the commit has, or "".
func (sv *surveyor) resolve(from, spec string) string {
	var base string
	switch {
	case strings.HasPrefix(spec, "@/") || strings.HasPrefix(spec, "~/"):
		base = path.Join(sv.alias, spec[2:])
	case strings.HasPrefix(spec, "."):
		base = path.Join(path.Dir(from), spec)
	default:
		return ""
	}
	for _, ext := range []string{"", ".ts", ".tsx", ".js", ".jsx", ".mjs", "/index.ts", "/index.tsx", "/index.js", "/index.jsx"} {
		if sv.r.Has(sv.p(base + ext)) {
			return base + ext
		}
	}
	return ""
}

// imports returns the local files a file imports, app-relative.
func (sv *surveyor) imports(file, src string) []string {
	var out []string
	for _, spec := range localImports(src) {
		if f := sv.resolve(file, spec); f != "" {
			out = AppendUnique(out, f)
		}
	}
	return out
}

func (sv *surveyor) readPage(route, file string, dynamic bool) Page {
	src := sv.r.ReadString(sv.p(file))
	pg := Page{Route: route, File: file, Dynamic: dynamic, Client: useClientRe.MatchString(src)}
	pg.Imports = sv.imports(file, src)
	readAnchors(src, &pg.Anchors)
	pg.Frame = sv.readFrame(file)
	pg.Inputs = readInputs(src)
	// Components the page renders add anchors; data modules do not.
	for _, imp := range pg.Imports {
		if ext := path.Ext(imp); ext == ".tsx" || ext == ".jsx" {
			readAnchors(sv.r.ReadString(sv.p(imp)), &pg.Anchors)
		}
	}
	if g := authGate(src); g != "" {
		pg.Auth = &AuthGate{SignInRoute: g, Evidence: gateEvidence(src, g, file)}
	} else {
		for _, imp := range pg.Imports {
			isrc := sv.r.ReadString(sv.p(imp))
			if g := authGate(isrc); g != "" && strings.Contains(isrc, "export") {
				pg.Auth = &AuthGate{SignInRoute: g, Evidence: gateEvidence(isrc, g, imp+", imported by "+file)}
				break
			}
		}
	}
	if pg.Auth == nil && sessionCheckRe.MatchString(src) && deniedRe.MatchString(src) {
		// A session check that answers "not found" or 401 instead of redirecting: a sign-in
		// is needed, and which one is up to the survey's sign-in discovery.
		pg.Auth = &AuthGate{Evidence: "refuses visitors without a session (" + strings.TrimSpace(deniedRe.FindString(src)) + ", " + file + ")"}
	}
	for _, m := range storageRe.FindAllStringSubmatch(src, -1) {
		if slices.ContainsFunc(pg.Storage, func(k StorageKey) bool { return k.Key == m[1] }) {
			continue
		}
		sk := StorageKey{Key: m[1]}
		sk.Default, sk.DefaultFrom = sv.storageDefault(file, src, pg.Imports)
		pg.Storage = append(pg.Storage, sk)
	}
	for _, t := range pg.Anchors.TestIDs {
		if loadingIDRe.MatchString(t.ID) {
			pg.Loading = fmt.Sprintf(`[data-testid=%q]`, t.ID)
			break
		}
	}
	for _, m := range fetchRe.FindAllStringSubmatch(src, -1) {
		pg.Fetches = AppendUnique(pg.Fetches, m[1])
	}
	return pg
}

// storageDefault finds the value a page falls back to when its localStorage key is unset:
// a default* constant it references, in the page or a module it imports.
func (sv *surveyor) storageDefault(file, src string, imports []string) (json.RawMessage, string) {
	var names []string
	for _, m := range defaultIdRe.FindAllStringSubmatch(src, -1) {
		names = AppendUnique(names, m[1])
	}
	for _, name := range names {
		if lit, ok := constLiteral(src, name); ok {
			return lit, file + ":" + name
		}
		for _, imp := range imports {
			if lit, ok := constLiteral(sv.r.ReadString(sv.p(imp)), name); ok {
				return lit, imp + ":" + name
			}
		}
	}
	return nil, ""
}

var (
	signInPath     = `/(?:sign-?in|log-?in|auth(?:/[\w-]+)?|account/login|session/new)`
	gateRedirect   = regexp.MustCompile(`(?:redirect|permanentRedirect|router\.(?:push|replace)|NextResponse\.redirect)\(\s*(?:new URL\(\s*)?["'\x60](` + signInPath + `)(?:[?"'\x60/])`)
	gateDest       = regexp.MustCompile(`destination\s*:\s*["'](` + signInPath + `)["'?]`)
	sessionHint    = regexp.MustCompile(`cookies\(\)|getServerSession|auth\(\)|session|currentUser|getUser`)
	sessionCheckRe = regexp.MustCompile(`cookies\(\)\)?\.get\(|\.cookies\.get\(|getServerSession\(|\bauth\(\)|currentUser\(`)
	deniedRe       = regexp.MustCompile(`notFound\(\)|forbidden\(\)|unauthorized\(\)|status\s*:\s*40[13]\b`)
	unauthRe       = regexp.MustCompile(`status\s*:\s*40[13]\b|\b40[13]\b\s*\)`)
	matcherRe      = regexp.MustCompile(`matcher\s*:\s*(\[[^\]]*\]|["'][^"']+["'])`)
	quotedRe       = regexp.MustCompile(`["']([^"']+)["']`)
)

// authGate returns the sign-in route a source redirects to, or "".
func authGate(src string) string {
	if m := gateRedirect.FindStringSubmatch(src); m != nil {
		return m[1]
	}
	if m := gateDest.FindStringSubmatch(src); m != nil {
		return m[1]
	}
	return ""
}

func gateEvidence(src, target, where string) string {
	ev := "redirects to " + target
	if sessionHint.MatchString(src) {
		ev += " when there is no session"
	}
	return ev + " (" + where + ")"
}

// applyMiddleware marks the pages a redirecting middleware covers.
func (sv *surveyor) applyMiddleware(src, file string) {
	target := authGate(src)
	if target == "" {
		return
	}
	var patterns []string
	if m := matcherRe.FindStringSubmatch(src); m != nil {
		for _, q := range quotedRe.FindAllStringSubmatch(m[1], -1) {
			patterns = append(patterns, q[1])
		}
	}
	// The matcher says where the middleware runs; a condition on the path in its code says
	// which of those routes it redirects ("pathname.startsWith('/dashboard')"). Without a
	// condition it can read, every route the matcher covers is taken as gated.
	conds, condsOK := middlewarePaths(src)
	for i := range sv.s.Pages {
		pg := &sv.s.Pages[i]
		if pg.Auth != nil || pg.Route == target {
			continue
		}
		covered, how := len(patterns) == 0, "no matcher: every route"
		for _, p := range patterns {
			if matcherCovers(p, pg.Route) {
				covered, how = true, "matcher "+p
				break
			}
		}
		if covered && condsOK {
			covered = false
			for _, c := range conds {
				if c.covers(pg.Route) {
					covered, how = true, c.String()
					break
				}
			}
		}
		if covered {
			pg.Auth = &AuthGate{SignInRoute: target, Evidence: file + ": redirects to " + target + " (" + how + ")"}
		}
	}
}

// pathCond is a test of the request's path in a middleware: a prefix (startsWith) or an
// exact path (===).
type pathCond struct {
	path   string
	prefix bool
}

func (c pathCond) covers(route string) bool {
	if c.prefix {
		return strings.HasPrefix(route, c.path)
	}
	return route == c.path
}

func (c pathCond) String() string {
	if c.prefix {
		return "only paths starting with " + c.path
	}
	return "only " + c.path
}

var (
	// pathname.startsWith('/dashboard'), req.nextUrl.pathname.startsWith(protectedRoutes),
	// pathname === '/account'; r.startsWith for a list's .some((r) => pathname.startsWith(r)).
	pathStartsRe = regexp.MustCompile(`[pP]ath(?:name)?\s*\.\s*startsWith\(\s*(?:["'\x60]([^"'\x60]+)["'\x60]|(\w+))\s*\)`)
	pathEqualsRe = regexp.MustCompile(`[pP]ath(?:name)?\s*===?\s*["'\x60]([^"'\x60]+)["'\x60]`)
	someRe       = regexp.MustCompile(`(\w+)\s*\.\s*some\(\s*\(?\s*(\w+)\s*\)?\s*=>\s*[\w.]*[pP]ath(?:name)?\s*\.\s*startsWith\(\s*(\w+)\s*\)`)
)

// middlewarePaths reads the path conditions a middleware tests. ok is false when it tests
// none it can read (a regular expression, a helper function): then the matcher decides.
func middlewarePaths(src string) (conds []pathCond, ok bool) {
	add := func(p string, prefix bool) {
		if strings.HasPrefix(p, "/") {
			conds = append(conds, pathCond{path: p, prefix: prefix})
		}
	}
	unread := false
	params := map[string]bool{} // the parameter of a list's .some: read with the list
	for _, m := range someRe.FindAllStringSubmatch(src, -1) {
		if m[2] != m[3] {
			continue
		}
		params[m[2]] = true
		lit, isLit := constLiteral(src, m[1])
		items := StringItems(lit)
		if !isLit || len(items) == 0 {
			unread = true
			continue
		}
		for _, it := range items {
			add(it, true)
		}
	}
	for _, m := range pathStartsRe.FindAllStringSubmatch(src, -1) {
		switch {
		case m[1] != "":
			add(m[1], true)
		case params[m[2]]:
		default:
			if lit, isLit := constLiteral(src, m[2]); isLit {
				var one string
				if json.Unmarshal(lit, &one) == nil {
					add(one, true)
					continue
				}
			}
			unread = true
		}
	}
	for _, m := range pathEqualsRe.FindAllStringSubmatch(src, -1) {
		add(m[1], false)
	}
	if unread || len(conds) == 0 {
		return nil, false
	}
	return conds, true
}

// matcherCovers understands the common matcher forms: exact paths and "/x/:path*". A
// pattern it cannot read (a regular expression) is taken to cover the route: assuming a
// sign-in is needed costs a refusal, assuming none would make criteria that cannot pass.
func matcherCovers(p, route string) bool {
	switch {
	case strings.HasSuffix(p, "/:path*"):
		prefix := strings.TrimSuffix(p, "/:path*")
		return route == prefix || strings.HasPrefix(route, prefix+"/")
	case strings.ContainsAny(p, "()*+?:"):
		return true
	}
	return p == route
}

var (
	methodRe  = regexp.MustCompile(`export\s+(?:async\s+)?function\s+(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\b|export\s+const\s+(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\s*=`)
	mapRe     = regexp.MustCompile(`(\w+)\s*:\s*(\w+)\.map\(\s*\(?\s*(\w+)`)
	returnObj = regexp.MustCompile(`(?s)return\s*\{(.*?)\}\s*;?`)
	objKeyRe  = regexp.MustCompile(`(?:^|,)\s*(\w+)\s*(?::|,|$)`)
)

func (sv *surveyor) readAPI(route, file string) APIRoute {
	src := sv.r.ReadString(sv.p(file))
	a := APIRoute{Route: route, File: file}
	for _, m := range methodRe.FindAllStringSubmatch(src, -1) {
		a.Methods = AppendUnique(a.Methods, m[1]+m[2])
	}
	if strings.HasPrefix(file, "pages/") || strings.HasPrefix(file, "src/pages/") {
		a.Methods = AppendUnique(a.Methods, "GET")
	}
	a.Internal = strings.Contains(src, "SIGNOFF_COMMIT_SHA")
	a.Auth = (sessionHint.MatchString(src) && unauthRe.MatchString(src)) || authGate(src) != ""
	if m := mapRe.FindStringSubmatchIndex(src); m != nil {
		member, ident := src[m[2]:m[3]], src[m[4]:m[5]]
		imports := sv.imports(file, src)
		var items []string
		from := ""
		if lit, ok := constLiteral(src, ident); ok {
			items, from = StringItems(lit), file+":"+ident
		} else {
			for _, imp := range imports {
				if lit, ok := constLiteral(sv.r.ReadString(sv.p(imp)), ident); ok {
					items, from = StringItems(lit), imp+":"+ident
					break
				}
			}
		}
		if len(items) > 0 {
			c := &Collection{Member: member, Items: items, From: from}
			if ro := returnObj.FindStringSubmatch(src[m[1]:]); ro != nil {
				for _, k := range objKeyRe.FindAllStringSubmatch(ro[1], -1) {
					c.Fields = AppendUnique(c.Fields, k[1])
				}
			}
			for _, k := range c.Fields {
				if slices.Contains([]string{"symbol", "id", "key", "slug", "code", "ticker"}, k) {
					c.KeyField = k
					break
				}
			}
			a.Collection = c
		}
	}
	return a
}
