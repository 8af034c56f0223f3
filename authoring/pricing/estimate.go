package pricing

import (
	"fmt"
	"strings"
	"time"

	"github.com/signoff/signoff/authoring/criteria"
	"github.com/signoff/signoff/contracts"
)

// Pricing turns a scope into a price and a time estimate. Every amount is in minor units.
// There is one price per scope and no cheaper tier: the bar (the criteria) is the same for
// every budget, and a smaller budget can only buy a smaller scope.
type Pricing struct {
	Currency string
	// Base prices a one-page UI change; BackendBase a one-endpoint change checked over HTTP.
	Base, BackendBase int64
	// Each extra page or endpoint, and each kind of work or risk, adds its amount.
	ExtraRoute, Mobile, Layout, Feature, Loading, NewPage, Auth int64
	// Minutes estimates follow the same factors.
	BaseMinutes, BackendMinutes, ExtraRouteMinutes, MobileMinutes, LayoutMinutes,
	FeatureMinutes, LoadingMinutes, NewPageMinutes, AuthMinutes int
	// TTL is how long a quote stays open.
	TTL time.Duration
}

// Default is the local default price list.
func Default() Pricing {
	return Pricing{
		Currency: "usd",
		Base:     2900, BackendBase: 1900,
		ExtraRoute: 1500, Mobile: 1000, Layout: 1500, Feature: 1000, Loading: 800, NewPage: 1500, Auth: 1000,
		BaseMinutes: 20, BackendMinutes: 15,
		ExtraRouteMinutes: 15, MobileMinutes: 10, LayoutMinutes: 15, FeatureMinutes: 10, LoadingMinutes: 10,
		NewPageMinutes: 15, AuthMinutes: 10,
		TTL: 24 * time.Hour,
	}
}

// Factor is one line of an estimate: what adds to the price and the time.
type Factor struct {
	Name    string `json:"name"`
	Amount  int64  `json:"amount"`
	Minutes int    `json:"minutes"`
}

// Estimate is the price and time Signoff asks for a scope, until it expires. A quote
// (contracts.Quote) offers a contract at the estimate's price; the JSON name of an estimate
// where authoring and `contract new` write one is "quote", as files already written have it.
type Estimate struct {
	Price            contracts.Price `json:"price"`
	EstimatedMinutes int             `json:"estimated_minutes"`
	ExpiresAt        time.Time       `json:"expires_at"`
	Factors          []Factor        `json:"factors"`
}

// Expired reports whether a quote at this estimate can no longer be approved at t.
func (q Estimate) Expired(t time.Time) bool { return !t.Before(q.ExpiresAt) }

// Estimate prices a scope at now.
func (p Pricing) Estimate(sc criteria.Scope, now time.Time) Estimate {
	var fs []Factor
	add := func(name string, amount int64, minutes int) {
		fs = append(fs, Factor{Name: name, Amount: amount, Minutes: minutes})
	}
	var routes int
	if sc.BackendOnly {
		add("one endpoint, checked over HTTP", p.BackendBase, p.BackendMinutes)
		routes = len(sc.Endpoints)
	} else {
		add("one page, checked in a real browser", p.Base, p.BaseMinutes)
		routes = len(sc.Pages)
	}
	for i := 1; i < routes; i++ {
		add("another page or endpoint", p.ExtraRoute, p.ExtraRouteMinutes)
	}
	if sc.NewPage {
		add("a new page", p.NewPage, p.NewPageMinutes)
	}
	if sc.Mobile {
		add("phone layout (390x844)", p.Mobile, p.MobileMinutes)
	}
	if sc.Layout {
		add("structural layout change at a breakpoint", p.Layout, p.LayoutMinutes)
	}
	if sc.Feature {
		add("a new element", p.Feature, p.FeatureMinutes)
	}
	if sc.Loading {
		add("loading state under a slow response", p.Loading, p.LoadingMinutes)
	}
	if sc.Auth {
		add("behind a sign-in (demo account)", p.Auth, p.AuthMinutes)
	}
	q := Estimate{Factors: fs, ExpiresAt: now.Add(p.TTL).UTC().Truncate(time.Second)}
	for _, f := range fs {
		q.Price.Amount += f.Amount
		q.EstimatedMinutes += f.Minutes
	}
	q.Price.Currency = p.Currency
	if q.Price.Amount < 50 { // the smallest amount a card payment can authorize
		q.Price.Amount = 50
	}
	return q
}

// BudgetError means the price for the goal exceeds the budget. The bar is never lowered to
// fit: the scope must shrink or the budget grow.
type BudgetError struct {
	Price  int64  `json:"price"`
	Budget int64  `json:"budget"`
	Reason string `json:"reason"`
}

func (e *BudgetError) Error() string { return e.Reason }

// CheckBudget refuses a quote above budget (0 = no budget). It never offers a cheaper,
// lower-quality variant: it says what scope the budget could cover instead.
func CheckBudget(q Estimate, budget int64) error {
	if budget <= 0 || q.Price.Amount <= budget {
		return nil
	}
	var lines []string
	for _, f := range q.Factors {
		lines = append(lines, fmt.Sprintf("%s %s", f.Name, contracts.Price{Amount: f.Amount, Currency: q.Price.Currency}.String()))
	}
	return &BudgetError{Price: q.Price.Amount, Budget: budget, Reason: fmt.Sprintf(
		"this goal is quoted at %s (%s), above the budget of %s. The criteria are not weakened to fit a budget: narrow the goal (fewer pages, no new element, no layout change) or raise the budget",
		q.Price.String(), strings.Join(lines, "; "), contracts.Price{Amount: budget, Currency: q.Price.Currency}.String())}
}
