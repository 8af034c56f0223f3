package pricing

import (
	"testing"
	"time"

	"github.com/signoff/signoff/authoring/criteria"
)

var fixedNow = time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)

func TestEstimate(t *testing.T) {
	p := Default()
	price := func(sc criteria.Scope) int64 { return p.Estimate(sc, fixedNow).Price.Amount }
	one := criteria.Scope{Pages: []string{"/watchlist"}}
	backend := criteria.Scope{Endpoints: []string{"/api/quotes"}, BackendOnly: true}
	if price(backend) >= price(one) {
		t.Error("a backend-only change costs as much as a browser-checked page")
	}
	steps := []criteria.Scope{
		one,
		{Pages: []string{"/watchlist"}, Mobile: true},
		{Pages: []string{"/watchlist"}, Mobile: true, Layout: true},
		{Pages: []string{"/watchlist", "/paper"}, Mobile: true, Layout: true},
		{Pages: []string{"/watchlist", "/paper"}, Mobile: true, Layout: true, Auth: true},
	}
	for i := 1; i < len(steps); i++ {
		a, b := p.Estimate(steps[i-1], fixedNow), p.Estimate(steps[i], fixedNow)
		if b.Price.Amount <= a.Price.Amount || b.EstimatedMinutes <= a.EstimatedMinutes {
			t.Errorf("scope %+v is not priced above %+v: %+v vs %+v", steps[i], steps[i-1], b, a)
		}
	}
	if q := p.Estimate(steps[3], fixedNow); len(q.Factors) < 3 || q.Factors[1].Name != "another page or endpoint" {
		t.Errorf("two-page quote %+v", q.Factors)
	}
	q := p.Estimate(steps[4], fixedNow)
	var sum int64
	for _, f := range q.Factors {
		sum += f.Amount
	}
	if sum != q.Price.Amount || q.Price.Currency != "usd" || !q.ExpiresAt.Equal(fixedNow.Add(24*time.Hour)) {
		t.Errorf("quote %+v", q)
	}
	if q.Expired(fixedNow.Add(23*time.Hour)) || !q.Expired(fixedNow.Add(24*time.Hour)) {
		t.Error("expiry")
	}
}
