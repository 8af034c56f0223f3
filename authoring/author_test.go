package authoring

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/signoff/signoff/authoring/criteria"
	"github.com/signoff/signoff/authoring/internal/authoringtest"
	"github.com/signoff/signoff/authoring/pricing"
	"github.com/signoff/signoff/authoring/refusal"
	"github.com/signoff/signoff/authoring/survey"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/fixtures/finance"
)

var fixedNow = time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)

// fakeChecker answers a base check from a function of the criterion: what a browser would
// have measured, without one.
type fakeChecker struct {
	outcome func(c contracts.Criterion) string
	calls   int
	// errText is an erroring criterion's error; "" is a connection failure (not a timeout).
	errText string
	// retries records the ForRetry numbers asked for.
	retries []int
	// failingChecks are the repository checks the base "fails".
	failingChecks []contracts.PreexistingFailure
}

// ForRetry makes fakeChecker a RetryingChecker: it records n and answers as itself.
func (f *fakeChecker) ForRetry(n int) BaseChecker {
	f.retries = append(f.retries, n)
	return f
}

func (f *fakeChecker) CheckBase(_ context.Context, c contracts.Contract) (*BaseReport, error) {
	f.calls++
	r := &BaseReport{CommitSHA: c.Repo.BaseCommitSHA, BuiltSHA: c.Repo.BaseCommitSHA, RuntimeSHA: c.Repo.BaseCommitSHA, FailingChecks: f.failingChecks}
	for _, cr := range c.Criteria {
		res := BaseResult{CriterionID: cr.ID, Outcome: f.outcome(cr)}
		switch res.Outcome {
		case OutcomeFail:
			res.Failures = []string{"at 390x844: scrollWidth = 927, innerWidth = 390"}
		case OutcomeError:
			res.Error = f.errText
			if res.Error == "" {
				res.Error = "error: net::ERR_CONNECTION_REFUSED"
			}
		}
		r.Results = append(r.Results, res)
	}
	return r, nil
}

func newAuthor(checker BaseChecker) *Author {
	return &Author{Admission: &Admission{Allow: []string{"signoff-fixtures/*"}}, Checker: checker, Verifier: authoringtest.Verifier,
		Now: func() time.Time { return fixedNow }}
}

// sameTerms says whether two quotes' contracts agree on everything but their ids (every
// quote has an id of its own).
func sameTerms(t *testing.T, a, b *contracts.Contract) bool {
	t.Helper()
	x, y := *a, *b
	y.ContractID = x.ContractID
	hx, err := contracts.Hash(x)
	if err != nil {
		t.Fatal(err)
	}
	hy, err := contracts.Hash(y)
	if err != nil {
		t.Fatal(err)
	}
	return hx == hy
}

func financeSource(t *testing.T) *survey.Source {
	t.Helper()
	repo, _ := authoringtest.FinanceRepo(t)
	src, err := survey.ResolveSource(context.Background(), repo, "", "signoff-fixtures/finance")
	if err != nil {
		t.Fatal(err)
	}
	return src
}

const wlGoal = "Make the Watchlist page work well on mobile: cards instead of the table below 640px, desktop table kept."

func TestAuthorDraftsAValidContract(t *testing.T) {
	// The fake base: the page overflows and has no cards; everything else holds.
	checker := &fakeChecker{outcome: func(c contracts.Criterion) string {
		if c.ID == "mobile-no-overflow" || c.ID == "mobile-cards" {
			return OutcomeFail
		}
		return OutcomePass
	}}
	res, err := newAuthor(checker).Draft(context.Background(), Request{Requester: "ann", Source: financeSource(t), Goal: wlGoal})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Contract
	if err := contracts.Validate(*c, contracts.LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	h, _ := contracts.Hash(*c)
	if !res.Offered || res.Hash != h || c.Verifier != authoringtest.Verifier || c.Repo.BaseCommitSHA != res.Survey.BaseSHA || c.Goal != wlGoal {
		t.Errorf("result: offered %v hash %s (%s) verifier %+v", res.Offered, res.Hash, h, c.Verifier)
	}
	if c.Stack.Framework != "nextjs-app" || c.Stack.Install != "npm ci" || c.MaxAttempts != 3 || c.ReleaseRule != contracts.ReleaseCaptureOnSatisfied {
		t.Errorf("terms %+v", c)
	}
	if c.Price != res.Estimate.Price || !res.Estimate.ExpiresAt.Equal(fixedNow.Add(24*time.Hour)) {
		t.Errorf("price %+v, estimate %+v", c.Price, res.Estimate)
	}
	d := res.BaseCheck
	if !d.Checked || strings.Join(d.Failing, ",") != "mobile-no-overflow,mobile-cards" || strings.Join(d.Guards, ",") != "loads-mobile,desktop-table,no-page-errors,unchanged-home" || len(d.Problems) != 0 {
		t.Errorf("base check %+v", d)
	}
	// Asking again gives the same terms under a contract of its own: one contract per quote,
	// so no two workflows or proof folders ever share an id.
	again, err := newAuthor(checker).Draft(context.Background(), Request{Requester: "ann", Source: financeSource(t), Goal: wlGoal})
	if err != nil {
		t.Fatal(err)
	}
	if again.Contract.ContractID == c.ContractID || again.Hash == res.Hash {
		t.Errorf("second quote: id %s hash %s, the first's %s %s", again.Contract.ContractID, again.Hash, c.ContractID, res.Hash)
	}
	if !sameTerms(t, again.Contract, c) {
		t.Errorf("the second quote's terms differ from the first's beyond the id")
	}
	if !strings.HasPrefix(again.Contract.ContractID, "watchlist-") || !strings.HasPrefix(c.ContractID, "watchlist-") {
		t.Errorf("ids %s, %s: want the scope's word first", c.ContractID, again.Contract.ContractID)
	}
}

func TestAuthorRefusesVacuousAndInconclusive(t *testing.T) {
	all := func(o string) *fakeChecker {
		return &fakeChecker{outcome: func(contracts.Criterion) string { return o }}
	}
	res, err := newAuthor(all(OutcomePass)).Draft(context.Background(), Request{Requester: "ann", Source: financeSource(t), Goal: wlGoal})
	var de *BaseCheckError
	if !errors.As(err, &de) || de.Code != BaseVacuous || res.Offered || len(res.BaseCheck.Guards) != len(res.Contract.Criteria) {
		t.Fatalf("all passing on base: %v, offered %v", err, res.Offered)
	}
	_, err = newAuthor(all(OutcomeError)).Draft(context.Background(), Request{Requester: "ann", Source: financeSource(t), Goal: wlGoal})
	if !errors.As(err, &de) || de.Code != BaseInconclusive {
		t.Fatalf("all erroring on base: %v", err)
	}
	if ExitClass(err) != "failed" {
		t.Errorf("exit class %s", ExitClass(err))
	}
	// Only timeouts: the host was busy, which says nothing of the goal. The check runs again
	// after each wait; if it stays busy the answer says so, how often it ran, and what to do.
	busy := all(OutcomeError)
	busy.errText = "timeout: the page did not settle"
	a := newAuthor(busy)
	a.BusyRetries = []time.Duration{time.Millisecond, time.Millisecond}
	var heard []string
	_, err = a.Draft(context.Background(), Request{Requester: "ann", Source: financeSource(t), Goal: wlGoal,
		Progress: func(msg string) { heard = append(heard, msg) }})
	if !errors.As(err, &de) || de.Code != BaseBusy || busy.calls != 3 || fmt.Sprint(busy.retries) != "[1 2]" ||
		!strings.Contains(de.Reason, "ask again in a few minutes") || !strings.Contains(de.Reason, "run 3 times") {
		t.Fatalf("busy on base: %v after %d checks, retries %v", err, busy.calls, busy.retries)
	}
	// The requester hears of each rerun while it waits, not only at the end.
	if len(heard) != 2 || !strings.Contains(heard[0], "run 2 of 3") || !strings.Contains(heard[1], "run 3 of 3") ||
		!strings.Contains(heard[0], "too busy") {
		t.Errorf("progress heard: %q", heard)
	}
	// Busy once, then measured: offered, from the second run.
	flaky := &fakeChecker{errText: "timeout: the page did not settle"}
	flaky.outcome = func(c contracts.Criterion) string {
		switch {
		case flaky.calls == 1:
			return OutcomeError
		case c.ID == "mobile-cards" || c.ID == "mobile-no-overflow":
			return OutcomeFail
		}
		return OutcomePass
	}
	a = newAuthor(flaky)
	a.BusyRetries = []time.Duration{time.Millisecond}
	res, err = a.Draft(context.Background(), Request{Requester: "ann", Source: financeSource(t), Goal: wlGoal})
	if err != nil || !res.Offered || flaky.calls != 2 {
		t.Fatalf("busy, then measured: %v, offered %v after %d checks", err, res != nil && res.Offered, flaky.calls)
	}
	// A guard failing on base is offered with a problem noted.
	res, err = newAuthor(&fakeChecker{outcome: func(c contracts.Criterion) string {
		if c.ID == "loads-mobile" || c.ID == "mobile-cards" {
			return OutcomeFail
		}
		return OutcomePass
	}}).Draft(context.Background(), Request{Requester: "ann", Source: financeSource(t), Goal: wlGoal})
	if err != nil || !res.Offered || len(res.BaseCheck.Problems) != 1 || !strings.Contains(res.BaseCheck.Problems[0], "loads-mobile") {
		t.Errorf("guard failing on base: %v %+v", err, res.BaseCheck)
	}
	// ... and left out of the terms, as pre-existing, saying so in the notes.
	if err == nil {
		if slices.ContainsFunc(res.Contract.Criteria, func(c contracts.Criterion) bool { return c.ID == "loads-mobile" }) {
			t.Error("the guard the base already fails is still a condition of the contract")
		}
		if !slices.Equal(res.BaseCheck.Preexisting, []string{"loads-mobile"}) ||
			!slices.ContainsFunc(res.Draft.Notes, func(n string) bool { return strings.Contains(n, "loads-mobile") && strings.Contains(n, "left out") }) {
			t.Errorf("pre-existing %v, notes %v", res.BaseCheck.Preexisting, res.Draft.Notes)
		}
		if h, herr := contracts.Hash(*res.Contract); herr != nil || h != res.Hash {
			t.Errorf("hash %s is not the offered contract's (%s, %v)", res.Hash, h, herr)
		}
	}
}

func TestAuthorInputErrors(t *testing.T) {
	src := financeSource(t)
	cases := map[string]func(a *Author, r *Request){
		"goal":     func(a *Author, r *Request) { r.Goal = "x" },
		"route":    func(a *Author, r *Request) { r.Routes = []string{"https://evil.example/"} },
		"route2":   func(a *Author, r *Request) { r.Routes = []string{"/a/../b"} },
		"verifier": func(a *Author, r *Request) { a.Verifier = contracts.VerifierRef{} },
		"admin":    func(a *Author, r *Request) { a.Admission = nil },
		"budget":   func(a *Author, r *Request) { r.Budget = -1 },
		// A lone surrogate in a JSON string decodes to U+FFFD; invalid UTF-8; a control byte.
		"surrogate": func(a *Author, r *Request) { r.Goal = wlGoal + " \ufffd" },
		"utf8":      func(a *Author, r *Request) { r.Goal = wlGoal + " \xff" },
		"control":   func(a *Author, r *Request) { r.Goal = "Make the\x00 Watchlist page work on mobile" },
	}
	for name, mutate := range cases {
		a := newAuthor(nil)
		r := Request{Requester: "ann", Source: src, Goal: wlGoal}
		mutate(a, &r)
		_, err := a.Draft(context.Background(), r)
		var ie *refusal.InputError
		if !errors.As(err, &ie) || ExitClass(err) != "input" {
			t.Errorf("%s: %v, want an input error", name, err)
		}
	}
}

func TestAuthorWithoutCheckerSaysSo(t *testing.T) {
	res, err := newAuthor(nil).Draft(context.Background(), Request{Requester: "ann", Source: financeSource(t), Goal: wlGoal})
	if err != nil {
		t.Fatal(err)
	}
	if res.BaseCheck.Checked || res.BaseCheck.Skipped == "" || !res.Offered {
		t.Errorf("base check %+v", res.BaseCheck)
	}
}

// TestBudgetNarrowsScopeNotTheBar: a budget below the price is refused with the price
// breakdown; there is no cheaper contract with fewer or weaker criteria.
func TestBudgetNarrowsScopeNotTheBar(t *testing.T) {
	full, err := newAuthor(nil).Draft(context.Background(), Request{Requester: "ann", Source: financeSource(t), Goal: wlGoal})
	if err != nil {
		t.Fatal(err)
	}
	price := full.Estimate.Price.Amount
	res, err := newAuthor(nil).Draft(context.Background(), Request{Requester: "ann", Source: financeSource(t), Goal: wlGoal, Budget: price - 1})
	var be *pricing.BudgetError
	if !errors.As(err, &be) || be.Price != price || !strings.Contains(be.Reason, "not weakened") || res.Offered {
		t.Fatalf("budget below price: %v, offered %v", err, res.Offered)
	}
	ok, err := newAuthor(nil).Draft(context.Background(), Request{Requester: "ann", Source: financeSource(t), Goal: wlGoal, Budget: price})
	if err != nil || !sameTerms(t, ok.Contract, full.Contract) {
		t.Errorf("budget at the price changes the contract: %v", err)
	}
	// A narrower goal fits a smaller budget, with the same bar for what it covers.
	narrow, err := newAuthor(nil).Draft(context.Background(), Request{Requester: "ann", Source: financeSource(t),
		Goal: "Make the Watchlist page work on phones without horizontal scrolling.", Budget: price - 1})
	if err != nil {
		t.Fatalf("narrower goal: %v", err)
	}
	if narrow.Estimate.Price.Amount >= price || len(authoringtest.Find(narrow.Draft.Criteria, authoringtest.Kind(contracts.KindNoHorizontalOverflow))) == 0 {
		t.Errorf("narrow quote %+v", narrow.Estimate)
	}
}

func TestClassify(t *testing.T) {
	sha := strings.Repeat("c", 40)
	c := contracts.Contract{Repo: contracts.Repo{BaseCommitSHA: sha}, Criteria: []contracts.Criterion{
		{ID: "overflow", Viewport: &criteria.Mobile, Assert: contracts.Assertion{Kind: contracts.KindNoHorizontalOverflow}},
		{ID: "loads", Viewport: &criteria.Mobile, Assert: contracts.Assertion{Kind: contracts.KindLoads}},
		{ID: "field", Assert: contracts.Assertion{Kind: contracts.KindHTTP, Status: 200, JSON: []contracts.JSONCheck{{Pointer: "/x", Operator: "==", Expected: []byte(`"USD"`)}}}},
		{ID: "slow", Viewport: &criteria.Mobile, Assert: contracts.Assertion{Kind: contracts.KindLoads}},
		{ID: "lying", Viewport: &criteria.Mobile, Assert: contracts.Assertion{Kind: contracts.KindLoads}},
	}}
	ev := &contracts.Evidence{RuntimeSHA: sha, Results: []contracts.CriterionResult{
		{CriterionID: "overflow", Status: contracts.StatusFail, Observed: map[string]any{"390x844/scroll_width": 927.0, "390x844/inner_width": 390.0, "390x844/clipped_elements": 1.0,
			"390x844/wide_scrollers": 0.0, "390x844/left_origin": ""}},
		{CriterionID: "loads", Status: contracts.StatusPass, Observed: map[string]any{"390x844/status": 200.0, "390x844/page_errors": 0.0, "390x844/left_origin": ""}},
		{CriterionID: "field", Status: contracts.StatusFail, Observed: map[string]any{"status": 200.0, "json.0.value": nil, "json.0.missing": `json pointer "/x": no member "x"`}},
		{CriterionID: "slow", Status: contracts.StatusTimeout, Error: "the page did not settle"},
		// The reported status is not trusted: observed values decide.
		{CriterionID: "lying", Status: contracts.StatusPass, Observed: map[string]any{"390x844/status": 500.0, "390x844/page_errors": 0.0, "390x844/left_origin": ""}},
	}}
	r := Classify(c, ev, sha)
	want := map[string]string{"overflow": OutcomeFail, "loads": OutcomePass, "field": OutcomeAbsent, "slow": OutcomeError, "lying": OutcomeFail}
	for id, o := range want {
		if got := r.Result(id); got == nil || got.Outcome != o {
			t.Errorf("%s: %+v, want %s", id, got, o)
		}
	}
	if f := r.Result("overflow").Failures; len(f) != 2 || f[0] != "at 390x844: scrollWidth = 927, innerWidth = 390 (want scrollWidth <= innerWidth)" {
		t.Errorf("overflow failures %q", f)
	}
	// Evidence from a verifier other than the one the contract is frozen against measures
	// nothing, and says so.
	c.Verifier = contracts.VerifierRef{Name: "signoff-verifier", Version: "3", Digest: strings.Repeat("a", 64)}
	ev.Verifier = contracts.VerifierRef{Name: "signoff-verifier", Version: "4", Digest: strings.Repeat("b", 64)}
	for _, res := range Classify(c, ev, sha).Results {
		if res.Outcome != OutcomeError || !strings.Contains(res.Error, "frozen against verifier 3") {
			t.Errorf("%s judged with another verifier's evidence: %+v", res.CriterionID, res)
		}
	}
	ev.Verifier = c.Verifier
	// Evidence from another commit measures nothing.
	ev.RuntimeSHA = strings.Repeat("d", 40)
	for _, res := range Classify(c, ev, sha).Results {
		if res.Outcome != OutcomeError {
			t.Errorf("%s measured on the wrong commit: %s", res.CriterionID, res.Outcome)
		}
	}
}

// A lint that fails on the base commit is recorded in the stack and named in the notes, so
// a goal about layout is still quoted; a goal about lint must make it pass instead.
func TestFailingChecksOnTheBase(t *testing.T) {
	lint := contracts.PreexistingFailure{Step: "lint", Errors: 2, Cause: "✖ 2 problems (2 errors, 0 warnings)"}
	checker := func() *fakeChecker {
		return &fakeChecker{failingChecks: []contracts.PreexistingFailure{lint}, outcome: func(c contracts.Criterion) string {
			if c.ID == "mobile-cards" || c.ID == "mobile-no-overflow" {
				return OutcomeFail
			}
			return OutcomePass
		}}
	}
	res, err := newAuthor(checker()).Draft(context.Background(), Request{Requester: "ann", Source: financeSource(t), Goal: wlGoal})
	if err != nil || !res.Offered {
		t.Fatalf("layout goal on a base whose lint fails: %v", err)
	}
	if got := res.Contract.Stack.Preexisting; len(got) != 1 || got[0] != lint {
		t.Errorf("stack records %+v, want %+v", got, lint)
	}
	if !slices.ContainsFunc(res.Draft.Notes, func(n string) bool {
		return strings.HasPrefix(n, "lint fails on the base commit (2 errors): ✖ 2 problems") && strings.Contains(n, "Recorded as pre-existing")
	}) {
		t.Errorf("notes %q do not name the failing lint", res.Draft.Notes)
	}
	if h, herr := contracts.Hash(*res.Contract); herr != nil || h != res.Hash {
		t.Errorf("hash %s is not the offered contract's (%s, %v)", res.Hash, h, herr)
	}
	res, err = newAuthor(checker()).Draft(context.Background(), Request{Requester: "ann", Source: financeSource(t), Goal: wlGoal + " Also fix the ESLint errors."})
	if err != nil || !res.Offered {
		t.Fatalf("goal about lint: %v", err)
	}
	if len(res.Contract.Stack.Preexisting) != 0 || !slices.ContainsFunc(res.Draft.Notes, func(n string) bool { return strings.Contains(n, "the change must make lint pass") }) {
		t.Errorf("goal about lint: stack %+v, notes %q", res.Contract.Stack.Preexisting, res.Draft.Notes)
	}
}

// A preview environment file the preview could not take is the requester's to fix: the
// quote is refused with the line that says why, before anything is built.
func TestBadPreviewEnvIsRefused(t *testing.T) {
	files := map[string]string{contracts.PreviewEnvFile: "SITE=Acme\nPORT=8080\n"}
	err := fs.WalkDir(finance.Files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := finance.Files.ReadFile(p)
		files[p] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	repo, _ := authoringtest.RepoFrom(t, files)
	src, err := survey.ResolveSource(context.Background(), repo, "", "signoff-fixtures/finance")
	if err != nil {
		t.Fatal(err)
	}
	checker := &fakeChecker{outcome: func(contracts.Criterion) string { return OutcomeFail }}
	_, err = newAuthor(checker).Draft(context.Background(), Request{Requester: "ann", Source: src, Goal: wlGoal})
	var ie *refusal.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), ".signoff/preview.env: line 2: PORT is set by the preview itself") || checker.calls != 0 {
		t.Fatalf("err = %v after %d base checks; want the file's line refused before any check", err, checker.calls)
	}
}
