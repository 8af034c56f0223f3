package authoring

import (
	"testing"
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
