package survey_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/signoff/signoff/authoring/internal/authoringtest"
	"github.com/signoff/signoff/authoring/survey"
)

func TestSurveyFinance(t *testing.T) {
	_, sha := authoringtest.FinanceRepo(t)
	s := authoringtest.FinanceSurvey(t)
	if s.BaseSHA != sha || s.Repo.Owner != "signoff-fixtures" || s.Repo.Name != "finance" {
		t.Fatalf("pinned to %s as %s/%s", s.BaseSHA, s.Repo.Owner, s.Repo.Name)
	}
	if f := s.Framework; f.Name != "nextjs" || f.Version != "16.4.6" || f.Router != "app" || !f.Supported {
		t.Errorf("framework %+v", f)
	}
	if s.PackageManager != "npm" || s.Lockfile != "package-lock.json" || s.Scripts["build"] != "next build" || s.Scripts["start"] != "next start" || s.Port != 3000 {
		t.Errorf("stack: %s %s %v port %d", s.PackageManager, s.Lockfile, s.Scripts, s.Port)
	}
	var routes []string
	for _, p := range s.Pages {
		routes = append(routes, p.Route+"="+p.File)
	}
	want := []string{"/=app/page.tsx", "/onboarding=app/onboarding/page.tsx", "/paper=app/paper/page.tsx", "/signin=app/signin/page.tsx", "/watchlist=app/watchlist/page.tsx"}
	if !slices.Equal(routes, want) {
		t.Errorf("pages %v, want %v", routes, want)
	}
	var apis []string
	for _, a := range s.APIRoutes {
		apis = append(apis, a.Route+" "+strings.Join(a.Methods, ","))
	}
	if !slices.Equal(apis, []string{"/api/quotes GET", "/api/signin POST", "/api/signout POST", "/api/verification GET"}) {
		t.Errorf("api routes %v", apis)
	}
	if !s.APIAt("/api/verification").Internal || s.APIAt("/api/quotes").Internal {
		t.Error("the verification hook is not told apart")
	}
	if c := s.APIAt("/api/quotes").Collection; c == nil || c.Member != "quotes" || c.KeyField != "symbol" || !slices.Equal(c.Items, []string{"NVDA", "AAPL", "MSFT", "SPY"}) {
		t.Errorf("quotes collection %+v", c)
	}
	// Auth: only /paper, found from its redirect.
	for _, p := range s.Pages {
		if (p.Auth != nil) != (p.Route == "/paper") {
			t.Errorf("%s auth %+v", p.Route, p.Auth)
		}
	}
	if g := s.PageAt("/paper").Auth; g == nil || g.SignInRoute != "/signin" || !strings.Contains(g.Evidence, "app/paper/page.tsx") {
		t.Errorf("paper gate %+v", g)
	}
	si := s.SignIn
	if si == nil || si.Route != "/signin" || si.Email != "demo@signoff.local" || si.Password != "signoff-demo" || si.CredentialsFrom != "lib/session.ts" ||
		si.EmailSelector != `input[name="email"]` || si.PasswordSelector != `input[name="password"]` {
		t.Errorf("sign-in %+v (%s)", si, s.SignInProblem)
	}
	wl := s.PageAt("/watchlist")
	if !wl.Client || len(wl.Storage) != 1 || wl.Storage[0].Key != "watchlist" || string(wl.Storage[0].Default) != `["NVDA","AAPL","MSFT","SPY"]` ||
		wl.Storage[0].DefaultFrom != "lib/quotes.ts:defaultWatchlist" {
		t.Errorf("watchlist page %+v", wl)
	}
	if wl.Loading != `[data-testid="loading"]` || !wl.Anchors.HasTag("table") || !slices.Contains(wl.Anchors.ItemAttrs, "data-symbol") {
		t.Errorf("watchlist anchors %+v loading %q", wl.Anchors, wl.Loading)
	}
	if slices.Contains(wl.Anchors.Texts, "catch") {
		t.Error("code read as text")
	}
	sum := s.Summary()
	for _, part := range []string{"Next.js 16.4.6, app router", "npm (package-lock.json)", "/paper [sign-in → /signin]", `/watchlist [localStorage "watchlist"]`, "demo account in lib/session.ts"} {
		if !strings.Contains(sum, part) {
			t.Errorf("summary lacks %q:\n%s", part, sum)
		}
	}
	t.Log("\n" + sum)
}

func TestSurveyRanksRelevantFiles(t *testing.T) {
	repo, _ := authoringtest.FinanceRepo(t)
	src, err := survey.ResolveSource(context.Background(), repo, "", "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := survey.Read(context.Background(), src, survey.Options{Goal: "Cards instead of the table on the watchlist below 640px"})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Relevant) < 2 || s.Relevant[0].Path != "app/watchlist/page.tsx" || !slices.ContainsFunc(s.Relevant, func(r survey.RelevantFile) bool { return r.Path == "app/globals.css" }) {
		t.Errorf("relevant %+v", s.Relevant)
	}
}

// TestSurveyReadsTheCommitNotTheWorkTree: uncommitted edits are not surveyed, only counted.
func TestSurveyReadsTheCommitNotTheWorkTree(t *testing.T) {
	files := financeFiles(t, "")
	repo, sha := authoringtest.RepoFrom(t, files)
	page := filepath.Join(repo, "app", "watchlist", "page.tsx")
	if err := os.WriteFile(page, []byte(`export default function P() { return <h1>Edited</h1> }`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "app", "extra.tsx"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := gitIn(t, repo, "status", "--porcelain")
	src, err := survey.ResolveSource(context.Background(), repo, "", "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := survey.Read(context.Background(), src, survey.Options{Goal: "watchlist"})
	if err != nil {
		t.Fatal(err)
	}
	if s.BaseSHA != sha || s.PageAt("/watchlist").Anchors.Headings[0] != "Watchlist" {
		t.Errorf("survey read the work tree: %+v", s.PageAt("/watchlist").Anchors.Headings)
	}
	if src.Uncommitted != 1 || !slices.ContainsFunc(s.Notes, func(n string) bool { return strings.Contains(n, "uncommitted") }) {
		t.Errorf("uncommitted %d, notes %v", src.Uncommitted, s.Notes)
	}
	if after := gitIn(t, repo, "status", "--porcelain"); after != before {
		t.Errorf("the survey changed the repository state:\n%s\nvs\n%s", after, before)
	}
}

// TestSurveySubfolder: --repo may name a folder inside a repository; the app lives there.
func TestSurveySubfolder(t *testing.T) {
	files := financeFiles(t, "web/")
	files["README.md"] = "monorepo\n"
	files["tools/package.json"] = `{"name":"tools","devDependencies":{"eslint":"9"}}`
	repo, sha := authoringtest.RepoFrom(t, files)
	for _, p := range []string{filepath.Join(repo, "web"), filepath.Join(repo, "web", "app", "watchlist")} {
		src, err := survey.ResolveSource(context.Background(), p, "", "")
		if err != nil {
			t.Fatal(err)
		}
		s, err := survey.Read(context.Background(), src, survey.Options{})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if s.AppDir != "web" || s.BaseSHA != sha || s.PageAt("/paper") == nil || s.SignIn == nil {
			t.Errorf("%s: app dir %q, pages %d, sign-in %v", p, s.AppDir, len(s.Pages), s.SignIn)
		}
		if src.GitDir != repo {
			t.Errorf("git top level %s, want %s", src.GitDir, repo)
		}
		st := s.Stack()
		if st.Install != "cd web && npm ci" || st.Build != "cd web && npm run build" {
			t.Errorf("stack %+v", st)
		}
	}
	// From the top level: the one app below is found.
	src, _ := survey.ResolveSource(context.Background(), repo, "", "")
	s, err := survey.Read(context.Background(), src, survey.Options{})
	if err != nil || s.AppDir != "web" {
		t.Fatalf("from the top: %v, app dir %q", err, s.AppDir)
	}
}

func TestSurveyRecognisesUnsupportedFrameworks(t *testing.T) {
	cases := map[string]string{
		"vite-react":       `{"scripts":{"build":"vite build"},"dependencies":{"react":"19.0.0"},"devDependencies":{"vite":"^6.0.0"}}`,
		"create-react-app": `{"dependencies":{"react":"18.2.0","react-scripts":"5.0.1"}}`,
		"react":            `{"dependencies":{"react":"19.0.0","react-dom":"19.0.0"}}`,
		"unknown":          `{"dependencies":{"express":"4.0.0"}}`,
	}
	for name, pkg := range cases {
		repo, _ := authoringtest.RepoFrom(t, map[string]string{"package.json": pkg, "index.html": "<div id=root></div>", "src/main.jsx": "x"})
		src, _ := survey.ResolveSource(context.Background(), repo, "", "")
		s, err := survey.Read(context.Background(), src, survey.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if s.Framework.Name != name || s.Framework.Supported || s.Framework.Reason == "" {
			t.Errorf("%s: %+v", name, s.Framework)
		}
	}
}

// TestSurveyPagesRouterAndMiddleware: pages router routes, a middleware gate, and a sign-in
// whose password comes from the environment (not automatable).
func TestSurveyPagesRouterAndMiddleware(t *testing.T) {
	repo, _ := authoringtest.RepoFrom(t, map[string]string{
		"package.json":            `{"scripts":{"build":"next build","start":"next start -p 4100"},"dependencies":{"next":"^14.2.0","react":"18.3.0"}}`,
		"yarn.lock":               "# yarn\n",
		"pages/index.tsx":         `export default function Home() { return <h1>Shop</h1> }`,
		"pages/_app.tsx":          `export default function App() { return null }`,
		"pages/orders/index.tsx":  `export default function Orders() { return <main><h1>Your orders</h1><table data-testid="orders"></table></main> }`,
		"pages/orders/[id].tsx":   `export default function Order() { return <h1>Order</h1> }`,
		"pages/login.tsx":         `export default function Login() { return <form><input name="email" type="email"/><input name="password" type="password"/><button type="submit">Log in</button></form> }`,
		"pages/api/orders.ts":     `export default function handler(req, res) { res.json({ orders: [] }) }`,
		"lib/auth.ts":             `export const demo = { email: "demo@shop.test", password: process.env.DEMO_PASSWORD };`,
		"middleware.ts":           `import { NextResponse } from "next/server";\nexport function middleware(req) { if (!req.cookies.get("s")) return NextResponse.redirect(new URL("/login", req.url)); }\nexport const config = { matcher: ["/orders/:path*"] };`,
		"components/unused.tsx":   `export const X = 1`,
		"pages/orders/_util.tsx":  `export const helper = 1`,
		"pages/orders/legacy.jsx": `export default function Legacy() { return <p>Old orders</p> }`,
	})
	src, _ := survey.ResolveSource(context.Background(), repo, "", "")
	s, err := survey.Read(context.Background(), src, survey.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Framework.Router != "pages" || s.Framework.Version != "14.2.0" || s.PackageManager != "yarn" || s.Port != 4100 {
		t.Errorf("framework %+v pm %s port %d", s.Framework, s.PackageManager, s.Port)
	}
	var routes []string
	for _, p := range s.Pages {
		routes = append(routes, p.Route)
	}
	if !slices.Equal(routes, []string{"/", "/login", "/orders", "/orders/[id]", "/orders/legacy"}) {
		t.Errorf("pages %v", routes)
	}
	for _, p := range s.Pages {
		gated := strings.HasPrefix(p.Route, "/orders")
		if (p.Auth != nil) != gated {
			t.Errorf("%s: auth %+v", p.Route, p.Auth)
		}
	}
	if s.SignIn != nil || !strings.Contains(s.SignInProblem, "environment") {
		t.Errorf("sign-in %+v, problem %q", s.SignIn, s.SignInProblem)
	}
	if s.APIAt("/api/orders") == nil {
		t.Error("pages/api route missing")
	}
}

// TestSurveySessionCheckWithoutRedirect: a page that answers "not found" without a session
// needs a sign-in too; the app's sign-in page and committed demo account are used.
func TestSurveySessionCheckWithoutRedirect(t *testing.T) {
	repo, _ := authoringtest.RepoFrom(t, map[string]string{
		"package.json": `{"scripts":{"build":"next build","start":"next start"},"dependencies":{"next":"15.0.0"}}`,
		"app/page.tsx": `export default function Home() { return <h1>Home</h1> }`,
		"app/settings/page.tsx": `import { cookies } from "next/headers";
import { notFound } from "next/navigation";
export default async function Settings() {
  if (!(await cookies()).get("sid")) notFound();
  return <main><h1>Settings</h1></main>;
}`,
		"app/login/page.tsx": `import { demoAccount } from "@/lib/demo";
export default function Login() { return <form action="/api/login" method="post"><input id="user" type="email"/><input id="pw" type="password"/><button>Go</button></form> }`,
		"lib/demo.ts":   `export const demoAccount = { email: "demo@example.test", password: "pw-123" };`,
		"tsconfig.json": `{"compilerOptions":{"paths":{"@/*":["./*"]}}}`,
	})
	src, _ := survey.ResolveSource(context.Background(), repo, "", "")
	s, err := survey.Read(context.Background(), src, survey.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := s.PageAt("/settings").Auth
	if g == nil || !strings.Contains(g.Evidence, "notFound()") || s.PageAt("/").Auth != nil {
		t.Fatalf("gate %+v", g)
	}
	si := s.SignIn
	if si == nil || si.Route != "/login" || si.EmailSelector != "#user" || si.PasswordSelector != "#pw" || si.SubmitSelector != "form button" || si.Password != "pw-123" {
		t.Fatalf("sign-in %+v (%s)", si, s.SignInProblem)
	}
	if !strings.Contains(s.Summary(), "/settings [session required]") {
		t.Errorf("summary:\n%s", s.Summary())
	}
}

func TestShopSurveyReadsFrameAndForm(t *testing.T) {
	s := authoringtest.Shop(t)
	pg := s.PageAt("/contact")
	if pg == nil || !pg.HasRegion("header") || !pg.HasRegion("footer") || pg.Anchors.HasTag("header") {
		t.Fatalf("/contact: the layout's header and footer should be in its frame, not its anchors: %+v", pg)
	}
	if len(pg.Inputs) != 1 || pg.Inputs[0].Selector != `input[name="email"]` || pg.Inputs[0].Type != "email" {
		t.Errorf("inputs %+v", pg.Inputs)
	}
}

// The release a repository declares installs it: package.json's packageManager (corepack's
// field) over the lockfile, and a Yarn Berry repository that declares none is installed by Berry
// (the release its yarnPath names), never by Yarn 1 with Yarn 1's flags.
func TestPackageManagerRelease(t *testing.T) {
	const next = `"scripts":{"build":"next build","start":"next start"},"dependencies":{"next":"15.0.0","react":"19.0.0"}`
	page := `export default function Home() { return <h1>Home</h1> }`
	hash := "sha512." + strings.Repeat("0f", 64)
	for _, tc := range []struct {
		name              string
		files             map[string]string
		pm, version, inst string
		note              string
	}{
		{"pnpm declared", map[string]string{"package.json": `{"packageManager":"pnpm@9.15.9",` + next + `}`, "pnpm-lock.yaml": "lockfileVersion: '9.0'\n"},
			"pnpm", "9.15.9", "pnpm install --frozen-lockfile", "declares pnpm@9.15.9"},
		{"yarn 4 with its hash", map[string]string{"package.json": `{"packageManager":"yarn@4.9.2+` + hash + `",` + next + `}`, "yarn.lock": "__metadata:\n  version: 8\n"},
			"yarn", "4.9.2+" + hash, "yarn install --immutable", "declares yarn@4.9.2"},
		{"berry through yarnPath", map[string]string{"package.json": `{` + next + `}`, "yarn.lock": "__metadata:\n  version: 6\n",
			".yarnrc.yml": "nodeLinker: node-modules\nyarnPath: .yarn/releases/yarn-3.6.1.cjs\n", ".yarn/releases/yarn-3.6.1.cjs": "// yarn\n"},
			"yarn", "3.6.1", "yarn install --immutable", "yarn 3.6.1 installs it"},
		{"berry lockfile alone", map[string]string{"package.json": `{` + next + `}`, "yarn.lock": "# generated\n\n__metadata:\n  version: 8\n"},
			"yarn", survey.YarnBerryDefault, "yarn install --immutable", "Yarn Berry repository"},
		{"yarn 1", map[string]string{"package.json": `{` + next + `}`, "yarn.lock": "# yarn lockfile v1\n"},
			"yarn", "", "yarn install --frozen-lockfile", ""},
		{"a range is not a release", map[string]string{"package.json": `{"packageManager":"pnpm@^9",` + next + `}`, "package-lock.json": "{}"},
			"npm", "", "npm ci", "not an exact version (x.y.z): ignored; the lockfile decides (npm)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"app/page.tsx": page}
			for k, v := range tc.files {
				files[k] = v
			}
			repo, _ := authoringtest.RepoFrom(t, files)
			src, _ := survey.ResolveSource(context.Background(), repo, "", "")
			s, err := survey.Read(context.Background(), src, survey.Options{})
			if err != nil {
				t.Fatal(err)
			}
			st := s.Stack()
			if s.PackageManager != tc.pm || s.PackageManagerVersion != tc.version || st.PackageManagerVersion != tc.version || st.Install != tc.inst {
				t.Errorf("%s %q, stack %+v", s.PackageManager, s.PackageManagerVersion, st)
			}
			if tc.note != "" && !slices.ContainsFunc(s.Notes, func(n string) bool { return strings.Contains(n, tc.note) }) {
				t.Errorf("notes %q, want one saying %q", s.Notes, tc.note)
			}
		})
	}
}

// A middleware that runs everywhere (a catch-all matcher) but redirects only one prefix
// without a session gates only that prefix: the public home and pricing pages stay quotable.
// What it tests in a way the survey cannot read leaves the matcher to decide.
func TestMiddlewareConditionsGateOnlyTheirPaths(t *testing.T) {
	const next = `{"scripts":{"build":"next build","start":"next start"},"dependencies":{"next":"15.0.0","react":"19.0.0"}}`
	pages := map[string]string{
		"package.json":             next,
		"package-lock.json":        "{}",
		"app/page.tsx":             `export default function Home() { return <h1>Home</h1> }`,
		"app/pricing/page.tsx":     `export default function Pricing() { return <h1>Pricing</h1> }`,
		"app/dashboard/page.tsx":   `export default function Dash() { return <h1>Dashboard</h1> }`,
		"app/settings/page.tsx":    `export default function Settings() { return <h1>Settings</h1> }`,
		"app/sign-in/page.tsx":     `export default function SignIn() { return <form><input name="email" type="email"/><button type="submit">Sign in</button></form> }`,
		"app/account/page.tsx":     `export default function Account() { return <h1>Account</h1> }`,
		"app/account/new/page.tsx": `export default function NewAccount() { return <h1>New</h1> }`,
	}
	gated := func(t *testing.T, middleware string) []string {
		t.Helper()
		files := map[string]string{"middleware.ts": middleware}
		for k, v := range pages {
			files[k] = v
		}
		repo, _ := authoringtest.RepoFrom(t, files)
		src, _ := survey.ResolveSource(context.Background(), repo, "", "")
		s, err := survey.Read(context.Background(), src, survey.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range s.Pages {
			if p.Auth != nil {
				out = append(out, p.Route)
			}
		}
		return out
	}
	const catchAll = "\nexport const config = { matcher: ['/((?!api|_next/static|_next/image|favicon.ico).*)'] };\n"
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"a const prefix, as nextjs/saas-starter has it", `import { NextResponse, type NextRequest } from 'next/server';
const protectedRoutes = '/dashboard';
export async function middleware(request: NextRequest) {
  const { pathname } = request.nextUrl;
  const sessionCookie = request.cookies.get('session');
  const isProtectedRoute = pathname.startsWith(protectedRoutes);
  if (isProtectedRoute && !sessionCookie) {
    return NextResponse.redirect(new URL('/sign-in', request.url));
  }
  return NextResponse.next();
}` + catchAll, []string{"/dashboard"}},
		{"a list of prefixes", `const privatePaths = ["/dashboard", "/settings"];
export function middleware(req) {
  if (privatePaths.some((p) => req.nextUrl.pathname.startsWith(p)) && !req.cookies.get("s")) return NextResponse.redirect(new URL("/sign-in", req.url));
}` + catchAll, []string{"/dashboard", "/settings"}},
		{"an exact path and a literal prefix", `export function middleware(req) {
  const path = req.nextUrl.pathname;
  if ((path === "/account" || path.startsWith("/settings")) && !req.cookies.get("s")) return NextResponse.redirect(new URL("/sign-in", req.url));
}` + catchAll, []string{"/account", "/settings"}},
		{"a test it cannot read: the matcher decides", `export function middleware(req) {
  if (isPrivate(req.nextUrl.pathname) && !req.cookies.get("s")) return NextResponse.redirect(new URL("/sign-in", req.url));
}
export const config = { matcher: ['/dashboard/:path*', '/settings/:path*'] };`, []string{"/dashboard", "/settings"}},
		{"no condition: everything the matcher covers", `export function middleware(req) {
  if (!req.cookies.get("s")) return NextResponse.redirect(new URL("/sign-in", req.url));
}
export const config = { matcher: ['/account/:path*'] };`, []string{"/account", "/account/new"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := gated(t, tc.src); !slices.Equal(got, tc.want) {
				t.Errorf("gated %v, want %v", got, tc.want)
			}
		})
	}
}

// A sign-in form in a component the page imports, built from a design system's <Input> and
// <Button>, is found, as in nextjs/saas-starter's app/(login).
func TestSignInFormInAnImportedComponent(t *testing.T) {
	repo, _ := authoringtest.RepoFrom(t, map[string]string{
		"package.json":                 `{"scripts":{"build":"next build","start":"next start"},"dependencies":{"next":"15.0.0","react":"19.0.0"}}`,
		"package-lock.json":            "{}",
		"app/page.tsx":                 `export default function Home() { return <h1>Home</h1> }`,
		"app/dashboard/page.tsx":       `export default function Dash() { return <h1>Dashboard</h1> }`,
		"app/(login)/sign-in/page.tsx": `import { Login } from '../login';` + "\nexport default function SignInPage() { return <Login mode=\"signin\" />; }",
		"app/(login)/login.tsx": `'use client';
import { Button } from '@/components/ui/button';
import { Input } from '@/components/ui/input';
export function Login({ mode }) {
  return (
    <form className="space-y-6" action={formAction}>
      <Input id="email" name="email" type="email" autoComplete="email" required maxLength={50} />
      <Input
        id="password"
        name="password"
        type="password"
        required
      />
      <Button type="submit" className="w-full">Sign in</Button>
    </form>
  );
}`,
		"components/ui/input.tsx":  `export function Input(props) { return <input {...props} /> }`,
		"components/ui/button.tsx": `export function Button(props) { return <button {...props} /> }`,
		"lib/db/seed.ts":           `const user = { email: 'test@test.com', password: 'admin123' };`,
		"tsconfig.json":            `{"compilerOptions":{"paths":{"@/*":["./*"]}}}`,
		"middleware.ts": `const protectedRoutes = '/dashboard';
export async function middleware(request) {
  const { pathname } = request.nextUrl;
  if (pathname.startsWith(protectedRoutes) && !request.cookies.get('session')) {
    return NextResponse.redirect(new URL('/sign-in', request.url));
  }
}
export const config = { matcher: ['/((?!api|_next/static|_next/image|favicon.ico).*)'] };`,
	})
	src, _ := survey.ResolveSource(context.Background(), repo, "", "")
	s, err := survey.Read(context.Background(), src, survey.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.SignIn == nil {
		t.Fatalf("no sign-in found: %s", s.SignInProblem)
	}
	if s.SignIn.Route != "/sign-in" || s.SignIn.EmailSelector == "" || s.SignIn.PasswordSelector == "" || s.SignIn.SubmitSelector != `form button[type="submit"]` || s.SignIn.Email != "test@test.com" {
		t.Errorf("sign-in %+v", s.SignIn)
	}
	for _, p := range s.Pages {
		if (p.Auth != nil) != (p.Route == "/dashboard") {
			t.Errorf("%s gated: %v", p.Route, p.Auth)
		}
	}
}
