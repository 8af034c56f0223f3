package authoring

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Survey is what a read-only look at the base commit found: how the app is built and run,
// its pages and endpoints, which pages need a sign-in, and what on each page a criterion can
// point at. It never reads the work tree: every file comes from the pinned commit.
type Survey struct {
	Repo           RepoRef           `json:"repo"`
	BaseSHA        string            `json:"base_sha"`
	AppDir         string            `json:"app_dir,omitempty"`
	Framework      Framework         `json:"framework"`
	PackageManager string            `json:"package_manager"`
	Lockfile       string            `json:"lockfile,omitempty"`
	Scripts        map[string]string `json:"scripts"`
	Port           int               `json:"port"`
	Pages          []Page            `json:"pages"`
	APIRoutes      []APIRoute        `json:"api_routes"`
	SignIn         *SignIn           `json:"sign_in,omitempty"`
	// SignInProblem says why pages behind a sign-in cannot be verified, when they cannot.
	SignInProblem string         `json:"sign_in_problem,omitempty"`
	Relevant      []RelevantFile `json:"relevant_files,omitempty"`
	Files         int            `json:"files"`
	Notes         []string       `json:"notes,omitempty"`
}

// RepoRef is the repository's identity as the contract records it.
type RepoRef struct {
	Owner string `json:"owner"`
	Name  string `json:"name"`
	URL   string `json:"url"`
}

// Framework names what the app is built with and whether Signoff can build and serve it.
type Framework struct {
	// Name is nextjs, vite-react, create-react-app, react, vue, svelte, angular or unknown.
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	// Router is app, pages or app+pages for Next.js.
	Router    string `json:"router,omitempty"`
	Supported bool   `json:"supported"`
	Reason    string `json:"reason,omitempty"`
}

// ContractFramework is the stack.framework value a contract records.
func (f Framework) ContractFramework() string {
	if f.Router == "pages" {
		return "nextjs-pages"
	}
	return "nextjs-app"
}

// Page is a route that renders HTML.
type Page struct {
	Route string `json:"route"`
	File  string `json:"file"`
	// Client is a "use client" page: it renders after hydration.
	Client  bool `json:"client,omitempty"`
	Dynamic bool `json:"dynamic,omitempty"`
	// Auth is set when the page sends visitors without a session to a sign-in route.
	Auth    *AuthGate    `json:"auth,omitempty"`
	Storage []StorageKey `json:"storage,omitempty"`
	// Loading is the selector of a placeholder shown while data loads.
	Loading string `json:"loading,omitempty"`
	// Fetches are same-origin paths the page requests from the browser.
	Fetches []string `json:"fetches,omitempty"`
	Anchors Anchors  `json:"anchors"`
	Imports []string `json:"imports,omitempty"`
}

// AuthGate is how a page refuses visitors without a session.
type AuthGate struct {
	SignInRoute string `json:"sign_in_route"`
	Evidence    string `json:"evidence"`
}

// StorageKey is a localStorage key a page reads, with the default it falls back to.
type StorageKey struct {
	Key         string          `json:"key"`
	Default     json.RawMessage `json:"default,omitempty"`
	DefaultFrom string          `json:"default_from,omitempty"`
}

// APIRoute is a route handler.
type APIRoute struct {
	Route   string   `json:"route"`
	File    string   `json:"file"`
	Methods []string `json:"methods"`
	// Auth is set when the handler answers 401/403 or redirects without a session.
	Auth bool `json:"auth,omitempty"`
	// Internal marks Signoff's own /__verification handler.
	Internal   bool        `json:"internal,omitempty"`
	Collection *Collection `json:"collection,omitempty"`
}

// Collection is an array member of a JSON response built from a literal list.
type Collection struct {
	Member   string   `json:"member"`
	Items    []string `json:"items"`
	KeyField string   `json:"key_field,omitempty"`
	Fields   []string `json:"fields,omitempty"`
	From     string   `json:"from"`
}

// SignIn is a sign-in the verifier can perform with the browser: a form and a demo account
// committed to the repository.
type SignIn struct {
	Route            string `json:"route"`
	File             string `json:"file"`
	EmailSelector    string `json:"email_selector"`
	PasswordSelector string `json:"password_selector"`
	SubmitSelector   string `json:"submit_selector"`
	Email            string `json:"email"`
	Password         string `json:"password"`
	CredentialsFrom  string `json:"credentials_from"`
}

// RelevantFile is a file the goal most likely touches, and why.
type RelevantFile struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// PageAt returns the page with the route, or nil.
func (s *Survey) PageAt(route string) *Page {
	for i := range s.Pages {
		if s.Pages[i].Route == route {
			return &s.Pages[i]
		}
	}
	return nil
}

// APIAt returns the route handler with the route, or nil.
func (s *Survey) APIAt(route string) *APIRoute {
	for i := range s.APIRoutes {
		if s.APIRoutes[i].Route == route {
			return &s.APIRoutes[i]
		}
	}
	return nil
}

// SurveyOptions tune a survey.
type SurveyOptions struct {
	// Goal, when set, ranks the files most likely relevant to it.
	Goal string
}

// SurveyRepo reads the source at its pinned base commit. The source must be readable
// (Fetch for remote URLs). It returns an error only when the repository cannot be read;
// an unsupported framework is a survey with Framework.Supported false.
func SurveyRepo(ctx context.Context, src *Source, opts SurveyOptions) (*Survey, error) {
	if src.GitDir == "" {
		return nil, &InputError{Field: "repo", Reason: "the repository has not been fetched"}
	}
	sha, err := src.resolveBase(ctx)
	if err != nil {
		return nil, err
	}
	r, err := newCommitReader(ctx, src.GitDir, sha)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	s := &Survey{
		Repo:    RepoRef{Owner: src.Owner, Name: src.Name, URL: src.URL},
		BaseSHA: sha,
		AppDir:  src.AppDir,
		Scripts: map[string]string{},
		Files:   len(r.Files()),
	}
	if src.Uncommitted > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("the work tree has %d uncommitted change(s); the contract is pinned to %s and ignores them", src.Uncommitted, short(sha)))
	}
	sv := &surveyor{r: r, s: s}
	if err := sv.findApp(); err != nil {
		return nil, err
	}
	src.AppDir = s.AppDir
	sv.readPackage()
	if s.Framework.Name == "nextjs" {
		sv.readRoutes()
		sv.readSignIn()
	}
	sv.rankRelevant(opts.Goal)
	return s, nil
}

// surveyor holds the reader while a survey runs.
type surveyor struct {
	r     *commitReader
	s     *Survey
	alias string // what "@/" resolves to, relative to the app dir
}

// p turns an app-relative path into a repository path.
func (sv *surveyor) p(rel string) string {
	if sv.s.AppDir == "" {
		return rel
	}
	return sv.s.AppDir + "/" + rel
}

// appFiles lists app-relative paths, skipping installed and built output.
func (sv *surveyor) appFiles() []string {
	var out []string
	prefix := ""
	if sv.s.AppDir != "" {
		prefix = sv.s.AppDir + "/"
	}
	for _, f := range sv.r.Files() {
		if !strings.HasPrefix(f, prefix) {
			continue
		}
		rel := strings.TrimPrefix(f, prefix)
		if strings.HasPrefix(rel, "node_modules/") || strings.HasPrefix(rel, ".next/") || strings.Contains(rel, "/node_modules/") {
			continue
		}
		out = append(out, rel)
	}
	return out
}

// findApp settles the app folder: the folder asked for when it has a package.json, else the
// one folder below it that has a package.json naming a web framework.
func (sv *surveyor) findApp() error {
	if sv.r.Has(sv.p("package.json")) {
		return nil
	}
	// A folder inside the app: the nearest folder above it with a package.json.
	for dir := sv.s.AppDir; dir != "" && dir != "."; {
		dir = path.Dir(dir)
		if dir == "." {
			dir = ""
		}
		pj := "package.json"
		if dir != "" {
			pj = dir + "/package.json"
		}
		if sv.r.Has(pj) {
			sv.s.AppDir = dir
			return nil
		}
		if dir == "" {
			break
		}
	}
	var candidates []string
	for _, f := range sv.appFiles() {
		if path.Base(f) != "package.json" || strings.Count(f, "/") > 3 {
			continue
		}
		pkg := sv.r.ReadString(sv.p(f))
		if strings.Contains(pkg, `"next"`) || strings.Contains(pkg, `"react"`) || strings.Contains(pkg, `"vite"`) {
			candidates = append(candidates, path.Dir(f))
		}
	}
	switch len(candidates) {
	case 0:
		where := "the repository root"
		if sv.s.AppDir != "" {
			where = sv.s.AppDir + "/"
		}
		return refuse(RefuseUnsupported, "no package.json in "+where+" or below it", "point --repo at the app's folder")
	case 1:
		dir := sv.p(candidates[0])
		sv.s.Notes = append(sv.s.Notes, "the app lives in "+dir+"/")
		sv.s.AppDir = dir
		return nil
	}
	return refuse(RefuseUnsupported, "several apps in this repository: "+strings.Join(candidates, ", "), "point --repo at one of their folders")
}

type packageJSON struct {
	Scripts         map[string]string `json:"scripts"`
	Dependencies    map[string]string `json:"dependencies"`
	DevDependencies map[string]string `json:"devDependencies"`
	PackageManager  string            `json:"packageManager"`
}

func (sv *surveyor) readPackage() {
	s := sv.s
	var pkg packageJSON
	if err := json.Unmarshal([]byte(sv.r.ReadString(sv.p("package.json"))), &pkg); err != nil {
		s.Framework = Framework{Name: "unknown", Reason: "package.json is not valid JSON"}
		return
	}
	deps := map[string]string{}
	for k, v := range pkg.DevDependencies {
		deps[k] = v
	}
	for k, v := range pkg.Dependencies {
		deps[k] = v
	}
	for k, v := range pkg.Scripts {
		s.Scripts[k] = v
	}
	s.Framework = detectFramework(deps)
	if s.Framework.Name == "nextjs" {
		s.Framework.Router = sv.router()
		switch {
		case s.Framework.Router == "":
			s.Framework.Supported, s.Framework.Reason = false, "Next.js is a dependency but there is no app/ or pages/ folder"
		case s.Scripts["build"] == "" || s.Scripts["start"] == "":
			s.Framework.Supported, s.Framework.Reason = false, "package.json needs build and start scripts (the preview runs them)"
		}
	}

	s.PackageManager, s.Lockfile = "npm", ""
	for _, lf := range []struct{ file, pm string }{
		{"package-lock.json", "npm"}, {"bun.lock", "bun"}, {"bun.lockb", "bun"},
		{"pnpm-lock.yaml", "pnpm"}, {"yarn.lock", "yarn"},
	} {
		if sv.r.Has(sv.p(lf.file)) || sv.r.Has(lf.file) {
			s.PackageManager, s.Lockfile = lf.pm, lf.file
			break
		}
	}
	if pm, _, ok := strings.Cut(pkg.PackageManager, "@"); ok && slices.Contains([]string{"npm", "bun", "pnpm", "yarn"}, pm) {
		s.PackageManager = pm
	}
	if s.Lockfile == "" {
		s.Notes = append(s.Notes, "no lockfile: installs are not reproducible")
	}
	s.Port = 3000
	if m := portRe.FindStringSubmatch(s.Scripts["start"]); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil && n > 0 && n < 65536 {
			s.Port = n
		}
	}
}

var portRe = regexp.MustCompile(`(?:-p|--port)[= ](\d{2,5})`)

func cleanVersion(v string) string {
	return strings.TrimLeft(strings.TrimSpace(v), "^~>=<v ")
}

func detectFramework(deps map[string]string) Framework {
	has := func(n string) bool { _, ok := deps[n]; return ok }
	switch {
	case has("next"):
		return Framework{Name: "nextjs", Version: cleanVersion(deps["next"]), Supported: true}
	case has("vite") && has("react"):
		return Framework{Name: "vite-react", Version: cleanVersion(deps["vite"]),
			Reason: "a Vite + React single-page app: recognised, but Signoff builds and serves Next.js apps only for now"}
	case has("react-scripts"):
		return Framework{Name: "create-react-app", Version: cleanVersion(deps["react-scripts"]),
			Reason: "a Create React App project: recognised, but Signoff builds and serves Next.js apps only for now"}
	case has("nuxt") || has("vue"):
		return Framework{Name: "vue", Reason: "a Vue app: Signoff builds and serves Next.js apps only for now"}
	case has("@sveltejs/kit") || has("svelte"):
		return Framework{Name: "svelte", Reason: "a Svelte app: Signoff builds and serves Next.js apps only for now"}
	case has("@angular/core"):
		return Framework{Name: "angular", Reason: "an Angular app: Signoff builds and serves Next.js apps only for now"}
	case has("react"):
		return Framework{Name: "react", Version: cleanVersion(deps["react"]),
			Reason: "React without Next.js: recognised, but Signoff builds and serves Next.js apps only for now"}
	}
	return Framework{Name: "unknown", Reason: "no web framework Signoff knows in package.json"}
}

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
			out = appendUnique(out, f)
		}
	}
	return out
}

func (sv *surveyor) readPage(route, file string, dynamic bool) Page {
	src := sv.r.ReadString(sv.p(file))
	pg := Page{Route: route, File: file, Dynamic: dynamic, Client: useClientRe.MatchString(src)}
	pg.Imports = sv.imports(file, src)
	readAnchors(src, &pg.Anchors)
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
		pg.Fetches = appendUnique(pg.Fetches, m[1])
	}
	return pg
}

// storageDefault finds the value a page falls back to when its localStorage key is unset:
// a default* constant it references, in the page or a module it imports.
func (sv *surveyor) storageDefault(file, src string, imports []string) (json.RawMessage, string) {
	var names []string
	for _, m := range defaultIdRe.FindAllStringSubmatch(src, -1) {
		names = appendUnique(names, m[1])
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
		if covered {
			pg.Auth = &AuthGate{SignInRoute: target, Evidence: file + ": redirects to " + target + " (" + how + ")"}
		}
	}
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
		a.Methods = appendUnique(a.Methods, m[1]+m[2])
	}
	if strings.HasPrefix(file, "pages/") || strings.HasPrefix(file, "src/pages/") {
		a.Methods = appendUnique(a.Methods, "GET")
	}
	a.Internal = strings.Contains(src, "SIGNOFF_COMMIT_SHA")
	a.Auth = (sessionHint.MatchString(src) && unauthRe.MatchString(src)) || authGate(src) != ""
	if m := mapRe.FindStringSubmatchIndex(src); m != nil {
		member, ident := src[m[2]:m[3]], src[m[4]:m[5]]
		imports := sv.imports(file, src)
		var items []string
		from := ""
		if lit, ok := constLiteral(src, ident); ok {
			items, from = stringItems(lit), file+":"+ident
		} else {
			for _, imp := range imports {
				if lit, ok := constLiteral(sv.r.ReadString(sv.p(imp)), ident); ok {
					items, from = stringItems(lit), imp+":"+ident
					break
				}
			}
		}
		if len(items) > 0 {
			c := &Collection{Member: member, Items: items, From: from}
			if ro := returnObj.FindStringSubmatch(src[m[1]:]); ro != nil {
				for _, k := range objKeyRe.FindAllStringSubmatch(ro[1], -1) {
					c.Fields = appendUnique(c.Fields, k[1])
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

var (
	inputTagRe  = regexp.MustCompile(`<input\b[^>]*>`)
	attrRe      = regexp.MustCompile(`\b(name|type|id)=["']([^"']+)["']`)
	submitRe    = regexp.MustCompile(`<button\b[^>]*type=["']submit["']`)
	credObjRe   = regexp.MustCompile(`(?s)\{[^{}]*?\bemail\s*:\s*["']([^"'\s]+@[^"'\s]+)["'][^{}]*?\}`)
	credPassRe  = regexp.MustCompile(`\bpassword\s*:\s*["']([^"']+)["']`)
	credEnvRe   = regexp.MustCompile(`\bpassword\s*:\s*process\.env`)
	demoTextRe  = regexp.MustCompile(`(?i)demo[^<\n]{0,40}?([\w.+-]+@[\w.-]+\.\w+)\s*/\s*([^\s<{]+)`)
	credPathRe  = regexp.MustCompile(`(?i)(session|auth|demo|seed|user|account|fixture)[^/]*\.(ts|tsx|js|jsx|mjs)$`)
	submitAnyRe = regexp.MustCompile(`<button\b`)
)

// readSignIn finds the sign-in route the gated pages use and, if the repository commits a
// demo account, how to sign in with the browser.
func (sv *surveyor) readSignIn() {
	s := sv.s
	targets := map[string]int{}
	gated := false
	for _, pg := range s.Pages {
		if pg.Auth != nil {
			gated = true
			if pg.Auth.SignInRoute != "" {
				targets[pg.Auth.SignInRoute]++
			}
		}
	}
	if gated && len(targets) == 0 {
		// Pages check a session without naming a sign-in route: use the app's sign-in page.
		for _, pg := range s.Pages {
			if regexp.MustCompile(`^` + signInPath + `$`).MatchString(pg.Route) {
				targets[pg.Route]++
			}
		}
		if len(targets) == 0 {
			s.SignInProblem = "pages check for a session but the app has no sign-in page"
			return
		}
	}
	route := ""
	for t, n := range targets {
		if route == "" || n > targets[route] || n == targets[route] && t < route {
			route = t
		}
	}
	if route == "" {
		return // nothing is gated
	}
	pg := s.PageAt(route)
	if pg == nil {
		s.SignInProblem = "pages redirect to " + route + ", which is not a page of this app"
		return
	}
	src := sv.r.ReadString(sv.p(pg.File))
	si := &SignIn{Route: route, File: pg.File}
	for _, tag := range inputTagRe.FindAllString(src, -1) {
		attrs := map[string]string{}
		for _, a := range attrRe.FindAllStringSubmatch(tag, -1) {
			attrs[a[1]] = a[2]
		}
		sel := inputSelector(attrs)
		switch {
		case attrs["type"] == "password" && si.PasswordSelector == "":
			si.PasswordSelector = sel
		case si.EmailSelector == "" && (attrs["type"] == "email" || slices.Contains([]string{"email", "username", "user", "login"}, strings.ToLower(attrs["name"]))):
			si.EmailSelector = sel
		}
	}
	switch {
	case submitRe.MatchString(src):
		si.SubmitSelector = `form button[type="submit"]`
	case submitAnyRe.MatchString(src):
		si.SubmitSelector = "form button"
	}
	if si.EmailSelector == "" || si.PasswordSelector == "" || si.SubmitSelector == "" {
		s.SignInProblem = route + " has no email/password form the browser can fill"
		return
	}
	// The demo account: the sign-in page, what it imports, and files named for sessions or
	// users. Credentials read from the environment are not in the repository.
	files := []string{pg.File}
	for _, imp := range pg.Imports {
		files = appendUnique(files, imp)
		files = appendUnique(files, sv.imports(imp, sv.r.ReadString(sv.p(imp)))...)
	}
	for _, f := range sv.appFiles() {
		if credPathRe.MatchString(f) && !strings.Contains(f, "test") {
			files = appendUnique(files, f)
		}
	}
	envOnly := false
	for _, f := range files {
		fsrc := sv.r.ReadString(sv.p(f))
		for _, obj := range credObjRe.FindAllStringSubmatch(fsrc, -1) {
			if pm := credPassRe.FindStringSubmatch(obj[0]); pm != nil {
				si.Email, si.Password, si.CredentialsFrom = obj[1], pm[1], f
				s.SignIn = si
				return
			}
			if credEnvRe.MatchString(obj[0]) {
				envOnly = true
			}
		}
		if m := demoTextRe.FindStringSubmatch(fsrc); m != nil && !strings.Contains(m[2], "{") {
			si.Email, si.Password, si.CredentialsFrom = m[1], m[2], f
			s.SignIn = si
			return
		}
	}
	if envOnly {
		s.SignInProblem = "the demo password comes from the environment, not the repository: the verifier cannot sign in"
		return
	}
	s.SignInProblem = "no demo account is committed to the repository: the verifier cannot sign in to " + route
}

func inputSelector(attrs map[string]string) string {
	switch {
	case attrs["name"] != "":
		return fmt.Sprintf(`input[name=%q]`, attrs["name"])
	case attrs["id"] != "":
		return "#" + attrs["id"]
	case attrs["type"] != "":
		return fmt.Sprintf(`input[type=%q]`, attrs["type"])
	}
	return "input"
}

// rankRelevant lists the files the goal most likely touches: page files of routes the goal
// names, files whose path or content mention its words, and the global stylesheet for layout
// work.
func (sv *surveyor) rankRelevant(goal string) {
	if strings.TrimSpace(goal) == "" {
		return
	}
	words := keywords(goal)
	type scored struct {
		f      string
		score  int
		reason string
	}
	var list []scored
	layout := hasAny(strings.ToLower(goal), layoutWords)
	for _, f := range sv.appFiles() {
		ext := path.Ext(f)
		if !slices.Contains([]string{".ts", ".tsx", ".js", ".jsx", ".css", ".scss", ".mdx"}, ext) {
			continue
		}
		score, why := 0, ""
		lower := strings.ToLower(f)
		for _, w := range words {
			if strings.Contains(lower, w) {
				score += 5
				why = "path mentions " + w
			}
		}
		if layout && (ext == ".css" || ext == ".scss") {
			score += 3
			if why == "" {
				why = "stylesheet (layout change)"
			}
		}
		if score == 0 && len(words) > 0 {
			src := strings.ToLower(sv.r.ReadString(sv.p(f)))
			for _, w := range words {
				if n := strings.Count(src, w); n > 0 {
					score += min(n, 3)
					if why == "" {
						why = "mentions " + w
					}
				}
			}
		}
		if score > 0 {
			list = append(list, scored{f, score, why})
		}
	}
	sort.SliceStable(list, func(i, j int) bool {
		if list[i].score != list[j].score {
			return list[i].score > list[j].score
		}
		return list[i].f < list[j].f
	})
	for i := 0; i < len(list) && i < 8; i++ {
		sv.s.Relevant = append(sv.s.Relevant, RelevantFile{Path: list[i].f, Reason: list[i].reason})
	}
}

// Summary is a short human account of the survey.
func (s *Survey) Summary() string {
	var b strings.Builder
	where := ""
	if s.AppDir != "" {
		where = " (app in " + s.AppDir + "/)"
	}
	fmt.Fprintf(&b, "%s/%s @ %s%s\n", s.Repo.Owner, s.Repo.Name, short(s.BaseSHA), where)
	fw := s.Framework.Name
	if s.Framework.Name == "nextjs" {
		fw = "Next.js " + s.Framework.Version + ", " + s.Framework.Router + " router"
	} else if s.Framework.Version != "" {
		fw += " " + s.Framework.Version
	}
	if !s.Framework.Supported {
		fw += " — not supported: " + s.Framework.Reason
	}
	lock := s.Lockfile
	if lock == "" {
		lock = "no lockfile"
	}
	var scripts, missing []string
	for _, n := range []string{"build", "start", "lint", "test"} {
		if s.Scripts[n] != "" {
			scripts = append(scripts, n)
		} else {
			missing = append(missing, n)
		}
	}
	fmt.Fprintf(&b, "%s; %s (%s); scripts: %s", fw, s.PackageManager, lock, strings.Join(scripts, ", "))
	if len(missing) > 0 {
		fmt.Fprintf(&b, " (none for %s)", strings.Join(missing, ", "))
	}
	b.WriteString("\n")
	if len(s.Pages) > 0 {
		var ps []string
		for _, p := range s.Pages {
			d := p.Route
			var tags []string
			switch {
			case p.Auth != nil && p.Auth.SignInRoute != "":
				tags = append(tags, "sign-in → "+p.Auth.SignInRoute)
			case p.Auth != nil:
				tags = append(tags, "session required")
			}
			for _, k := range p.Storage {
				tags = append(tags, fmt.Sprintf("localStorage %q", k.Key))
			}
			if len(tags) > 0 {
				d += " [" + strings.Join(tags, ", ") + "]"
			}
			ps = append(ps, d)
		}
		fmt.Fprintf(&b, "pages (%d): %s\n", len(s.Pages), strings.Join(ps, " · "))
	}
	if len(s.APIRoutes) > 0 {
		var as []string
		for _, a := range s.APIRoutes {
			d := strings.Join(a.Methods, ",") + " " + a.Route
			if a.Internal {
				d += " (Signoff hook)"
			}
			as = append(as, strings.TrimSpace(d))
		}
		fmt.Fprintf(&b, "API (%d): %s\n", len(s.APIRoutes), strings.Join(as, " · "))
	}
	switch {
	case s.SignIn != nil:
		fmt.Fprintf(&b, "sign-in: form at %s, demo account in %s\n", s.SignIn.Route, s.SignIn.CredentialsFrom)
	case s.SignInProblem != "":
		fmt.Fprintf(&b, "sign-in: %s\n", s.SignInProblem)
	}
	if len(s.Relevant) > 0 {
		var rs []string
		for _, r := range s.Relevant {
			rs = append(rs, r.Path)
		}
		fmt.Fprintf(&b, "relevant files: %s\n", strings.Join(rs, ", "))
	}
	for _, n := range s.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	return strings.TrimRight(b.String(), "\n")
}

func short(sha string) string {
	if len(sha) > 8 {
		return sha[:8]
	}
	return sha
}
