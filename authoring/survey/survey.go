package survey

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/signoff/signoff/authoring/refusal"
	"github.com/signoff/signoff/contracts"
)

// Survey is what a read-only look at the base commit found: how the app is built and run,
// its pages and endpoints, which pages need a sign-in, and what on each page a criterion can
// point at. It never reads the work tree: every file comes from the pinned commit.
type Survey struct {
	Repo           RepoRef   `json:"repo"`
	BaseSHA        string    `json:"base_sha"`
	AppDir         string    `json:"app_dir,omitempty"`
	Framework      Framework `json:"framework"`
	PackageManager string    `json:"package_manager"`
	// PackageManagerVersion is the release that installs the app: what package.json's
	// packageManager declares (with its hash), else for a Yarn Berry repository the release
	// its yarnPath names or YarnBerryDefault; empty when the preview's pinned release runs.
	PackageManagerVersion string            `json:"package_manager_version,omitempty"`
	Lockfile              string            `json:"lockfile,omitempty"`
	Scripts               map[string]string `json:"scripts"`
	Port                  int               `json:"port"`
	Pages                 []Page            `json:"pages"`
	APIRoutes             []APIRoute        `json:"api_routes"`
	SignIn                *SignIn           `json:"sign_in,omitempty"`
	// SignInProblem says why pages behind a sign-in cannot be verified, when they cannot.
	SignInProblem string         `json:"sign_in_problem,omitempty"`
	Relevant      []RelevantFile `json:"relevant_files,omitempty"`
	Files         int            `json:"files"`
	// ExternalOrigins are the https origins the app's code loads from (a font or stylesheet
	// host): the contract allows them, and blocks every other.
	ExternalOrigins []string `json:"external_origins,omitempty"`
	// PreviewEnv and Services are what previews run the app with (readPreviewEnv); the
	// contract's stack records them. PreviewEnvProblem says why the declared file was refused.
	PreviewEnv        map[string]string `json:"preview_env,omitempty"`
	Services          []string          `json:"services,omitempty"`
	PreviewEnvProblem string            `json:"preview_env_problem,omitempty"`
	Notes             []string          `json:"notes,omitempty"`
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
	// Frame are the anchors of the layouts that wrap the page (app router): the header, nav
	// and footer every page under them shares. They are kept apart from Anchors so a page's
	// own headings and texts stay its own.
	Frame Anchors `json:"frame,omitempty"`
	// Inputs are the named form fields the page renders, in source order.
	Inputs []Input `json:"inputs,omitempty"`
}

// HasRegion reports whether the page, or a layout around it, renders the element. Exported
// for package criteria, which checks a region on the pages that render it.
func (pg *Page) HasRegion(tag string) bool {
	return pg != nil && (pg.Anchors.HasTag(tag) || pg.Frame.HasTag(tag))
}

// Input is a named form field: a selector for it and its type.
type Input struct {
	Selector string `json:"selector"`
	Type     string `json:"type,omitempty"`
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

// Stack says how the app is installed, built and started, from the survey: the stack a
// contract records.
func (s *Survey) Stack() contracts.Stack {
	i, b, st, ok := contracts.StackCommands(s.PackageManager, s.PackageManagerVersion, s.Lockfile != "")
	if !ok {
		i, b, st, _ = contracts.StackCommands(contracts.PackageManagerNPM, "", s.Lockfile != "")
	}
	install, build, start := contracts.Command(i), contracts.Command(b), contracts.Command(st)
	if s.AppDir != "" {
		cd := "cd " + s.AppDir + " && "
		install, build, start = cd+install, cd+build, cd+start
	}
	return contracts.Stack{Framework: s.Framework.ContractFramework(), PackageManager: s.PackageManager, PackageManagerVersion: s.PackageManagerVersion,
		Install: install, Build: build, Start: start, Port: s.Port, AppDir: s.AppDir, Env: s.PreviewEnv, Services: s.Services}
}

// Options tune a survey.
type Options struct {
	// Goal, when set, ranks the files most likely relevant to it.
	Goal string
}

// Read surveys the source at its pinned base commit. The source must be readable
// (Fetch for remote URLs). It returns an error only when the repository cannot be read;
// an unsupported framework is a survey with Framework.Supported false.
func Read(ctx context.Context, src *Source, opts Options) (*Survey, error) {
	if src.GitDir == "" {
		return nil, &refusal.InputError{Field: "repo", Reason: "the repository has not been fetched"}
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
		s.Notes = append(s.Notes, fmt.Sprintf("the work tree has %d uncommitted change(s); the contract is pinned to %s and ignores them", src.Uncommitted, contracts.ShortSHA(sha)))
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
	sv.readOrigins()
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
		return refusal.New(refusal.Unsupported, "no package.json in "+where+" or below it", "point --repo at the app's folder")
	case 1:
		dir := sv.p(candidates[0])
		sv.s.Notes = append(sv.s.Notes, "the app lives in "+dir+"/")
		sv.s.AppDir = dir
		return nil
	}
	return refusal.New(refusal.Unsupported, "several apps in this repository: "+strings.Join(candidates, ", "), "point --repo at one of their folders")
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

	sv.readPreviewEnv(deps)
	s.PackageManager, s.Lockfile = contracts.DetectPackageManager(func(f string) bool { return sv.r.Has(sv.p(f)) || sv.r.Has(f) })
	sv.readRelease(pkg.PackageManager)
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

// YarnBerryDefault is the Yarn release that installs a Yarn Berry repository (a yarn.lock
// with __metadata, or a .yarnrc.yml) that declares no release and has no yarnPath.
const YarnBerryDefault = "4.9.2"

// yarnPathRe reads .yarnrc.yml's yarnPath and the release its file name carries.
var (
	yarnPathRe      = regexp.MustCompile(`(?m)^yarnPath:\s*["']?([^"'\s]+)`)
	yarnReleaseRe   = regexp.MustCompile(`yarn-(\d{1,4}\.\d{1,4}\.\d{1,6}(?:-[0-9A-Za-z.-]{1,40})?)\.c?js$`)
	berryLockfileRe = regexp.MustCompile(`(?m)^__metadata:`)
)

// readRelease decides which release of the package manager installs the app: the one
// package.json's packageManager declares (corepack's field: it also names the package
// manager, over the lockfile), else for Yarn the Berry release the repository's own files
// show. A field corepack would refuse is noted and the lockfile decides.
func (sv *surveyor) readRelease(field string) {
	s := sv.s
	if field != "" {
		rel, err := contracts.ParseRelease(field)
		if err != nil {
			s.Notes = append(s.Notes, fmt.Sprintf("%v: ignored; the lockfile decides (%s)", err, s.PackageManager))
		} else {
			s.PackageManager, s.PackageManagerVersion = rel.Name, strings.TrimPrefix(rel.String(), rel.Name+"@")
			s.Notes = append(s.Notes, fmt.Sprintf("package.json declares %s: that release installs, builds and starts the app", rel.Name+"@"+rel.Version))
			return
		}
	}
	if s.PackageManager != contracts.PackageManagerYarn {
		return
	}
	rc := sv.r.ReadString(sv.p(".yarnrc.yml"))
	berry := rc != "" || (s.Lockfile == "yarn.lock" && berryLockfileRe.MatchString(sv.r.ReadString(sv.p("yarn.lock"))))
	if !berry {
		return
	}
	s.PackageManagerVersion = YarnBerryDefault
	if m := yarnPathRe.FindStringSubmatch(rc); m != nil {
		if r := yarnReleaseRe.FindStringSubmatch(m[1]); r != nil {
			s.PackageManagerVersion = r[1]
		}
	}
	s.Notes = append(s.Notes, fmt.Sprintf("a Yarn Berry repository that declares no packageManager: yarn %s installs it (yarn install --immutable)", s.PackageManagerVersion))
}

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
