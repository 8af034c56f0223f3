package basecheck_test

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/signoff/signoff/authoring"
	"github.com/signoff/signoff/authoring/basecheck"
	"github.com/signoff/signoff/authoring/survey"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/fixtures/finance"
	"github.com/signoff/signoff/fixtures/fixturerepo"
	"github.com/signoff/signoff/internal/preview"
	"github.com/signoff/signoff/internal/sandbox"
	"github.com/signoff/signoff/internal/verify"
	"github.com/signoff/signoff/policy"
)

// One Playwright driver and one Chromium for the package: each costs seconds to start, and
// every criterion still gets fresh browser contexts.
var (
	driver   *verify.Driver
	browser  *verify.Shared
	setupErr error
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if testing.Short() {
		setupErr = errors.New("-short mode builds nothing and runs no browser")
		return m.Run()
	}
	cfg := verify.DefaultConfig()
	if err := cfg.CheckSetup(true); err != nil {
		setupErr = err
		return m.Run()
	}
	d, err := verify.StartDriver(cfg)
	if err != nil {
		setupErr = err
		return m.Run()
	}
	defer d.Stop()
	driver = d
	browser = &verify.Shared{Source: verify.Local{Chromium: cfg.Chromium}}
	defer browser.Close()
	return m.Run()
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the test file")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// needSetup skips in -short mode and otherwise fails naming the setup task that is missing.
func needSetup(t *testing.T) (deps, runAs string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the Next.js fixture and drives Chromium; skipped in -short mode")
	}
	if setupErr != nil {
		t.Fatalf("browser setup missing: %v\nrun `%s` from the repository root", setupErr, verify.SetupTask)
	}
	root := moduleRoot(t)
	deps = filepath.Join(root, ".cache", "finance-deps")
	h := sha256.New()
	for _, f := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(root, "fixtures", "finance", f))
		if err != nil {
			t.Fatal(err)
		}
		h.Write(b)
	}
	stamp, err := os.ReadFile(filepath.Join(deps, ".stamp"))
	if err != nil || strings.TrimSpace(string(stamp)) != hex.EncodeToString(h.Sum(nil)) {
		t.Fatalf("the finance fixture's shared node_modules is missing or stale: run `go tool task fixture:setup` (%v)", err)
	}
	if os.Geteuid() == 0 {
		if _, err := user.Lookup(preview.DefaultUser); err != nil {
			t.Fatalf("user %s is missing: run `go tool task fixture:setup` (%v)", preview.DefaultUser, err)
		}
		runAs = preview.DefaultUser
	}
	return deps, runAs
}

// traversable makes a temporary directory the preview user can reach (t.TempDir's parents
// are private).
func traversable(t *testing.T, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	return dir
}

// fixture is the finance app as a repository: the base commit and one commit per
// implementation, each the base plus one prepared patch.
type fixture struct {
	repo    string
	base    string
	commits map[string]string
}

func materialize(t *testing.T, root string, patches map[string]string) fixture {
	t.Helper()
	f := fixture{repo: filepath.Join(root, "finance"), commits: map[string]string{}}
	var err error
	if f.base, err = fixturerepo.MaterializeFS(finance.Files, f.repo); err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(patches))
	for n := range patches {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := fixturerepo.RestoreTree(f.repo, f.base); err != nil {
			t.Fatal(err)
		}
		if err := fixturerepo.ApplyPatch(f.repo, patches[name]); err != nil {
			t.Fatal(err)
		}
		sha, err := fixturerepo.CommitAll(f.repo, name)
		if err != nil {
			t.Fatal(err)
		}
		f.commits[name] = sha
	}
	return f
}

var testKey = ed25519.NewKeyFromSeed([]byte("signoff-authoring-localcheck-key"))

// The goals, as a user would type them.
const (
	watchlistGoal = "Make the Watchlist page work well on mobile: cards instead of the table below 640px, desktop table kept."
	// seedGoal is issue 13's task verbatim; its contract once had no structural check.
	seedGoal    = "Make the Watchlist page work well on mobile by showing a compact card layout below 640px while preserving the desktop table on larger screens."
	fakeFixGoal = "Just add a 'Mobile optimized' label to the Watchlist header."
	paperGoal   = "Add an Account Health strip to the Paper trading page showing the account's health, buying power and margin used."
	quotesGoal  = `Add a currency field set to "USD" to every quote returned by /api/quotes.`
	onboardGoal = "Add a 'Skip for now' link to the onboarding page that goes to the watchlist."
)

// TestBaseCheckOnFinanceFixture builds the base commit once and runs every generated
// contract against it; then builds W1, a second correct fix, W2 and W4 (in one reused slot)
// and judges the Watchlist contract on each with the policy, and P1/P2 with the Paper one.
func TestBaseCheckOnFinanceFixture(t *testing.T) {
	deps, runAs := needSetup(t)
	mod := moduleRoot(t)
	root := traversable(t, "authoring-localcheck-")
	runs := filepath.Join(mod, "fixtures", "runs")
	fx := materialize(t, root, map[string]string{
		"W1":  filepath.Join(runs, "W1", "patches", "attempt-1.patch"),
		"alt": filepath.Join(mod, "authoring", "testdata", "watchlist-cards-alt.patch"),
		// Fake fixes: the table in a horizontal scroll container and no cards; the table's
		// rows as an ARIA grid of divs labelled as cards on phones.
		"scroll": filepath.Join(mod, "authoring", "testdata", "watchlist-table-scroll.patch"),
		"grid":   filepath.Join(mod, "authoring", "testdata", "watchlist-aria-grid.patch"),
		"W2":     filepath.Join(runs, "W2", "patches", "attempt-1.patch"),
		"W4":     filepath.Join(runs, "W4", "patches", "attempt-1.patch"),
		"P1":     filepath.Join(runs, "P1", "patches", "attempt-1.patch"),
		"P2":     filepath.Join(runs, "P2", "patches", "attempt-1.patch"),
	})
	sb, err := sandbox.New(sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	launcher, err := preview.New(preview.Config{JobsRoot: filepath.Join(root, "jobs"), SharedDeps: deps, RunAs: runAs,
		StepTimeout: 5 * time.Minute, StartTimeout: 2 * time.Minute, Sandbox: sb})
	if err != nil {
		t.Fatal(err)
	}
	checker := &basecheck.Local{
		Launcher: launcher,
		Verifier: &verify.Verifier{Config: verify.DefaultConfig(), Key: testKey, Driver: driver, Source: browser},
		RepoDir:  fx.repo,
		OutDir:   t.TempDir(),
		Keep:     true,
	}
	defer checker.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 70*time.Minute)
	defer cancel()
	author := &authoring.Author{Admission: &authoring.Admission{Allow: []string{"signoff-fixtures/*"}}, Checker: checker, Verifier: verify.Ref()}
	draft := func(goal string) *authoring.Result {
		t.Helper()
		src, err := survey.ResolveSource(ctx, fx.repo, fx.base, "signoff-fixtures/finance")
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		res, err := author.Draft(ctx, authoring.Request{Requester: "test", Source: src, Goal: goal})
		if err != nil {
			t.Fatalf("%q: %v", goal, err)
		}
		rep := res.BaseCheck.Report
		t.Logf("%q on base: build %d ms, whole draft %d ms; failing %v, guards %v",
			goal, rep.BuildMS, time.Since(start).Milliseconds(), res.BaseCheck.Failing, res.BaseCheck.Guards)
		for _, r := range rep.Results {
			if len(r.Failures) > 0 || r.Error != "" {
				t.Logf("  %s %s: %s%s", r.CriterionID, r.Outcome, strings.Join(r.Failures, "; "), r.Error)
			}
		}
		if len(res.BaseCheck.Problems) > 0 {
			t.Errorf("%q: problems on base: %v", goal, res.BaseCheck.Problems)
		}
		return res
	}

	// The Watchlist contract fails the base commit, with the overflow measured.
	wl := draft(watchlistGoal)
	if wl.Contract.Repo.BaseCommitSHA != fx.base {
		t.Fatalf("contract pinned to %s, want the base %s", wl.Contract.Repo.BaseCommitSHA, fx.base)
	}
	rep := wl.BaseCheck.Report
	assertOutcomes(t, "watchlist on base", rep, map[string]string{
		"loads-mobile": authoring.OutcomePass, "mobile-no-overflow": authoring.OutcomeFail, "mobile-cards": authoring.OutcomeFail,
		"desktop-table": authoring.OutcomePass, "no-page-errors": authoring.OutcomePass, "unchanged-home": authoring.OutcomePass,
	})
	ov := rep.Result("mobile-no-overflow")
	sw, _ := ov.Observed["390x844/0.scroll_width"].(float64)
	iw, _ := ov.Observed["390x844/0.inner_width"].(float64)
	if iw != 390 || sw <= iw {
		t.Errorf("base overflow: scroll_width %v, inner_width %v; want a scroll width beyond 390", sw, iw)
	}
	t.Logf("base overflow observed: scrollWidth = %v, innerWidth = %v", sw, iw)

	// Every other goal against the same running base preview: no rebuild.
	others := []struct {
		goal                             string
		failing, guards, absent, errored []string
	}{
		{goal: seedGoal, failing: []string{"mobile-no-overflow", "mobile-cards"}, guards: []string{"loads-mobile", "desktop-table", "no-page-errors", "unchanged-home"}},
		{goal: fakeFixGoal, failing: []string{"mobile-no-overflow", "mobile-optimized"}, guards: []string{"loads-mobile", "desktop-table", "no-page-errors", "unchanged-home"}},
		{goal: paperGoal, failing: []string{"account-health"}, guards: []string{"loads-desktop", "mobile-no-overflow", "page-content", "no-page-errors", "unchanged-home"}},
		// Issue 14: the link is also followed (skip-for-now-goes); on the base there is no
		// link to click, so that criterion errors there and counts as failing.
		{goal: onboardGoal, failing: []string{"skip-for-now", "skip-for-now-target"}, errored: []string{"skip-for-now-goes"}, guards: []string{"mobile-no-overflow", "page-content", "no-page-errors"}},
		{goal: quotesGoal, absent: []string{"quotes-currency-first", "quotes-currency-last"}, guards: []string{"quotes-status", "quotes-shape"}},
	}
	byGoal := map[string]*authoring.Result{watchlistGoal: wl}
	for _, o := range others {
		res := draft(o.goal)
		if res.BaseCheck.Report.BuildMS != 0 {
			t.Errorf("%q rebuilt the base (%d ms) instead of reusing the running preview", o.goal, res.BaseCheck.Report.BuildMS)
		}
		want := map[string]string{}
		for _, id := range o.failing {
			want[id] = authoring.OutcomeFail
		}
		for _, id := range o.absent {
			want[id] = authoring.OutcomeAbsent
		}
		for _, id := range o.guards {
			want[id] = authoring.OutcomePass
		}
		for _, id := range o.errored {
			want[id] = authoring.OutcomeError
			if !slices.Contains(res.BaseCheck.Failing, id) {
				t.Errorf("%q: %s errored on the base but is not counted as failing: %v", o.goal, id, res.BaseCheck.Failing)
			}
		}
		assertOutcomes(t, o.goal, res.BaseCheck.Report, want)
		byGoal[o.goal] = res
	}
	fakeFix := byGoal[fakeFixGoal]

	w1Contract, w1Hash := fixtureContract(t, filepath.Join(runs, "W1", "contract.json"))

	// The implementations, judged by the policy on the verifier's signed evidence.
	impls := []struct {
		name, goal, verdict string
		failed              []string
	}{
		{"W1", watchlistGoal, contracts.Satisfied, nil},
		{"W1", seedGoal, contracts.Satisfied, nil},
		{"alt", watchlistGoal, contracts.Satisfied, nil},
		{"alt", seedGoal, contracts.Satisfied, nil},
		{"W2", watchlistGoal, contracts.NotSatisfied, []string{"mobile-no-overflow", "mobile-cards"}},
		{"W4", watchlistGoal, contracts.NotSatisfied, []string{"desktop-table"}},
		// Nothing overflows the page and the symbols show at every width, but the table (or
		// the grid) sits in a sideways scroller wider than the phone: wide content, and not the
		// cards the change asks for.
		{"scroll", seedGoal, contracts.NotSatisfied, []string{"mobile-no-overflow", "mobile-cards"}},
		{"grid", seedGoal, contracts.NotSatisfied, []string{"mobile-no-overflow", "mobile-cards"}},
		{"P1", paperGoal, contracts.Satisfied, nil},
		{"P2", paperGoal, contracts.NotSatisfied, []string{"mobile-no-overflow"}},
	}
	for _, im := range impls {
		sha := fx.commits[im.name]
		res := byGoal[im.goal]
		d, r := judge(ctx, t, checker, *res.Contract, res.Hash, sha)
		t.Logf("%s (%s): build %d ms, verify %d ms: %s", im.name, sha[:8], r.BuildMS, r.VerifyMS, d.Summary())
		if im.verdict == contracts.Satisfied && d.OnlyTimedOut() {
			// The contract workflow verifies a commit whose verification only ran out of time
			// once more before it pauses; a correct implementation on a busy host gets that
			// second try here too, and a second timeout fails.
			d, r = judge(ctx, t, checker, *res.Contract, res.Hash, sha)
			t.Logf("%s (%s): timed out on a busy host; verified again, as the workflow does: verify %d ms: %s", im.name, sha[:8], r.VerifyMS, d.Summary())
		}
		if d.Verdict != im.verdict {
			t.Errorf("%s: verdict %s, want %s: %+v", im.name, d.Verdict, im.verdict, d.Reasons)
			continue
		}
		if got := d.FailedCriteria(); !sameSet(got, im.failed) {
			t.Errorf("%s: failed criteria %v, want %v", im.name, got, im.failed)
		}
		if im.goal == watchlistGoal && (im.name == "W1" || im.name == "W2") {
			n := flakeRuns
			if im.name == "W2" {
				n = failRuns
			}
			repeatVerdicts(ctx, t, checker, w1Contract, w1Hash, sha, im.name, n)
		}
		if im.name == "grid" {
			// What catches it: the table element is hidden at 390x844, the ARIA grid is not.
			for _, only := range []struct {
				selector string
				holds    bool
			}{{"table", true}, {`[role="grid"]`, false}} {
				v := absentOnly(*res.Contract, "mobile-cards", only.selector)
				vh, err := contracts.Hash(v)
				if err != nil {
					t.Fatal(err)
				}
				vd, _ := judge(ctx, t, checker, v, vh, sha)
				if holds := !slices.Contains(vd.FailedCriteria(), "mobile-cards"); holds != only.holds {
					t.Errorf("grid, mobile-cards as element_absent %s only: holds %v, want %v (%s)", only.selector, holds, only.holds, vd.Summary())
				}
			}
		}
		if im.name == "W2" && im.goal == watchlistGoal {
			// The fake fix satisfies the literal request (the label is there) and fails its
			// claim: the page still overflows on a phone.
			fd, _ := judge(ctx, t, checker, *fakeFix.Contract, fakeFix.Hash, sha)
			t.Logf("W2 against the fake-fix contract: %s", fd.Summary())
			if fd.Verdict != contracts.NotSatisfied || !sameSet(fd.FailedCriteria(), []string{"mobile-no-overflow"}) {
				t.Errorf("W2 vs fake-fix contract: %s %v, want not_satisfied on mobile-no-overflow only", fd.Verdict, fd.FailedCriteria())
			}
			for _, reason := range d.Reasons {
				if reason.Criterion == "mobile-no-overflow" && strings.Contains(reason.Check, "scroll_width") {
					t.Logf("W2 reason: %s", reason.Message)
				}
			}
		}
	}
}

// flakeRuns is how many times in a row the W1 commit is verified under the W1 contract, and
// failRuns the W2 commit: every run must give the same verdict and the same observed values.
// The suite repeats each a few times; `go tool task stress` (SIGNOFF_STRESS=1) repeats W1 20
// times, which is most of this package's time on two CPUs.
var (
	flakeRuns = stressRuns(3, 20)
	failRuns  = stressRuns(2, 5)
)

// stressRuns is n, or stress when SIGNOFF_STRESS is set.
func stressRuns(n, stress int) int {
	if os.Getenv("SIGNOFF_STRESS") != "" {
		return stress
	}
	return n
}

// repeatVerdicts verifies one running commit n times and fails on any difference in the
// verdict or in any criterion's observed values.
func repeatVerdicts(ctx context.Context, t *testing.T, checker *basecheck.Local, c contracts.Contract, hash, sha, name string, n int) {
	t.Helper()
	start := time.Now()
	var first policy.Decision
	var firstObs []string
	for i := 0; i < n; i++ {
		d, r := judge(ctx, t, checker, c, hash, sha)
		var obs []string
		for _, res := range r.Evidence.Results {
			b, err := json.Marshal(res.Observed)
			if err != nil {
				t.Fatal(err)
			}
			obs = append(obs, res.CriterionID+" "+res.Status+" "+string(b))
		}
		if i == 0 {
			first, firstObs = d, obs
			continue
		}
		if d.Verdict != first.Verdict {
			t.Fatalf("%s run %d of %d: verdict %s, run 1 gave %s (%s)", name, i+1, n, d.Verdict, first.Verdict, d.Summary())
		}
		for j := range obs {
			if j >= len(firstObs) || obs[j] != firstObs[j] {
				t.Fatalf("%s run %d of %d observed differently from run 1:\n  run 1: %s\n  now:   %s", name, i+1, n, at(firstObs, j), obs[j])
			}
		}
	}
	t.Logf("%s verified %d times under the W1 contract in %s: %s every time, same observed values", name, n,
		time.Since(start).Round(time.Second), first.Verdict)
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "(none)"
}

// fixtureContract loads a prepared-run contract frozen against this verifier.
func fixtureContract(t *testing.T, path string) (contracts.Contract, string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := contracts.Load(data, contracts.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.Verifier = verify.Ref()
	h, err := contracts.Hash(*c)
	if err != nil {
		t.Fatal(err)
	}
	return *c, h
}

// absentOnly returns c with criterion id reduced to one check: no visible element matches
// selector.
func absentOnly(c contracts.Contract, id, selector string) contracts.Contract {
	c.Criteria = slices.Clone(c.Criteria)
	for i := range c.Criteria {
		if c.Criteria[i].ID == id {
			c.Criteria[i].Assert = contracts.Assertion{Kind: contracts.KindElementAbsent, Selector: selector, State: contracts.StateVisible}
		}
	}
	return c
}

func judge(ctx context.Context, t *testing.T, checker *basecheck.Local, c contracts.Contract, hash, sha string) (policy.Decision, *basecheck.Run) {
	t.Helper()
	r, err := checker.Evidence(ctx, c, sha)
	if err != nil {
		t.Fatalf("evidence for %s: %v", sha[:8], err)
	}
	d := policy.Decide(c, policy.Expectation{
		ContractHash:      hash,
		ImplementationSHA: sha,
		VerifierPublicKey: testKey.Public().(ed25519.PublicKey),
		VerifierDigest:    verify.Digest(),
		Build:             contracts.BuildResult{Passed: true, Steps: []contracts.BuildStep{}},
	}, r.Evidence)
	return d, r
}

func assertOutcomes(t *testing.T, label string, rep *authoring.BaseReport, want map[string]string) {
	t.Helper()
	if len(rep.Results) != len(want) {
		var ids []string
		for _, r := range rep.Results {
			ids = append(ids, r.CriterionID)
		}
		t.Errorf("%s: criteria %v, want %d listed in the test", label, ids, len(want))
	}
	for id, outcome := range want {
		r := rep.Result(id)
		switch {
		case r == nil:
			t.Errorf("%s: no criterion %s", label, id)
		case r.Outcome != outcome:
			t.Errorf("%s: %s is %s (%s%s), want %s", label, id, r.Outcome, strings.Join(r.Failures, "; "), r.Error, outcome)
		}
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	sort.Strings(a)
	sort.Strings(b)
	return fmt.Sprint(a) == fmt.Sprint(b)
}
