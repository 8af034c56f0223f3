package criteria

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/signoff/signoff/authoring/internal/authoringtest"
	"github.com/signoff/signoff/authoring/refusal"
	"github.com/signoff/signoff/authoring/survey"
	"github.com/signoff/signoff/contracts"
)

// family is one goal in several wordings. The checks assert what the contract measures —
// criterion kinds, routes, viewports, selectors' provenance — never the wording.
type family struct {
	name   string
	goals  []string
	routes []string
	check  func(t *testing.T, d *Draft)
}

var families = []family{
	{
		name: "watchlist mobile cards",
		goals: []string{
			seedGoal,
			"Make the Watchlist page work well on mobile: cards instead of the table below 640px, desktop table kept.",
			"On phones the watchlist table overflows. Show each symbol as a card under 640px wide, but keep the table on desktop.",
			"Responsive watchlist: replace the table with cards on screens narrower than 640 px and leave the desktop layout as it is.",
			"Watchlist: below 640px use a card per symbol instead of the wide table; the desktop table must stay.",
		},
		check: checkWatchlist,
	},
	{
		// A label that says "Mobile optimized" is a claim about phones. Signoff does not
		// certify a claim the page contradicts, so the contract carries the label (what was
		// asked) and the claim's objective test: no horizontal overflow at 390x844. W2 — the
		// label over a table that still overflows — then fails, as the prepared run W2 expects.
		name: "fake fix: a 'Mobile optimized' label",
		goals: []string{
			"Just add a 'Mobile optimized' label to the Watchlist header.",
			`Put a "Mobile optimized" badge in the watchlist page header so phone users know it works.`,
			"Mark the Watchlist header as Mobile optimized with a small label.",
		},
		check: checkFakeFix,
	},
	{
		name: "paper account health",
		goals: []string{
			"Add an Account Health strip to the Paper trading page showing the account's health, buying power and margin used.",
			"Signed-in paper traders should see an 'Account Health' summary at the top of /paper.",
			"Show Account Health (status, buying power, margin used) on the paper trading screen.",
		},
		check: checkPaper,
	},
	{
		name: "backend-only /api/quotes",
		goals: []string{
			`Add a currency field set to "USD" to every quote returned by /api/quotes.`,
			`The quotes API should include currency: "USD" on each quote.`,
			`GET /api/quotes: each quote object needs a "currency" member equal to USD.`,
		},
		check: checkQuotes,
	},
	{
		name: "onboarding skip link",
		goals: []string{
			"Add a 'Skip for now' link to the onboarding page that goes to the watchlist.",
			`On /onboarding, let people skip setup: a "Skip for now" link to /watchlist.`,
			"Get started page: add a Skip for now link pointing to the Watchlist.",
		},
		check: checkOnboarding,
	},
}

func TestParaphrases(t *testing.T) {
	s := authoringtest.FinanceSurvey(t)
	for _, f := range families {
		t.Run(f.name, func(t *testing.T) {
			if len(f.goals) < 3 {
				t.Fatalf("a family needs at least three wordings, has %d", len(f.goals))
			}
			var shapes []string
			for _, goal := range f.goals {
				d, err := Rules{}.Generate(context.Background(), GenerateInput{Goal: goal, Routes: f.routes, Survey: s})
				if err != nil {
					t.Errorf("%q: %v", goal, err)
					continue
				}
				t.Run(strings.Join(strings.Fields(goal)[:4], " "), func(t *testing.T) {
					checkCommon(t, d, s)
					f.check(t, d)
				})
				shapes = append(shapes, shape(d))
			}
			// Wordings of one goal give the same measurements (ids, kinds, routes, viewports).
			for i := 1; i < len(shapes); i++ {
				if shapes[i] != shapes[0] {
					t.Errorf("wording %d gives a different contract shape:\n%s\nvs wording 1:\n%s", i+1, shapes[i], shapes[0])
				}
			}
		})
	}
}

// shape is a draft reduced to what the criteria measure.
func shape(d *Draft) string {
	var b strings.Builder
	for _, c := range d.Criteria {
		fmt.Fprintf(&b, "%s %s %v %v %v\n", c.ID, c.Route, authoringtest.KindsOf(c.Assert), c.Viewports(), d.Role(c.ID))
	}
	return b.String()
}

// checkCommon holds for every draft: 4-6 criteria with unique ids and plain descriptions,
// every test-id selector either on the base commit (the survey saw it) or a declared test
// hook, a valid contract.
func checkCommon(t *testing.T, d *Draft, sv *survey.Survey) {
	t.Helper()
	if n := len(d.Criteria); n < contracts.MinCriteria || n > contracts.MaxCriteria {
		t.Errorf("%d criteria, want %d-%d", n, contracts.MinCriteria, contracts.MaxCriteria)
	}
	if len(d.Plan) != len(d.Criteria) {
		t.Errorf("plan has %d entries for %d criteria", len(d.Plan), len(d.Criteria))
	}
	change := 0
	for _, c := range d.Criteria {
		if len(c.Description) < 10 || strings.Contains(strings.ToLower(c.Description), "look") {
			t.Errorf("%s: description %q", c.ID, c.Description)
		}
		if d.Role(c.ID) == RoleChange {
			change++
		}
	}
	if change == 0 {
		t.Error("no criterion checks the change")
	}
	hooks := map[string]bool{}
	for _, h := range d.TestHooks {
		hooks[h.Selector] = true
	}
	for _, c := range d.Criteria {
		if pg := sv.PageAt(c.Route); pg != nil {
			for _, id := range pg.Anchors.TestIDs {
				hooks[fmt.Sprintf(`[data-testid=%q]`, id.ID)] = true
			}
		}
	}
	for _, c := range d.Criteria {
		for _, a := range authoringtest.LeavesOf(c.Assert) {
			for _, sel := range []string{a.Within, a.Selector} {
				if strings.Contains(sel, "data-testid") && !hooks[hookOf(sel)] {
					t.Errorf("%s uses %s, which is not a declared test hook (%v)", c.ID, sel, d.TestHooks)
				}
			}
		}
	}
	s := &survey.Survey{Repo: survey.RepoRef{Owner: "signoff-fixtures", Name: "finance", URL: "fixture://finance"}, BaseSHA: strings.Repeat("a", 40),
		Framework: survey.Framework{Name: "nextjs", Router: "app", Supported: true}, PackageManager: "npm", Lockfile: "package-lock.json", Port: 3000}
	c := d.Terms(s, "draft-under-test", "goal", contracts.VerifierRef{Name: "v", Version: "1", Digest: strings.Repeat("b", 64)}, contracts.Price{Amount: 1000, Currency: "usd"})
	if err := contracts.Validate(c, contracts.LoadOptions{}); err != nil {
		t.Errorf("contract does not validate: %v", err)
	}
}

// hookOf extracts the [data-testid="..."] part of a selector.
func hookOf(sel string) string {
	i := strings.Index(sel, "[data-testid=")
	j := strings.Index(sel[i:], "]")
	return sel[i : i+j+1]
}

// allOnRoute: a one-page goal checks its page, and at most one other page, by the guard it gets
// by default (dropped first from a full contract).
func allOnRoute(t *testing.T, d *Draft, route string) {
	t.Helper()
	for _, c := range ownCriteria(d) {
		if c.Route != route {
			t.Errorf("%s checks %s, want %s", c.ID, c.Route, route)
		}
	}
	var guards []string
	for _, p := range d.Plan {
		if p.Why == whyDefaultGuard {
			guards = append(guards, p.ID)
		}
	}
	if len(guards) > 1 {
		t.Errorf("default guards %v, want at most one", guards)
	}
	for _, c := range d.Criteria {
		if len(guards) == 1 && c.ID == guards[0] && (c.Route == route || d.Role(c.ID) != RoleGuard || !strings.HasPrefix(c.ID, "unchanged-")) {
			t.Errorf("default guard %s checks %s as a %s, want another page than %s as a guard", c.ID, c.Route, d.Role(c.ID), route)
		}
	}
}

// ownCriteria are the criteria but the default guard on another page.
func ownCriteria(d *Draft) []contracts.Criterion {
	var out []contracts.Criterion
	for i, c := range d.Criteria {
		if d.Plan[i].Why != whyDefaultGuard {
			out = append(out, c)
		}
	}
	return out
}

func primary(c contracts.Criterion) contracts.Viewport {
	if c.Viewport == nil {
		return contracts.Viewport{}
	}
	return *c.Viewport
}

func wantOne(t *testing.T, what string, cs []contracts.Criterion) contracts.Criterion {
	t.Helper()
	if len(cs) == 0 {
		t.Fatalf("no criterion %s", what)
	}
	return cs[0]
}

var watchlistSeed = json.RawMessage(`["NVDA","AAPL","MSFT","SPY"]`)

func checkWatchlist(t *testing.T, d *Draft) {
	allOnRoute(t, d, "/watchlist")
	for _, c := range ownCriteria(d) {
		if c.Seed == nil || string(c.Seed.LocalStorage["watchlist"]) != string(watchlistSeed) {
			t.Errorf("%s: seed %v, want localStorage watchlist = %s (read from the page's default)", c.ID, c.Seed, watchlistSeed)
		}
		if c.Assert.Kind == contracts.KindHTTP {
			t.Errorf("%s: an http criterion in a page contract", c.ID)
		}
	}
	ov := wantOne(t, "no_horizontal_overflow", authoringtest.Find(d.Criteria, authoringtest.Kind(contracts.KindNoHorizontalOverflow)))
	if primary(ov) != Mobile || d.Role(ov.ID) != RoleChange {
		t.Errorf("overflow check at %v (%s), want 390x844 as the change", ov.Viewports(), d.Role(ov.ID))
	}
	// The layout change, by structure: the cards displayed with the symbols inside them and
	// the table not displayed, at a phone width and just under the breakpoint.
	checkStructural(t, d, "card", []contracts.Viewport{Mobile, {Width: 639, Height: 844}})
	// Desktop preserved: the table at 1440x1000 with the symbols in it.
	desk := wantOne(t, "at desktop", authoringtest.Find(d.Criteria, func(c contracts.Criterion, a contracts.Assertion) bool {
		return primary(c) == Desktop && a.Kind == contracts.KindVisibleText && a.Within == "table"
	}))
	if d.Role(desk.ID) != RoleGuard || len(desk.ExtraViewports) != 0 {
		t.Errorf("desktop check %s: role %s, viewports %v", desk.ID, d.Role(desk.ID), desk.Viewports())
	}
	wantOne(t, "loads at 390x844", authoringtest.Find(d.Criteria, func(c contracts.Criterion, a contracts.Assertion) bool {
		return a.Kind == contracts.KindLoads && primary(c) == Mobile
	}))
	if len(d.TestHooks) != 1 || d.TestHooks[0].Selector != `[data-testid="watchlist-card"]` {
		t.Errorf("test hooks %v", d.TestHooks)
	}
	if !d.Scope.Layout || !d.Scope.Mobile && !d.Scope.Layout || d.Scope.Auth || d.Scope.NewPage {
		t.Errorf("scope %+v", d.Scope)
	}
}

func checkFakeFix(t *testing.T, d *Draft) {
	allOnRoute(t, d, "/watchlist")
	label := wantOne(t, `showing "Mobile optimized"`, authoringtest.Find(d.Criteria, func(c contracts.Criterion, a contracts.Assertion) bool {
		return a.Kind == contracts.KindVisibleText && slices.Equal(a.Texts, []string{"Mobile optimized"})
	}))
	if d.Role(label.ID) != RoleChange {
		t.Errorf("label check role %s", d.Role(label.ID))
	}
	ov := wantOne(t, "no_horizontal_overflow", authoringtest.Find(d.Criteria, authoringtest.Kind(contracts.KindNoHorizontalOverflow)))
	if primary(ov) != Mobile || d.Role(ov.ID) != RoleChange {
		t.Errorf("the label's claim is not checked at 390x844 as a change: %v %s", ov.Viewports(), d.Role(ov.ID))
	}
	wantOne(t, "keeping the desktop table", authoringtest.Find(d.Criteria, func(c contracts.Criterion, a contracts.Assertion) bool {
		return primary(c) == Desktop && a.Within == "table"
	}))
	if len(authoringtest.Find(d.Criteria, authoringtest.Kind(contracts.KindElementAbsent))) != 0 {
		t.Error("a label request must not demand a layout change")
	}
}

var signIn = []contracts.Action{
	{Type: contracts.ActionGoto, Route: "/signin"},
	{Type: contracts.ActionFill, Selector: `input[name="email"]`, Value: "demo@signoff.local"},
	{Type: contracts.ActionFill, Selector: `input[name="password"]`, Value: "signoff-demo"},
	{Type: contracts.ActionClick, Selector: `form button[type="submit"]`},
	{Type: contracts.ActionGoto, Route: "/paper"},
}

func checkPaper(t *testing.T, d *Draft) {
	allOnRoute(t, d, "/paper")
	for _, c := range ownCriteria(d) {
		if !reflect.DeepEqual(c.Actions, signIn) {
			t.Errorf("%s: actions %+v, want the demo sign-in found by the survey", c.ID, c.Actions)
		}
		if c.Seed != nil {
			t.Errorf("%s: a seed on a page that reads no localStorage", c.ID)
		}
	}
	health := wantOne(t, `showing "Account Health"`, authoringtest.Find(d.Criteria, func(c contracts.Criterion, a contracts.Assertion) bool {
		return a.Kind == contracts.KindVisibleText && slices.Equal(a.Texts, []string{"Account Health"}) && a.Within == `[data-testid="account-health"]`
	}))
	if !slices.Contains(health.Viewports(), Desktop) || !slices.Contains(health.Viewports(), Mobile) || d.Role(health.ID) != RoleChange {
		t.Errorf("%s at %v (%s)", health.ID, health.Viewports(), d.Role(health.ID))
	}
	ov := wantOne(t, "no_horizontal_overflow", authoringtest.Find(d.Criteria, authoringtest.Kind(contracts.KindNoHorizontalOverflow)))
	if primary(ov) != Mobile {
		t.Errorf("overflow at %v", ov.Viewports())
	}
	wantOne(t, "loading at 1440x1000", authoringtest.Find(d.Criteria, func(c contracts.Criterion, a contracts.Assertion) bool {
		return a.Kind == contracts.KindLoads && primary(c) == Desktop
	}))
	guard := wantOne(t, "keeping the page's content", authoringtest.Find(d.Criteria, func(c contracts.Criterion, a contracts.Assertion) bool {
		return c.Assert.Kind == contracts.KindVisibleText && a.Within == "" && d.Role(c.ID) == RoleGuard
	}))
	if !slices.Contains(guard.Assert.Texts, "Paper trading") {
		t.Errorf("page guard %v lacks the page heading", guard.Assert.Texts)
	}
	if !d.Scope.Auth || d.Scope.BackendOnly {
		t.Errorf("scope %+v", d.Scope)
	}
}

func checkQuotes(t *testing.T, d *Draft) {
	for _, c := range d.Criteria {
		if c.Assert.Kind != contracts.KindHTTP || c.Viewport != nil || len(c.ExtraViewports) > 0 || c.Seed != nil || len(c.Actions) > 0 {
			t.Errorf("%s: %s at %v: a backend-only contract has http criteria with no viewport", c.ID, c.Assert.Kind, c.Viewports())
		}
		if !slices.Equal(c.RequiredArtifacts, []string{contracts.ArtifactObserved}) {
			t.Errorf("%s: artifacts %v", c.ID, c.RequiredArtifacts)
		}
	}
	var onQuotes, currency int
	for _, c := range d.Criteria {
		if c.Route == "/api/quotes" {
			onQuotes++
		}
		for _, j := range c.Assert.JSON {
			if strings.HasSuffix(j.Pointer, "/currency") && string(j.Expected) == `"USD"` && j.Operator == contracts.OpEQ && d.Role(c.ID) == RoleChange {
				currency++
			}
		}
	}
	if onQuotes < 3 || currency < 2 {
		t.Errorf("%d criteria on /api/quotes, %d currency checks (first and last quote)", onQuotes, currency)
	}
	shapeCheck := wantOne(t, "on the existing shape", authoringtest.Find(d.Criteria, func(c contracts.Criterion, a contracts.Assertion) bool {
		return len(a.JSON) == 1 && a.JSON[0].Pointer == "/quotes/0/symbol" && string(a.JSON[0].Expected) == `"NVDA"`
	}))
	if d.Role(shapeCheck.ID) != RoleGuard {
		t.Errorf("shape check role %s", d.Role(shapeCheck.ID))
	}
	if !d.Scope.BackendOnly || len(d.Scope.Pages) != 0 {
		t.Errorf("scope %+v", d.Scope)
	}
}

func checkOnboarding(t *testing.T, d *Draft) {
	allOnRoute(t, d, "/onboarding")
	wantOne(t, `showing "Skip for now" in a hook`, authoringtest.Find(d.Criteria, func(c contracts.Criterion, a contracts.Assertion) bool {
		return a.Kind == contracts.KindVisibleText && slices.Equal(a.Texts, []string{"Skip for now"}) && a.Within == `[data-testid="skip-for-now"]`
	}))
	wantOne(t, "on where the link leads", authoringtest.Find(d.Criteria, func(c contracts.Criterion, a contracts.Assertion) bool {
		return a.Kind == contracts.KindElementPresent && a.Selector == `a[data-testid="skip-for-now"][href="/watchlist"]`
	}))
	ov := wantOne(t, "no_horizontal_overflow", authoringtest.Find(d.Criteria, authoringtest.Kind(contracts.KindNoHorizontalOverflow)))
	if primary(ov) != Mobile || d.Role(ov.ID) != RoleGuard {
		t.Errorf("overflow %v %s", ov.Viewports(), d.Role(ov.ID))
	}
	guard := wantOne(t, "keeping the page's content", authoringtest.Find(d.Criteria, func(c contracts.Criterion, a contracts.Assertion) bool {
		return c.Assert.Kind == contracts.KindVisibleText && a.Within == "" && primary(c) == Desktop
	}))
	if !slices.Contains(guard.Assert.Texts, "Get started") {
		t.Errorf("guard %v", guard.Assert.Texts)
	}
}

func TestRefusals(t *testing.T) {
	s := authoringtest.FinanceSurvey(t)
	cases := []struct {
		code  string
		goals []string
	}{
		{refusal.Subjective, []string{
			"Make the watchlist look nicer.",
			"Improve the UX of the paper trading page.",
			"Give the onboarding page a more modern, polished feel.",
		}},
		{refusal.OutOfScope, []string{
			"Rewrite the whole app in Rust.",
			"Set up a Kubernetes deployment with autoscaling for the finance app.",
			"Fix the login bug in the acme/billing repo.",
			"Add the watchlist cards to all our repositories.",
		}},
		{refusal.TooBroad, []string{"Make every page responsive on phones."}},
		{refusal.NoRoute, []string{"Add a dark mode toggle."}},
		{refusal.Unspecified, []string{"The quotes API should also return each company's name."}},
	}
	for _, c := range cases {
		for _, goal := range c.goals {
			_, err := Rules{}.Generate(context.Background(), GenerateInput{Goal: goal, Survey: s})
			var r *refusal.Error
			if !errors.As(err, &r) {
				t.Errorf("%q: %v, want a refusal", goal, err)
				continue
			}
			if r.Code != c.code || r.Reason == "" {
				t.Errorf("%q: refused %s (%s), want %s", goal, r.Code, r.Reason, c.code)
			}
			t.Logf("%q -> %v", goal, err)
		}
	}
}

func TestMixedSubjectiveGoalKeepsTheObjectivePart(t *testing.T) {
	d, err := Rules{}.Generate(context.Background(), GenerateInput{Goal: "Make the watchlist look nicer and work on mobile phones.", Survey: authoringtest.FinanceSurvey(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(authoringtest.Find(d.Criteria, authoringtest.Kind(contracts.KindNoHorizontalOverflow))) == 0 {
		t.Error("no mobile check")
	}
	if !slices.ContainsFunc(d.Notes, func(n string) bool { return strings.Contains(n, "look nicer") && strings.Contains(n, "subjective") }) {
		t.Errorf("notes %v do not say the subjective part is not checked", d.Notes)
	}
}

func TestExplicitRoute(t *testing.T) {
	s := authoringtest.FinanceSurvey(t)
	d, err := Rules{}.Generate(context.Background(), GenerateInput{Goal: "Make it work on phones.", Routes: []string{"/onboarding"}, Survey: s})
	if err != nil {
		t.Fatal(err)
	}
	allOnRoute(t, d, "/onboarding")
	// A page that does not exist yet: it must load afterwards, so loading is the change.
	d, err = Rules{}.Generate(context.Background(), GenerateInput{Goal: "Add a Market News page with the heading 'Market news'.", Routes: []string{"/news"}, Survey: s})
	if err != nil {
		t.Fatal(err)
	}
	allOnRoute(t, d, "/news")
	loads := wantOne(t, "loads", authoringtest.Find(d.Criteria, authoringtest.Kind(contracts.KindLoads)))
	if d.Role(loads.ID) != RoleChange || !d.Scope.NewPage {
		t.Errorf("new page: loads role %s, scope %+v", d.Role(loads.ID), d.Scope)
	}
}

func TestAuthRefusedWithoutDemoAccount(t *testing.T) {
	s := *authoringtest.FinanceSurvey(t)
	s.SignIn, s.SignInProblem = nil, "no demo account is committed to the repository"
	_, err := Rules{}.Generate(context.Background(), GenerateInput{Goal: "Add an 'Account Health' strip to /paper.", Survey: &s})
	var r *refusal.Error
	if !errors.As(err, &r) || r.Code != refusal.Auth || !strings.Contains(r.Reason, "/signin") || !strings.Contains(r.Reason, "demo account") {
		t.Fatalf("got %v, want an auth refusal naming the redirect and the missing account", err)
	}
}

// TestUnsupportedFrameworkRefused: an app Signoff cannot build and serve is refused with the
// survey's reason (the survey's own tests read the frameworks).
func TestUnsupportedFrameworkRefused(t *testing.T) {
	s := &survey.Survey{Framework: survey.Framework{Name: "vite-react",
		Reason: "a Vite + React single-page app: recognised, but Signoff builds and serves Next.js apps only for now"}}
	_, err := Rules{}.Generate(context.Background(), GenerateInput{Goal: "Make the home page work on mobile", Survey: s})
	var r *refusal.Error
	if !errors.As(err, &r) || r.Code != refusal.Unsupported || r.Reason != s.Framework.Reason {
		t.Errorf("%v, want an unsupported refusal with the survey's reason", err)
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	s := authoringtest.FinanceSurvey(t)
	for _, f := range families {
		a, err := Rules{}.Generate(context.Background(), GenerateInput{Goal: f.goals[0], Survey: s})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Rules{}.Generate(context.Background(), GenerateInput{Goal: f.goals[0], Survey: s})
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Errorf("%s: two runs differ", f.name)
		}
	}
}

// TestLoadingStateRule: a page that requests its data from the browser gets a check that
// holds the request and looks for the loading state meanwhile.
func TestLoadingStateRule(t *testing.T) {
	repo, _ := authoringtest.RepoFrom(t, map[string]string{
		"package.json":      `{"scripts":{"build":"next build","start":"next start"},"dependencies":{"next":"16.4.6","react":"19.3.1"}}`,
		"package-lock.json": "{}",
		"app/page.tsx":      `export default function Home() { return <h1>Home</h1> }`,
		"app/prices/page.tsx": `"use client";
import { useEffect, useState } from "react";
export default function Prices() {
  const [rows, setRows] = useState<string[] | null>(null);
  useEffect(() => { fetch("/api/prices").then((r) => r.json()).then((d) => setRows(d.rows)); }, []);
  return <main><h1>Live prices</h1>{rows === null ? <p data-testid="prices-loading">Loading prices</p> : <ul data-testid="price-list">{rows.map((r) => <li key={r}>{r}</li>)}</ul>}</main>;
}`,
		"app/api/prices/route.ts": `export function GET() { return Response.json({ rows: ["A"] }) }`,
	})
	src, _ := survey.ResolveSource(context.Background(), repo, "", "")
	s, err := survey.Read(context.Background(), src, survey.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if pg := s.PageAt("/prices"); pg == nil || !slices.Equal(pg.Fetches, []string{"/api/prices"}) || pg.Loading != `[data-testid="prices-loading"]` {
		t.Fatalf("prices page %+v", pg)
	}
	d, err := Rules{}.Generate(context.Background(), GenerateInput{Goal: "Show a loading state on the prices page while the prices load.", Survey: s})
	if err != nil {
		t.Fatal(err)
	}
	checkCommon(t, d, s)
	allOnRoute(t, d, "/prices")
	c := wantOne(t, "for the loading state", authoringtest.Find(d.Criteria, func(c contracts.Criterion, a contracts.Assertion) bool {
		return a.Kind == contracts.KindElementPresent && a.Selector == `[data-testid="prices-loading"]`
	}))
	if len(c.Actions) == 0 || c.Actions[0].Type != contracts.ActionDelayRoute || c.Actions[0].Route != "/api/prices*" || c.Actions[0].DelayMS < 1000 {
		t.Errorf("loading check actions %+v", c.Actions)
	}
	if !d.Scope.Loading {
		t.Errorf("scope %+v", d.Scope)
	}
}

func TestTwoPages(t *testing.T) {
	s := authoringtest.FinanceSurvey(t)
	d, err := Rules{}.Generate(context.Background(), GenerateInput{Goal: "Make the watchlist and onboarding pages work on phones.", Survey: s})
	if err != nil {
		t.Fatal(err)
	}
	checkCommon(t, d, s)
	for _, route := range []string{"/watchlist", "/onboarding"} {
		if len(authoringtest.Find(d.Criteria, func(c contracts.Criterion, a contracts.Assertion) bool {
			return c.Route == route && a.Kind == contracts.KindNoHorizontalOverflow && primary(c) == Mobile
		})) != 1 {
			t.Errorf("%s has no phone overflow check: %s", route, shape(d))
		}
	}
	if !slices.Equal(d.Scope.Pages, []string{"/watchlist", "/onboarding"}) || !d.Scope.Mobile {
		t.Errorf("two-page scope %+v", d.Scope)
	}
}

// TestUnscopedLayoutChange: cards everywhere means no desktop table to keep; a contract
// demanding both would be impossible to satisfy.
func TestUnscopedLayoutChange(t *testing.T) {
	s := authoringtest.FinanceSurvey(t)
	d, err := Rules{}.Generate(context.Background(), GenerateInput{Goal: "Replace the watchlist table with cards.", Survey: s})
	if err != nil {
		t.Fatal(err)
	}
	checkCommon(t, d, s)
	st := wantOne(t, "for the card layout", authoringtest.Find(d.Criteria, func(c contracts.Criterion, a contracts.Assertion) bool {
		return a.Kind == contracts.KindElementAbsent && a.Selector == `table, [role="table"], [role="grid"]`
	}))
	if !slices.Contains(st.Viewports(), Desktop) || !slices.Contains(st.Viewports(), Mobile) {
		t.Errorf("structural check at %v, want phone and desktop", st.Viewports())
	}
	if len(authoringtest.Find(d.Criteria, func(c contracts.Criterion, a contracts.Assertion) bool { return a.Within == "table" })) != 0 {
		t.Errorf("a check still wants the table:\n%s", shape(d))
	}
}

// TestFeatureDescriptionNamesTheElement: a description names the new element and its hook
// as such ("in the new note (<selector>)"), and a page region by its word, not as a run of
// words with a selector tacked on.
func TestFeatureDescriptionNamesTheElement(t *testing.T) {
	s := authoringtest.FinanceSurvey(t)
	for goal, want := range map[string]string{
		"Add a 'Prices are delayed' note to the Watchlist page.":       `in the new note ([data-testid="prices-are-delayed"])`,
		"Just add a 'Mobile optimized' label to the Watchlist header.": "inside the page's header (<header>)",
	} {
		d, err := Rules{}.Generate(context.Background(), GenerateInput{Goal: goal, Survey: s})
		if err != nil {
			t.Fatal(err)
		}
		c := wantOne(t, "for the new element", authoringtest.Find(d.Criteria, func(c contracts.Criterion, a contracts.Assertion) bool {
			return c.Assert.Kind == contracts.KindVisibleText && d.Role(c.ID) == RoleChange
		}))
		if !strings.Contains(c.Description, want) {
			t.Errorf("%q: description %q does not say %q", goal, c.Description, want)
		}
	}
}

// TestOnePageGoalGuardsAnotherPageByDefault: a goal about one page says nothing of the others,
// and a change that edits them too is still not what was asked. One other page is guarded; a
// contract the page's own criteria fill leaves the guard out and says so.
func TestOnePageGoalGuardsAnotherPageByDefault(t *testing.T) {
	s := authoringtest.FinanceSurvey(t)
	d, err := Rules{}.Generate(context.Background(), GenerateInput{Goal: "Make the Watchlist page work well on mobile: cards instead of the table below 640px, desktop table kept.", Survey: s})
	if err != nil {
		t.Fatal(err)
	}
	g := wantOne(t, "guarding another page", authoringtest.Find(d.Criteria, func(c contracts.Criterion, a contracts.Assertion) bool {
		return c.ID == "unchanged-home"
	}))
	if g.Route != "/" || d.Role(g.ID) != RoleGuard || g.Assert.Kind != contracts.KindAllOf || len(g.Assert.AllOf) != 2 ||
		g.Assert.AllOf[0].Kind != contracts.KindVisibleText || len(g.Assert.AllOf[0].Texts) == 0 || g.Assert.AllOf[1].Kind != contracts.KindStructure || len(g.Viewports()) != 2 {
		t.Errorf("default guard %+v (%s)", g, d.Role(g.ID))
	}
	if !slices.ContainsFunc(d.Notes, func(n string) bool {
		return strings.HasPrefix(n, "other pages guarded by default") && strings.Contains(n, ": /")
	}) {
		t.Errorf("notes %q do not say which page is guarded by default", d.Notes)
	}

	full, err := Rules{}.Generate(context.Background(), GenerateInput{Goal: "Add a 'Skip for now' link to the onboarding page that goes to the watchlist.", Survey: s})
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Criteria) != contracts.MaxCriteria || slices.ContainsFunc(full.Criteria, func(c contracts.Criterion) bool { return c.Route != "/onboarding" }) ||
		!slices.ContainsFunc(full.Criteria, func(c contracts.Criterion) bool { return c.ID == "no-page-errors" }) {
		t.Errorf("a full contract: %s", shape(full))
	}
	if !slices.ContainsFunc(full.Notes, func(n string) bool { return strings.HasPrefix(n, "not checked: that other pages stay as they are") }) {
		t.Errorf("notes %q do not say the other pages are not guarded", full.Notes)
	}

	// Asked for every page: no page is "other".
	site, err := Rules{}.Generate(context.Background(), GenerateInput{Goal: "The header must not overflow on phones on every page.", Survey: s})
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(site.Plan, func(p PlannedCriterion) bool { return p.Why == whyDefaultGuard }) {
		t.Errorf("a site-wide goal got a default guard: %s", shape(site))
	}
}
