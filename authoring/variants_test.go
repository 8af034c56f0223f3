package authoring

import (
	"errors"
	"strings"
	"testing"

	"github.com/signoff/signoff/authoring/criteria"
	"github.com/signoff/signoff/contracts"
)

func crit(id, route string, a contracts.Assertion, actions ...contracts.Action) contracts.Criterion {
	return contracts.Criterion{ID: id, Route: route, Viewport: &contracts.Viewport{Width: 390, Height: 844}, Assert: a, Actions: actions}
}

// TestLazyVariants: each kind of criterion yields the lazy variant that would fake it, and
// each variant is one a verifier accepts.
func TestLazyVariants(t *testing.T) {
	stackByRole := crit("stacked", "/", contracts.Assertion{Kind: contracts.KindStacked, Selector: contracts.RoleSelector("link", "Docs", "GitHub")})
	stackByHook := crit("stacked", "/", contracts.Assertion{Kind: contracts.KindStacked, Selector: `[data-testid="nav-links"]`})
	bottom := crit("bottom", "/", contracts.Assertion{Kind: contracts.KindPosition, Selector: contracts.RoleSelector("link", "Back to top"), Place: contracts.PlaceLastViewport})
	toggle := crit("toggle", "/", contracts.Assertion{Kind: contracts.KindBackground, Selector: "body", Operator: "<", Expected: []byte("0.3")},
		contracts.Action{Type: contracts.ActionClick, Selector: contracts.RoleSelector("button", "Dark mode")})
	heading := crit("heading", "/about", contracts.Assertion{Kind: contracts.KindElementPresent, Selector: `role=heading[name="Our story"i]`})
	other := crit("unchanged-home", "/", contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{"Tools that last"}})
	banner := crit("banner", "/", contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{"Free shipping over $50"}, Within: `[data-testid="banner"]`})
	bannerTop := crit("banner-top", "/", contracts.Assertion{Kind: contracts.KindPosition, Selector: `[data-testid="banner"]`, Place: contracts.PlaceFirstViewport})
	belowHeading := crit("below", "/pricing", contracts.Assertion{Kind: contracts.KindPosition, Selector: contracts.RoleSelector("link", "See all plans"), After: `role=heading[name="Pricing"i]`})
	nextTo := crit("beside", "/contact", contracts.Assertion{Kind: contracts.KindPosition, Selector: contracts.RoleSelector("button", "Reset"), Beside: `role=button[name="Send"i]`})
	api := contracts.Criterion{ID: "api", Route: "/api/x", Assert: contracts.Assertion{Kind: contracts.KindHTTP, Method: "GET", Status: 200}}

	for _, tc := range []struct {
		name     string
		criteria []contracts.Criterion
		want     map[string]string // variant -> a fragment of one of its ops, as JSON-ish text
	}{
		{"links by role", []contracts.Criterion{stackByRole}, map[string]string{contracts.VariantCopies: `div link GitHub end`}},
		{"a hook", []contracts.Criterion{stackByHook}, map[string]string{contracts.VariantHooks: `hook data-testid nav-links 3`}},
		{"a placed link", []contracts.Criterion{bottom}, map[string]string{contracts.VariantWrongPlace: `insert a Back to top start /`}},
		{"a hooked banner with its words", []contracts.Criterion{banner, bannerTop}, map[string]string{
			contracts.VariantHooks:      `hook data-testid banner 3`,
			contracts.VariantWrongPlace: `insert div data-testid banner Free shipping over $50 end /`}},
		{"a link below the heading", []contracts.Criterion{belowHeading}, map[string]string{contracts.VariantWrongPlace: `insert a See all plans start /pricing`}},
		{"a button next to another", []contracts.Criterion{nextTo}, map[string]string{contracts.VariantWrongPlace: `insert button Reset end /contact`}},
		{"a control that acts", []contracts.Criterion{toggle}, map[string]string{contracts.VariantInert: `insert button Dark mode end /`}},
		{"a heading with another page guarded", []contracts.Criterion{heading, other}, map[string]string{contracts.VariantOtherPage: `retext Our story /`}},
		{"a heading alone", []contracts.Criterion{heading}, map[string]string{}},
		{"an http check", []contracts.Criterion{api}, map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := LazyVariants(contracts.Contract{Criteria: tc.criteria})
			got := map[string]string{}
			for _, v := range vs {
				if err := contracts.ValidateVariant(v); err != nil {
					t.Errorf("variant %s is not valid: %v", v.Name, err)
				}
				var ops []string
				for _, op := range v.Ops {
					f := []string{op.Op}
					for _, s := range []string{op.Tag, op.Attr, op.Value, op.Role, op.Text, op.Where, op.Route} {
						if s != "" {
							f = append(f, s)
						}
					}
					if op.Count > 0 {
						f = append(f, "3")
					}
					ops = append(ops, strings.Join(f, " "))
				}
				got[v.Name] = strings.Join(ops, " | ")
			}
			if len(got) != len(tc.want) {
				t.Errorf("variants %v, want %v", got, tc.want)
			}
			for name, frag := range tc.want {
				if !strings.Contains(got[name], frag) {
					t.Errorf("variant %s = %q, want it to hold %q", name, got[name], frag)
				}
			}
		})
	}
}

// TestValidateVariant: a verifier applies only what a variant may hold.
func TestValidateVariant(t *testing.T) {
	ok := contracts.Variant{Name: "hooks-on-existing", Ops: []contracts.VariantOp{{Op: contracts.VariantOpHook, Attr: "data-testid", Value: "x", Count: 3}}}
	if err := contracts.ValidateVariant(ok); err != nil {
		t.Fatal(err)
	}
	for name, op := range map[string]contracts.VariantOp{
		"an event handler":    {Op: contracts.VariantOpHook, Attr: "onclick", Value: "alert(1)"},
		"a style":             {Op: contracts.VariantOpHook, Attr: "style", Value: "display:none"},
		"a script element":    {Op: contracts.VariantOpInsert, Tag: "script", Text: "alert(1)", Where: contracts.VariantEnd},
		"nowhere":             {Op: contracts.VariantOpInsert, Tag: "p", Text: "x", Where: "middle"},
		"an unknown edit":     {Op: "remove"},
		"a route off the app": {Op: contracts.VariantOpRetext, Text: "x", Route: "https://example.test/"},
		"a huge text":         {Op: contracts.VariantOpRetext, Text: strings.Repeat("x", contracts.MaxVariantText+1)},
	} {
		v := ok
		v.Ops = []contracts.VariantOp{op}
		if err := contracts.ValidateVariant(v); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestJudgeVariants: a variant every kept criterion passes refuses the contract and names
// it; a variant that only fails a criterion left out as pre-existing is not a rejection.
func TestJudgeVariants(t *testing.T) {
	d := &criteria.Draft{Plan: []criteria.PlannedCriterion{{ID: "change", Role: criteria.RoleChange}, {ID: "guard", Role: criteria.RoleGuard},
		{ID: "old", Role: criteria.RoleGuard}, {ID: "errors", Role: criteria.RoleGuard}},
		Criteria: []contracts.Criterion{{ID: "errors", Assert: contracts.Assertion{Kind: contracts.KindNoPageErrors}}}}
	base := []BaseResult{{CriterionID: "change", Outcome: OutcomeFail, Failures: []string{"observed 0"}}, {CriterionID: "guard", Outcome: OutcomePass},
		{CriterionID: "old", Outcome: OutcomeFail, Failures: []string{"overflow"}}, {CriterionID: "errors", Outcome: OutcomePass}}
	variant := func(name string, outcomes ...string) VariantReport {
		vr := VariantReport{Variant: contracts.Variant{Name: name, Says: "does " + name}}
		for i, o := range outcomes {
			vr.Results = append(vr.Results, BaseResult{CriterionID: base[i].CriterionID, Outcome: o, Failures: map[bool][]string{true: {"x"}}[o == OutcomeFail]})
		}
		return vr
	}
	r := &BaseReport{CommitSHA: strings.Repeat("a", 40), Results: base, Variants: []VariantReport{
		variant("rejected-one", OutcomeFail, OutcomePass, OutcomeFail, OutcomePass),
		// A page error on Signoff's own edit is not the contract telling the variant apart.
		variant("only-old-fails", OutcomePass, OutcomePass, OutcomeFail, OutcomeFail),
		variant("partial", OutcomePass),
		variant("cannot-act", OutcomeError, OutcomePass, OutcomeFail, OutcomePass),
		{Variant: contracts.Variant{Name: "broken"}, Error: "browser gone"},
	}}
	j, err := JudgeBase(d, r)
	var be *BaseCheckError
	if !errors.As(err, &be) || be.Code != BaseWeak || !strings.Contains(be.Reason, "only-old-fails") || strings.Contains(be.Reason, "rejected-one") {
		t.Fatalf("want a weak refusal naming only-old-fails, got %v", err)
	}
	byName := map[string]contracts.VariantOutcome{}
	for _, o := range j.Variants {
		byName[o.Name] = o
	}
	if o := byName["rejected-one"]; !o.Rejected || len(o.FailedBy) != 1 || !strings.HasPrefix(o.FailedBy[0], "change:") {
		t.Errorf("rejected-one: %+v", o)
	}
	if o := byName["only-old-fails"]; o.Rejected || o.Error != "" {
		t.Errorf("only-old-fails: %+v", o)
	}
	if o := byName["partial"]; o.Rejected || !strings.Contains(o.Error, "only 1 of 3") {
		t.Errorf("partial: %+v", o)
	}
	if o := byName["cannot-act"]; !o.Rejected || !strings.Contains(o.FailedBy[0], "could not be measured on it") {
		t.Errorf("cannot-act: %+v", o)
	}
	if o := byName["broken"]; o.Error != "browser gone" {
		t.Errorf("broken: %+v", o)
	}
	if got := contracts.VariantSummary(j.Variants); got != "rejected-one: rejected by change; only-old-fails: accepted; partial: not measured; cannot-act: rejected by change; broken: not measured" {
		t.Errorf("summary %q", got)
	}
}

// TestVariantOutOfTime: a criterion that ran out of time on a variant rejects nothing. A
// variant nothing else rejected was not measured, and the check is busy (run again), so a
// weak contract is not offered because a busy host timed out on its lazy variant; a variant
// another criterion failed is rejected whatever timed out beside it.
func TestVariantOutOfTime(t *testing.T) {
	d := &criteria.Draft{Plan: []criteria.PlannedCriterion{{ID: "change", Role: criteria.RoleChange}, {ID: "guard", Role: criteria.RoleGuard}}}
	base := []BaseResult{{CriterionID: "change", Outcome: OutcomeFail, Failures: []string{"observed 0"}}, {CriterionID: "guard", Outcome: OutcomePass}}
	late := BaseResult{CriterionID: "guard", Outcome: OutcomeError, Error: contracts.StatusTimeout + ": 390x844: the page did not settle"}
	report := func(vs ...VariantReport) *BaseReport {
		return &BaseReport{CommitSHA: strings.Repeat("b", 40), Results: base, Variants: vs}
	}
	lateOnly := VariantReport{Variant: contracts.Variant{Name: "hooks-on-existing"}, Results: []BaseResult{{CriterionID: "change", Outcome: OutcomePass}, late}}
	j, err := JudgeBase(d, report(lateOnly))
	var be *BaseCheckError
	if !errors.As(err, &be) || be.Code != BaseBusy || !strings.Contains(be.Reason, "hooks-on-existing") {
		t.Fatalf("a variant only a timeout stood against: want busy, got %v", err)
	}
	if o := j.Variants[0]; o.Rejected || !strings.Contains(o.Error, "ran out of time: guard") {
		t.Errorf("hooks-on-existing: %+v", o)
	}

	failedToo := VariantReport{Variant: contracts.Variant{Name: "retext"}, Results: []BaseResult{{CriterionID: "change", Outcome: OutcomeFail, Failures: []string{"x"}}, late}}
	if _, err := JudgeBase(d, report(failedToo)); err != nil {
		t.Fatalf("a variant a criterion failed: %v", err)
	}
	// A measured weak variant is a refusal even while another ran out of time.
	weak := VariantReport{Variant: contracts.Variant{Name: "nothing"}, Results: []BaseResult{{CriterionID: "change", Outcome: OutcomePass}, {CriterionID: "guard", Outcome: OutcomePass}}}
	if _, err := JudgeBase(d, report(lateOnly, weak)); !errors.As(err, &be) || be.Code != BaseWeak {
		t.Fatalf("weak beside late: want weak, got %v", err)
	}
}

// TestFillStructure: the structure a base check observed becomes the terms, per viewport;
// the checks then compare it, and a filled contract is not filled again.
func TestFillStructure(t *testing.T) {
	c := contracts.Contract{Criteria: []contracts.Criterion{{ID: "unchanged-about", Route: "/about",
		Viewport: &contracts.Viewport{Width: 1440, Height: 1000}, ExtraViewports: []contracts.Viewport{{Width: 390, Height: 844}},
		Assert: contracts.Assertion{Kind: contracts.KindAllOf, AllOf: []contracts.Assertion{
			{Kind: contracts.KindVisibleText, Texts: []string{"About us"}}, {Kind: contracts.KindStructure}}}}}}
	before, err := contracts.ChecksFor(c.Criteria[0])
	if err != nil {
		t.Fatal(err)
	}
	r := &BaseReport{Results: []BaseResult{{CriterionID: "unchanged-about", Outcome: OutcomePass, Observed: map[string]any{
		"1440x1000/1.structure": "heading1 \"About us\"\nlink \"Contact\"", "1440x1000/1.structure_items": 2.0,
		"390x844/1.structure": "heading1 \"About us\"", "390x844/1.structure_items": 1.0}}}}
	filled, notes, ok := FillStructure(c, r)
	if !ok || len(notes) != 1 || !strings.Contains(notes[0], "2 items at 1440x1000, 1 items at 390x844") {
		t.Fatalf("filled %v, notes %v", ok, notes)
	}
	if c.Criteria[0].Assert.AllOf[1].Expected != nil {
		t.Error("FillStructure changed the contract it was given")
	}
	after, err := contracts.ChecksFor(filled.Criteria[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before)+2 {
		t.Fatalf("checks before %d, after %d: want one structure check per viewport", len(before), len(after))
	}
	obs := map[string]any{"1440x1000/1.structure": "heading1 \"About us\"\nlink \"Contact\""}
	for _, ch := range after {
		if ch.Key == "1440x1000/1.structure" {
			if res := contracts.EvaluateCheck(ch, obs); res.Outcome != contracts.CheckPass {
				t.Errorf("the base's own structure: %+v", res)
			}
			obs["1440x1000/1.structure"] = "heading2 \"About us\"\nlink \"Contact\""
			if res := contracts.EvaluateCheck(ch, obs); res.Outcome != contracts.CheckFail {
				t.Errorf("a demoted heading: %+v", res)
			}
		}
	}
	if _, _, again := FillStructure(filled, r); again {
		t.Error("a filled structure was filled again")
	}
}
