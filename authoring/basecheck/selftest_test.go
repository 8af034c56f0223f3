package basecheck_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signoff/signoff/authoring"
	"github.com/signoff/signoff/authoring/criteria"
	"github.com/signoff/signoff/authoring/survey"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/fixtures/fixturerepo"
	"github.com/signoff/signoff/internal/verify"
)

// weakened writes the contract issue 26 found paid for wrong work: the rules' criteria with
// every element they find by role and name found by a test hook instead, which the
// executor can put on anything.
type weakened struct{ hook string }

func (w weakened) Generate(ctx context.Context, in criteria.GenerateInput) (*criteria.Draft, error) {
	d, err := criteria.Rules{}.Generate(ctx, in)
	if err != nil {
		return nil, err
	}
	var rewrite func(a *contracts.Assertion)
	rewrite = func(a *contracts.Assertion) {
		if contracts.IsRoleLocator(a.Selector) {
			a.Selector = w.hook
		}
		for i := range a.AllOf {
			rewrite(&a.AllOf[i])
		}
	}
	for i := range d.Criteria {
		rewrite(&d.Criteria[i].Assert)
	}
	d.TestHooks = append(d.TestHooks, contracts.TestHook{Selector: w.hook, Description: "the links to stack"})
	return d, nil
}

// TestSelfTestRefusesWeakContract: the base check runs the contract on its lazy variants,
// refuses the weakened contract (a hook on blocks the page already stacks satisfies it) and
// offers the rules' own, which every variant fails; the outcomes are in the result the
// quote file is written from.
func TestSelfTestRefusesWeakContract(t *testing.T) {
	needBrowserOnly(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	root := traversable(t, "authoring-selftest-")
	repo := filepath.Join(root, "shop")
	base, err := fixturerepo.MaterializeFS(os.DirFS(filepath.Join(moduleRoot(t), "authoring", "testdata", "shop")), repo)
	if err != nil {
		t.Fatal(err)
	}
	checker := siteChecker{t: t, url: baseShop().serve(t)}
	const goal = "On phones, the Products and Pricing links in the header should stack vertically on the home page."
	draft := func(gen criteria.Generator) (*authoring.Result, error) {
		src, err := survey.ResolveSource(ctx, repo, base, "signoff-fixtures/shop")
		if err != nil {
			t.Fatal(err)
		}
		a := &authoring.Author{Admission: &authoring.Admission{Allow: []string{"signoff-fixtures/*"}}, Checker: checker, Verifier: verify.Ref(), Generator: gen}
		return a.Draft(ctx, authoring.Request{Requester: "test", Source: src, Goal: goal})
	}

	res, err := draft(weakened{hook: `[data-testid="header-links"]`})
	var be *authoring.BaseCheckError
	if !errors.As(err, &be) || be.Code != authoring.BaseWeak {
		b, _ := json.MarshalIndent(res, "", " ")
		t.Fatalf("weakened contract: want a %q refusal, got %v (offered %v)\n%s", authoring.BaseWeak, err, res.Offered, b)
	}
	if res.Offered || res.BaseCheck == nil {
		t.Fatalf("weakened contract offered: %+v", res.BaseCheck)
	}
	accepted := 0
	for _, v := range res.BaseCheck.Variants {
		if !v.Rejected && v.Error == "" {
			accepted++
			if v.Name != contracts.VariantHooks {
				t.Errorf("variant %s accepted; only the hooks one should fool the weakened contract", v.Name)
			}
		}
	}
	if accepted == 0 || !strings.Contains(be.Reason, contracts.VariantHooks) {
		t.Errorf("the refusal should name the accepted variant: %s (%+v)", be.Reason, res.BaseCheck.Variants)
	}
	t.Logf("weakened: %s", be.Reason)

	res, err = draft(nil)
	if err != nil || !res.Offered {
		t.Fatalf("the rules' contract: %v", err)
	}
	if len(res.BaseCheck.Variants) == 0 {
		t.Fatalf("no lazy variant was run on the rules' contract")
	}
	for _, v := range res.BaseCheck.Variants {
		if !v.Rejected || len(v.FailedBy) == 0 {
			t.Errorf("variant %s of the rules' contract: rejected %v, error %q", v.Name, v.Rejected, v.Error)
		}
	}
	rec := res.BaseCheck.Record()
	if rec == nil || len(rec.Variants) != len(res.BaseCheck.Variants) {
		t.Errorf("the base check record (quote file, timeline) lacks the variants: %+v", rec)
	}
	t.Logf("rules: %s", contracts.VariantSummary(res.BaseCheck.Variants))
}
