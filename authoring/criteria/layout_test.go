package criteria

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/signoff/signoff/authoring/internal/authoringtest"
	"github.com/signoff/signoff/contracts"
)

// seedGoal is issue 13's task, verbatim: the sentence whose contract had no structural check.
const seedGoal = "Make the Watchlist page work well on mobile by showing a compact card layout below 640px while preserving the desktop table on larger screens."

// TestReadLayout: wordings that ask for another structure at a width are layout changes, with
// the new structure and the breakpoint read; wordings that do not are not.
func TestReadLayout(t *testing.T) {
	layouts := []struct {
		goal       string
		to         string
		breakpoint int
	}{
		{seedGoal, "card", 640},
		{"Make the Watchlist page work well on mobile: cards instead of the table below 640px, desktop table kept.", "card", 640},
		{"On phones, show the watchlist rows as cards instead of the table; keep the desktop table.", "card", 0},
		{"Watchlist: cards on phones, the table on desktop.", "card", 0},
		{"Stack the watchlist rows on phones so nothing scrolls sideways; the desktop table stays.", "item", 0},
		{"Switch the watchlist to cards under 768px and keep the table on desktop.", "card", 768},
		{"At 600px and below, collapse the watchlist table into cards.", "card", 601},
		{"Give the watchlist a mobile card view below 640px.", "card", 640},
		{"Show the rows as cards on small screens on the watchlist page.", "card", 0},
		{"Use a card per symbol on the watchlist for screens narrower than 640px, preserving the desktop table.", "card", 640},
		{"Replace the watchlist table with a compact card layout on mobile (max-width: 640px).", "card", 641},
		{"Instead of the table, phones should get one card per watchlist symbol below 640 pixels.", "card", 640},
		{"The watchlist table should become stacked cards on mobile.", "card", 0},
		{"On the watchlist, lay out each symbol as a card on phones and leave the desktop table alone.", "card", 0},
		{"Use a card layout on the watchlist page.", "card", 0},
		{"Below the 640px breakpoint the watchlist should render its rows as compact cards.", "card", 640},
		{"Turn the watchlist rows into an accordion on phones.", "accordion", 0},
		{"Show the watchlist as a list view on screens 600px wide or narrower.", "item", 601},
		{"Show the watchlist rows as cards below the 640px breakpoint.", "card", 640},
		{"Make the watchlist mobile-friendly: each row becomes a card on screens under 640px.", "card", 640},
		{"Please make the watchlist usable on an iPhone by turning each row into a card.", "card", 0},
		{"Watchlist below 640px: card per ticker; desktop unchanged.", "card", 640},
		{"On mobile, render the watchlist as a list of cards instead of the wide table.", "card", 0},
		{"Watchlist on phones: show the holdings as cards, and keep the desktop table.", "card", 0},
		{"On phones the watchlist should show one card for each symbol.", "card", 0},
	}
	for _, c := range layouts {
		lc := readIntent(c.goal).layout
		switch {
		case lc == nil:
			t.Errorf("%q: no layout change read", c.goal)
		case lc.To != c.to || lc.Breakpoint != c.breakpoint:
			t.Errorf("%q: layout %+v, want to %s below %d", c.goal, *lc, c.to, c.breakpoint)
		}
	}
	others := []string{
		"Add a Market Status card to the header.",
		"Add a Market Status card to the watchlist header on mobile.",
		"Add Market Status and News cards to the watchlist header on mobile.",
		"Add a summary card showing the total value to the watchlist on phones.",
		"Fix the overflow on mobile.",
		"Fix the watchlist overflow on mobile phones below 640px.",
		"Add a dark mode toggle.",
		"Make the watchlist work on phones.",
		"Just add a 'Mobile optimized' label to the Watchlist header.",
		"Let the watchlist table scroll horizontally on phones instead of overflowing.",
		"Keep the desktop table and stop the watchlist overflowing on phones.",
		"Fix the card layout of the watchlist on mobile.",
		"Make the summary cards on the watchlist fit on phones below 640px.",
		"Show the account cards on mobile.",
		"Show a stack trace on the error page on phones.",
		"Switch the price column to show percentages on phones.",
		"Add a 'Skip for now' link to the onboarding page that goes to the watchlist.",
		"Show each price change as a percentage on the watchlist table.",
		"Show cards above the watchlist table on phones.",
		"Show compact cards below the page header on mobile.",
		"Show cards with the top movers on the watchlist page.",
		"Add a summary card for each account to the paper trading page.",
		"Turn each row's change into a percentage on phones.",
	}
	for _, g := range others {
		if lc := readIntent(g).layout; lc != nil {
			t.Errorf("%q read as a layout change %+v", g, *lc)
		}
	}
}

func TestReadBreakpoint(t *testing.T) {
	cases := map[string]int{
		"cards below 640px":                    640,
		"cards under 768 px wide":              768,
		"on screens narrower than 640 pixels":  640,
		"at 600px and below":                   601,
		"600px or narrower":                    601,
		"screens 600px wide or narrower":       601,
		"max-width: 640px":                     641,
		"up to 480px":                          481,
		"below the 640px breakpoint":           640,
		"at the 768px breakpoint":              768,
		"with a breakpoint of 900":             900,
		"on phones":                            0,
		"below 20px":                           0,
		"below 9999px":                         0,
		"keep it under 1000 ms on larger ones": 0,
	}
	for s, want := range cases {
		if got := readBreakpoint(s); got != want {
			t.Errorf("%q: breakpoint %d, want %d", s, got, want)
		}
	}
}

// TestLayoutContracts: the seed sentence and its paraphrases give the structural pair (the new
// structure displayed and holding the items, the table not displayed) at the phone width and
// just under the breakpoint, and the table kept at 1440x1000.
func TestLayoutContracts(t *testing.T) {
	s := authoringtest.FinanceSurvey(t)
	narrowAt := func(w int) []contracts.Viewport {
		return []contracts.Viewport{Mobile, {Width: w, Height: Mobile.Height}}
	}
	phone := []contracts.Viewport{Mobile}
	cases := []struct {
		goal   string
		to     string
		narrow []contracts.Viewport
	}{
		{seedGoal, "card", narrowAt(639)},
		{"On phones, show the watchlist rows as cards instead of the table; keep the desktop table.", "card", phone},
		{"Watchlist: cards on phones, the table on desktop.", "card", phone},
		{"Stack the watchlist rows on phones so nothing scrolls sideways; the desktop table stays.", "item", phone},
		{"Switch the watchlist to cards under 768px and keep the table on desktop.", "card", narrowAt(767)},
		{"At 600px and below, collapse the watchlist table into cards.", "card", narrowAt(600)},
		{"Give the watchlist a mobile card view below 640px.", "card", narrowAt(639)},
		{"Show the rows as cards on small screens on the watchlist page.", "card", phone},
		{"Use a card per symbol on the watchlist for screens narrower than 640px, preserving the desktop table.", "card", narrowAt(639)},
		{"Replace the watchlist table with a compact card layout on mobile (max-width: 640px).", "card", narrowAt(640)},
		{"Instead of the table, phones should get one card per watchlist symbol below 640 pixels.", "card", narrowAt(639)},
		{"The watchlist table should become stacked cards on mobile.", "card", phone},
		{"On the watchlist, lay out each symbol as a card on phones and leave the desktop table alone.", "card", phone},
		{"Make the watchlist mobile-friendly: each row becomes a card on screens under 640px.", "card", narrowAt(639)},
		// Under the phone's width: the phone itself is above the breakpoint.
		{"Below 360px, show the watchlist rows as cards instead of the table.", "card", []contracts.Viewport{{Width: 359, Height: 844}}},
		{"Show the watchlist rows as cards up to 390px.", "card", phone},
		// A capitalised name of the layout is the layout, not a new element showing that text.
		{"Make the Watchlist page show a Compact Card Layout below 640px.", "card", narrowAt(639)},
	}
	for _, c := range cases {
		t.Run(strings.Join(strings.Fields(c.goal)[:5], " "), func(t *testing.T) {
			d, err := Rules{}.Generate(context.Background(), GenerateInput{Goal: c.goal, Survey: s})
			if err != nil {
				t.Fatal(err)
			}
			checkCommon(t, d, s)
			allOnRoute(t, d, "/watchlist")
			var ids []string
			for _, cr := range d.Criteria {
				ids = append(ids, cr.ID)
			}
			if want := []string{"loads-mobile", "mobile-no-overflow", "mobile-" + c.to + "s", "desktop-table", "no-page-errors", "unchanged-home"}; !slices.Equal(ids, want) {
				t.Errorf("criteria %v, want %v:\n%s", ids, want, shape(d))
			}
			checkStructural(t, d, c.to, c.narrow)
			desk := wantOne(t, "keeping the table at 1440x1000", authoringtest.Find(d.Criteria, func(cr contracts.Criterion, a contracts.Assertion) bool {
				return a.Kind == contracts.KindVisibleText && a.Within == "table"
			}))
			if !slices.Equal(desk.Viewports(), []contracts.Viewport{Desktop}) || d.Role(desk.ID) != RoleGuard || !slices.Equal(desk.Assert.Texts, []string{"NVDA", "AAPL", "MSFT", "SPY"}) {
				t.Errorf("desktop check %s at %v (%s): %+v", desk.ID, desk.Viewports(), d.Role(desk.ID), desk.Assert)
			}
			if !d.Scope.Layout || !d.Scope.Mobile {
				t.Errorf("scope %+v", d.Scope)
			}
		})
	}
}

// checkStructural: exactly one criterion checks the layout, as the change, at the narrow
// viewports only: the hook's elements displayed, the page's first items visible inside them,
// and no table, ARIA table or ARIA grid displayed. The hook is declared for the executor.
func checkStructural(t *testing.T, d *Draft, to string, narrow []contracts.Viewport) {
	t.Helper()
	sel := fmt.Sprintf(`[data-testid="watchlist-%s"]`, to)
	st := authoringtest.Find(d.Criteria, authoringtest.Kind(contracts.KindElementAbsent))
	if len(st) != 1 {
		t.Fatalf("%d criteria check that a structure is gone, want 1:\n%s", len(st), shape(d))
	}
	c := st[0]
	if d.Role(c.ID) != RoleChange || !slices.Equal(c.Viewports(), narrow) {
		t.Errorf("%s: %s at %v, want the change at %v", c.ID, d.Role(c.ID), c.Viewports(), narrow)
	}
	var absent, present, inside bool
	for _, a := range authoringtest.LeavesOf(c.Assert) {
		switch {
		case a.Kind == contracts.KindElementAbsent:
			absent = a.Selector == `table, [role="table"], [role="grid"]` && a.State == contracts.StateVisible
		case a.Kind == contracts.KindElementPresent:
			present = a.Selector == sel && a.State == contracts.StateVisible
		case a.Kind == contracts.KindVisibleText:
			inside = a.Within == sel && slices.Equal(a.Texts, []string{"NVDA", "AAPL", "MSFT"})
		default:
			t.Errorf("%s: unexpected %s in the structural check", c.ID, a.Kind)
		}
	}
	if !absent || !present || !inside {
		t.Errorf("%s: table gone %v, %s displayed %v, symbols inside it %v: %+v", c.ID, absent, sel, present, inside, c.Assert)
	}
	hooks := 0
	for _, h := range d.TestHooks {
		if h.Selector == sel && len(h.Description) > 20 {
			hooks++
		}
	}
	if hooks != 1 || len(d.TestHooks) != 1 {
		t.Errorf("test hooks %+v, want %s declared with a description", d.TestHooks, sel)
	}
	if at := authoringtest.Find(d.Criteria, func(c contracts.Criterion, a contracts.Assertion) bool {
		return slices.Contains(c.Viewports(), Desktop) && (a.Within == sel || a.Selector == sel || a.Kind == contracts.KindElementAbsent)
	}); len(at) > 0 {
		t.Errorf("%s asks for the narrow layout at 1440x1000", at[0].ID)
	}
}

// TestNotLayoutChanges: goals that name no new structure for the page's items get no
// structural check and no layout hook.
func TestNotLayoutChanges(t *testing.T) {
	s := authoringtest.FinanceSurvey(t)
	for _, g := range []string{
		"Add a Market Status card to the watchlist header.",
		"Add a Market Status card to the watchlist header on mobile.",
		"Add a summary card showing the total value to the watchlist on phones.",
		"Fix the watchlist overflow on mobile phones below 640px.",
		"Make the watchlist work on phones.",
		"Let the watchlist table scroll horizontally on phones instead of overflowing.",
		"Fix the card layout of the watchlist on mobile.",
		"Make the summary cards on the watchlist fit on phones below 640px.",
	} {
		d, err := Rules{}.Generate(context.Background(), GenerateInput{Goal: g, Survey: s})
		if err != nil {
			t.Errorf("%q: %v", g, err)
			continue
		}
		checkCommon(t, d, s)
		if len(authoringtest.Find(d.Criteria, authoringtest.Kind(contracts.KindElementAbsent))) > 0 || d.Scope.Layout {
			t.Errorf("%q demands a layout change:\n%s", g, shape(d))
		}
		for _, h := range d.TestHooks {
			if strings.HasPrefix(h.Selector, `[data-testid="watchlist-`) {
				t.Errorf("%q declares the layout hook %s", g, h.Selector)
			}
		}
		// A phone goal still keeps the desktop table; the others keep the page's content.
		if len(authoringtest.Find(d.Criteria, func(c contracts.Criterion, a contracts.Assertion) bool {
			return primary(c) == Desktop && a.Kind == contracts.KindVisibleText
		})) == 0 {
			t.Errorf("%q: nothing checks the page at 1440x1000:\n%s", g, shape(d))
		}
	}
}
