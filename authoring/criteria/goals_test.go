package criteria

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/signoff/signoff/authoring/internal/authoringtest"
	"github.com/signoff/signoff/authoring/refusal"
	"github.com/signoff/signoff/contracts"
)

func genShop(t *testing.T, goal string) *Draft {
	t.Helper()
	d, err := Rules{}.Generate(context.Background(), GenerateInput{Goal: goal, Survey: authoringtest.Shop(t)})
	if err != nil {
		t.Fatalf("%q: %v", goal, err)
	}
	checkCommon(t, d, authoringtest.Shop(t))
	c := d.Terms(authoringtest.Shop(t), "draft-under-test", goal, authoringtest.Verifier, contracts.Price{Amount: 100, Currency: "usd"})
	if err := contracts.Validate(c, contracts.LoadOptions{}); err != nil {
		t.Fatalf("%q: invalid contract: %v", goal, err)
	}
	return d
}

// crit returns the one criterion with the id, failing when there is none.
func critByID(t *testing.T, d *Draft, id string) contracts.Criterion {
	t.Helper()
	for _, c := range d.Criteria {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no criterion %s in %s", id, shape(d))
	return contracts.Criterion{}
}

func actionsOf(c contracts.Criterion) string {
	var out []string
	for _, a := range c.Actions {
		out = append(out, strings.Join(strings.Fields(a.Type+" "+a.Selector+" "+a.Value+" "+a.Key), " "))
	}
	return strings.Join(out, "; ")
}

func TestDarkModeToggle(t *testing.T) {
	d := genShop(t, "Add a dark mode toggle to the home page.")
	light := critByID(t, d, "light-on-load")
	dark := critByID(t, d, "dark-after-toggle")
	if light.Assert.Kind != contracts.KindBackground || light.Assert.Operator != ">" || string(light.Assert.Expected) != "0.6" || len(light.Actions) != 0 || d.Role(light.ID) != RoleGuard {
		t.Errorf("light guard %+v", light)
	}
	if dark.Assert.Kind != contracts.KindBackground || dark.Assert.Operator != "<" || string(dark.Assert.Expected) != "0.35" ||
		actionsOf(dark) != `click [data-testid="dark-mode-toggle"]` || d.Role(dark.ID) != RoleChange {
		t.Errorf("dark change %+v (%s)", dark, actionsOf(dark))
	}
	if len(d.TestHooks) == 0 || d.TestHooks[0].Selector != `[data-testid="dark-mode-toggle"]` {
		t.Errorf("hooks %+v", d.TestHooks)
	}
}

func TestOpensDialog(t *testing.T) {
	d := genShop(t, "Add a Help button to the home page that opens a help dialog.")
	closed, opens := critByID(t, d, "help-dialog-closed"), critByID(t, d, "help-dialog-opens")
	if closed.Assert.Kind != contracts.KindElementAbsent || len(closed.Actions) != 0 {
		t.Errorf("closed %+v", closed)
	}
	if opens.Assert.Kind != contracts.KindElementPresent || opens.Assert.Selector != `[data-testid="help-dialog"]` || actionsOf(opens) != `click [data-testid="help"]` {
		t.Errorf("opens %+v (%s)", opens.Assert, actionsOf(opens))
	}
}

func TestSubmitsForm(t *testing.T) {
	d := genShop(t, "Make the contact form submit to /api/contact and show 'Thanks, we will be in touch'.")
	req, conf := critByID(t, d, "submit-request"), critByID(t, d, "submit-confirmation")
	want := `fill input[name="email"] ada@example.com; click form [type="submit"]`
	if req.Route != "/contact" || req.Assert.Kind != contracts.KindRequest || req.Assert.Method != "POST" || req.Assert.Path != "/api/contact" || actionsOf(req) != want {
		t.Errorf("request %s %+v (%s)", req.Route, req.Assert, actionsOf(req))
	}
	if conf.Assert.Kind != contracts.KindVisibleText || fmt.Sprint(conf.Assert.Texts) != "[Thanks, we will be in touch]" || actionsOf(conf) != want {
		t.Errorf("confirmation %+v", conf.Assert)
	}
	for _, c := range d.Criteria { // the confirmation is not expected before the submit
		for _, l := range authoringtest.LeavesOf(c.Assert) {
			if len(c.Actions) == 0 && strings.Contains(strings.Join(l.Texts, " "), "Thanks") {
				t.Errorf("%s expects the confirmation on load", c.ID)
			}
		}
	}
}

func TestFilters(t *testing.T) {
	d := genShop(t, "Add a search box to the products page that filters the list.")
	f := critByID(t, d, "filter-hammer")
	if actionsOf(f) != `fill [data-testid="search"] Hammer; press [data-testid="search"] Enter` {
		t.Errorf("actions %s", actionsOf(f))
	}
	lv := authoringtest.LeavesOf(f.Assert)
	if len(lv) != 2 || fmt.Sprint(lv[0].Texts) != "[Hammer]" || lv[1].Kind != contracts.KindMeasure || !strings.Contains(lv[1].Expression, `"Wrench"`) {
		t.Errorf("filter assertion %+v", lv)
	}
	if g := critByID(t, d, "list-on-load"); fmt.Sprint(g.Assert.Texts) != "[Hammer Wrench]" || d.Role(g.ID) != RoleGuard {
		t.Errorf("list guard %+v", g.Assert)
	}
}

func TestAddsToCart(t *testing.T) {
	d := genShop(t, "Add an 'Add to cart' button to each product on the products page that adds the product to the cart.")
	c := critByID(t, d, "cart-count-after-add")
	if actionsOf(c) != `click [data-testid="add-to-cart"]` || c.Assert.Within != `[data-testid="cart-count"]` || fmt.Sprint(c.Assert.Texts) != "[1]" {
		t.Errorf("cart %+v (%s)", c.Assert, actionsOf(c))
	}
}

func TestStackVertically(t *testing.T) {
	d := genShop(t, "On phones, stack the plan cards vertically on the pricing page.")
	c := critByID(t, d, "stacked-plan-cards")
	if c.Assert.Kind != contracts.KindStacked || c.Assert.Selector != `[data-testid="plan-card"]` || fmt.Sprint(c.Viewports()) != "[{390 844}]" {
		t.Errorf("stacked %+v at %v", c.Assert, c.Viewports())
	}
	// The stacking is what is asked: the page-wide overflow check is a guard, which the base
	// check leaves out where the base already overflows for another reason (the header).
	if r := d.Role("mobile-no-overflow"); r != RoleGuard {
		t.Errorf("mobile-no-overflow is a %s of a stacking goal, want a guard", r)
	}
	// Unless the goal asks for the fit as well.
	d = genShop(t, "On phones, stack the plan cards vertically on the pricing page so they fit a 390px screen.")
	if r := d.Role("mobile-no-overflow"); r != RoleChange {
		t.Errorf("mobile-no-overflow is a %s when the goal asks for the fit, want a change", r)
	}
}

// The items may come before the verb, as people often say it.
func TestStackVerticallySubjectFirst(t *testing.T) {
	for _, goal := range []string{
		"Make the plan cards stack vertically on phones on the pricing page.",
		"On the pricing page the plan cards should stack on top of each other on mobile.",
	} {
		d := genShop(t, goal)
		c := critByID(t, d, "stacked-plan-cards")
		if c.Assert.Kind != contracts.KindStacked || c.Assert.Selector != `[data-testid="plan-card"]` {
			t.Errorf("%q: stacked %+v", goal, c.Assert)
		}
	}
	if got := subjectOf(strings.Fields("make the pricing cards")); got != "pricing cards" {
		t.Errorf("subject %q", got)
	}
}

func TestTopAndBottom(t *testing.T) {
	d := genShop(t, "Put a 'Free shipping over $50' banner at the top of the home page.")
	c := critByID(t, d, "free-shipping-over-50-top")
	if c.Assert.Kind != contracts.KindPosition || c.Assert.Place != contracts.PlaceFirstViewport || c.Assert.Selector != `[data-testid="free-shipping-over-50"]` ||
		c.Assert.HasText != "Free shipping over $50" {
		t.Errorf("top %+v", c.Assert)
	}
	// A link the goal gives the text of is found by role and name, not by a hook; "at the
	// bottom" is judged by the order of the content too (the verifier's content_after).
	d = genShop(t, "Add a 'Back to top' link at the bottom of the pricing page.")
	c = critByID(t, d, "back-to-top-bottom")
	if c.Assert.Place != contracts.PlaceLastViewport || c.Assert.Selector != `role=link[name="Back to top"i]` || c.Assert.After != "" {
		t.Errorf("bottom %+v", c.Assert)
	}
	if !strings.Contains(c.Description, "below every other content") {
		t.Errorf("bottom description %q", c.Description)
	}
}

// Issue 26: "below X" and "above X" place the new element against X's box, X found by role
// and name on the surveyed page; an X the survey did not find is refused.
func TestBelowAndAbove(t *testing.T) {
	d := genShop(t, "Add a 'See all plans' link below the heading of the pricing page.")
	c := critByID(t, d, "see-all-plans-below")
	if c.Assert.Kind != contracts.KindPosition || c.Assert.Selector != `role=link[name="See all plans"i]` || c.Assert.After != `role=heading[name="Pricing"i]` || c.Assert.Before != "" {
		t.Errorf("below %+v\n%s", c.Assert, shape(d))
	}
	d = genShop(t, "Put a 'Sale ends Friday' banner above the 'Products' heading on the products page.")
	c = critByID(t, d, "sale-ends-friday-above")
	if c.Assert.Before != `role=heading[name="Products"i]` || c.Assert.After != "" || c.Route != "/products" {
		t.Errorf("above %+v on %s\n%s", c.Assert, c.Route, shape(d))
	}
	_, err := Rules{}.Generate(context.Background(), GenerateInput{Goal: "Add a 'Compare' link below the 'Enterprise' heading on the pricing page.", Survey: authoringtest.Shop(t)})
	var r *refusal.Error
	if !errors.As(err, &r) || r.Code != refusal.NoTarget || !strings.Contains(r.Reason, `"enterprise" heading`) {
		t.Errorf("a heading the page does not have: %v", err)
	}
}

// Issue 26: the items a stacking goal names are found by what a person reads on them. "Home
// page" is a page, not the items; a goal that names no items is refused, never re-aimed at
// the page.
func TestStackNamedControls(t *testing.T) {
	d := genShop(t, "On phones, the Products and Pricing links in the header should stack vertically on the home page.")
	var stacked *contracts.Criterion
	for i := range d.Criteria {
		if d.Criteria[i].Assert.Kind == contracts.KindStacked {
			stacked = &d.Criteria[i]
		}
	}
	if stacked == nil || stacked.Assert.Selector != `role=link[name=/^(?:Products|Pricing)$/i]` {
		t.Fatalf("stacked criterion %+v\n%s", stacked, shape(d))
	}
	if !strings.Contains(stacked.Description, `"Products" and "Pricing" links`) {
		t.Errorf("description %q", stacked.Description)
	}
	for _, goal := range []string{
		"On phones, the buttons on the home page should stack vertically.",
		"Make the about page stack vertically on phones.",
	} {
		_, err := Rules{}.Generate(context.Background(), GenerateInput{Goal: goal, Survey: authoringtest.Shop(t)})
		var r *refusal.Error
		if !errors.As(err, &r) || r.Code != refusal.NoTarget {
			t.Errorf("%q: %v, want a no_target refusal", goal, err)
		}
	}
}

func TestLinksTo(t *testing.T) {
	d := genShop(t, "Add a 'See plans' link to the home page that goes to the pricing page.")
	href := critByID(t, d, "see-plans-target")
	nav := critByID(t, d, "see-plans-goes")
	if href.Assert.Selector != `a[data-testid="see-plans"][href="/pricing"]` {
		t.Errorf("href %+v", href.Assert)
	}
	if nav.Assert.Kind != contracts.KindURL || string(nav.Assert.Expected) != `"/pricing"` || actionsOf(nav) != `click [data-testid="see-plans"]` {
		t.Errorf("navigation %+v (%s)", nav.Assert, actionsOf(nav))
	}
}

func TestScopedOverflow(t *testing.T) {
	d := genShop(t, "Make the header on the pricing page fit on phones: nothing in it may overflow at 390px.")
	h := critByID(t, d, "header-no-overflow")
	if h.Assert.Kind != contracts.KindNoHorizontalOverflow || h.Assert.Within != "header" || d.Role(h.ID) != RoleChange {
		t.Errorf("scoped %+v %s", h.Assert, d.Role(h.ID))
	}
	if p := critByID(t, d, "mobile-no-overflow"); d.Role(p.ID) != RoleGuard {
		t.Errorf("the page-level overflow check is %s, want a guard", d.Role(p.ID))
	}
}

func TestSiteWide(t *testing.T) {
	d := genShop(t, "Make the header fit on phones on every page: nothing in it may overflow at 390px.")
	var routes []string
	for _, c := range d.Criteria {
		if c.Assert.Within == "header" {
			routes = append(routes, c.Route)
		}
	}
	if fmt.Sprint(routes) != "[/ /about /blog /contact /pricing]" {
		t.Errorf("header checked on %v\n%s", routes, shape(d))
	}
	if !strings.Contains(strings.Join(d.Notes, "\n"), "left out: /products") {
		t.Errorf("notes %v do not say which pages were left out", d.Notes)
	}
	// A whole-app goal that names no shared part is still refused.
	if _, err := (Rules{}).Generate(context.Background(), GenerateInput{Goal: "Make every page responsive on phones.", Survey: authoringtest.Shop(t)}); err == nil {
		t.Error("every page responsive: not refused")
	}
}

func TestBackendOnShop(t *testing.T) {
	d := genShop(t, `GET /api/products: each item needs a "currency" member equal to USD.`)
	c := critByID(t, d, "products-currency-last")
	if c.Assert.JSON[0].Pointer != "/products/2/currency" || string(c.Assert.JSON[0].Expected) != `"USD"` {
		t.Errorf("last %+v", c.Assert.JSON)
	}
}

func TestBehaviourWithoutEffectRefused(t *testing.T) {
	_, err := Rules{}.Generate(context.Background(), GenerateInput{Goal: "Make the contact form submit.", Survey: authoringtest.Shop(t)})
	if r, ok := err.(*refusal.Error); !ok || r.Code != refusal.NoEffect || r.Hint == "" {
		t.Errorf("a submit with no endpoint and no confirmation: %v, want %s", err, refusal.NoEffect)
	}
}

// A part the layouts share, named without a page, is that part where it is rendered: every
// page for a fit on phones, the first page that renders it for anything else.
func TestSharedRegionWithoutAPage(t *testing.T) {
	d := genShop(t, "Make the header fit on phones")
	n := 0
	for _, c := range d.Criteria {
		if c.Assert.Kind == contracts.KindNoHorizontalOverflow && c.Assert.Within == "header" {
			n++
		}
	}
	if n != SiteWideRoutes || !strings.Contains(strings.Join(d.Notes, "\n"), "left out: /products") {
		t.Errorf("%d header checks, notes %q", n, d.Notes)
	}
	d = genShop(t, "Add a dark mode toggle to the header")
	if c := critByID(t, d, "dark-after-toggle"); c.Route != "/" {
		t.Errorf("toggle checked on %s", c.Route)
	}
}

// A quoted label is what a new element shows, not the page it names: the link goes where
// the words after "goes to" say.
func TestLinkLabelIsNotItsDestination(t *testing.T) {
	d := genShop(t, "Add a 'Contact us' link to the footer that goes to the contact page")
	if c := critByID(t, d, "contact-us-goes"); c.Route != "/" || c.Assert.Kind != contracts.KindURL || string(c.Assert.Expected) != `"/contact"` {
		t.Errorf("link check %s %+v", c.Route, c.Assert)
	}
	d = genShop(t, "Add a 'See pricing' link to the home page that goes to the pricing page")
	if c := critByID(t, d, "see-pricing-target"); c.Route != "/" || !strings.Contains(c.Assert.Selector, `href="/pricing"`) {
		t.Errorf("link target %s %+v", c.Route, c.Assert)
	}
}

// Issue 26: a heading change is checked by role and name (and the old heading gone, not kept as
// a guard); "without changing the other pages" guards other pages' own texts.
func TestHeadingChangeKeepsOtherPages(t *testing.T) {
	d := genShop(t, "Change the heading of the About page to 'Our story' without changing the other pages.")
	if c := critByID(t, d, "heading-our-story"); c.Assert.Selector != `role=heading[name="Our story"i]` || c.Route != "/about" {
		t.Errorf("heading %+v on %s", c.Assert, c.Route)
	}
	if c := critByID(t, d, "old-heading-gone"); c.Assert.Kind != contracts.KindElementAbsent || c.Assert.Selector != `role=heading[name="About Acme"i]` {
		t.Errorf("old heading %+v", c.Assert)
	}
	var guarded []string
	for _, c := range d.Criteria {
		if strings.HasPrefix(c.ID, "unchanged-") {
			guarded = append(guarded, c.Route)
			if c.Assert.Kind != contracts.KindAllOf || len(c.Assert.AllOf) != 2 || c.Assert.AllOf[0].Kind != contracts.KindVisibleText ||
				c.Assert.AllOf[1].Kind != contracts.KindStructure || len(c.Viewports()) != 2 || d.Role(c.ID) != RoleGuard {
				t.Errorf("%s: %+v at %v (%s)", c.ID, c.Assert, c.Viewports(), d.Role(c.ID))
			}
		}
		texts := slices.Clone(c.Assert.Texts)
		for _, sub := range c.Assert.AllOf {
			texts = append(texts, sub.Texts...)
		}
		for _, txt := range texts {
			if txt == "About Acme" {
				t.Errorf("%s still asks for the old heading", c.ID)
			}
		}
	}
	if len(guarded) != 2 || slices.Contains(guarded, "/about") {
		t.Errorf("other pages guarded: %v\n%s", guarded, shape(d))
	}
	if !strings.Contains(strings.Join(d.Notes, "\n"), "other pages guarded") {
		t.Errorf("notes %v", d.Notes)
	}
}

// "Next to X" places the element on X's row with nothing between them; X is found by role and
// name on the surveyed page, and an X the page does not show is refused.
func TestNextToControl(t *testing.T) {
	d := genShop(t, "Add a 'Reset' button next to the 'Send' button on the contact page.")
	c := critByID(t, d, "reset-beside")
	if c.Assert.Kind != contracts.KindPosition || c.Assert.Beside != `role=button[name="Send"i]` || c.Assert.Before != "" || c.Assert.After != "" || c.Assert.Place != "" ||
		c.Assert.Selector != `role=button[name="Reset"i]` || c.Route != "/contact" || d.Role(c.ID) != RoleChange {
		t.Errorf("next to %+v on %s (%s)\n%s", c.Assert, c.Route, d.Role(c.ID), shape(d))
	}
	if !strings.Contains(c.Description, `next to the "Send" button`) || !strings.Contains(c.Description, "nothing between them") {
		t.Errorf("description %q", c.Description)
	}
	checks, err := contracts.ChecksFor(c)
	if err != nil || !slices.ContainsFunc(checks, func(k contracts.Check) bool { return strings.HasSuffix(k.Key, contracts.ObsContentBetween) }) {
		t.Errorf("checks %+v: %v", checks, err)
	}
	// "Next to the title": the page's heading, as for "below the title".
	fd, err := Rules{}.Generate(context.Background(), GenerateInput{Goal: "Mark the Watchlist as Mobile optimized with a small label next to the title.", Survey: authoringtest.FinanceSurvey(t)})
	if err != nil {
		t.Fatal(err)
	}
	if c := critByID(t, fd, "mobile-optimized-beside"); c.Assert.Beside != `role=heading[name="Watchlist"i]` || c.Assert.HasText != "Mobile optimized" {
		t.Errorf("next to the title: %+v\n%s", c.Assert, shape(fd))
	}
	_, err = Rules{}.Generate(context.Background(), GenerateInput{Goal: "Add a 'Reset' button beside the 'Cancel' button on the contact page.", Survey: authoringtest.Shop(t)})
	var r *refusal.Error
	if !errors.As(err, &r) || r.Code != refusal.NoTarget || !strings.Contains(r.Reason, `"cancel" button`) {
		t.Errorf("a button the page does not have: %v", err)
	}
}
