package authoring

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/signoff/signoff/authoring/internal/authoringtest"
	"github.com/signoff/signoff/authoring/survey"
)

func TestAdmissionAllowlist(t *testing.T) {
	a := &Admission{Allow: []string{"acme/*", "signoff-fixtures/finance"}}
	for _, c := range []struct {
		owner, name string
		ok          bool
	}{
		{"acme", "shop", true}, {"acme", "billing", true}, {"signoff-fixtures", "finance", true},
		{"signoff-fixtures", "other", false}, {"acme-evil", "shop", false}, {"evil", "acme", false},
	} {
		err := a.Admit("ann", c.owner, c.name)
		var ae *AdmissionError
		switch {
		case c.ok && err != nil:
			t.Errorf("%s/%s refused: %v", c.owner, c.name, err)
		case !c.ok && (!errors.As(err, &ae) || ae.Code != AdmitNotAllowed || !strings.Contains(ae.Reason, c.owner+"/"+c.name)):
			t.Errorf("%s/%s: %v, want not_allowed", c.owner, c.name, err)
		}
	}
	if err := (&Admission{}).Admit("ann", "acme", "shop"); err == nil {
		t.Error("an empty allowlist admitted a repository")
	}
	if err := CheckPatterns([]string{"acme/*", "a/[b"}); err == nil {
		t.Error("malformed pattern accepted")
	}
	if err := CheckPatterns([]string{"acme"}); err == nil {
		t.Error("pattern without a slash accepted")
	}
}

func TestAdmissionRateLimit(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	a := &Admission{Allow: []string{"*/*"}, Limit: 2, Window: time.Hour, Now: func() time.Time { return now }}
	for i := 0; i < 2; i++ {
		if err := a.Admit("ann", "acme", "shop"); err != nil {
			t.Fatal(err)
		}
		now = now.Add(10 * time.Minute)
	}
	err := a.Admit("ann", "acme", "shop")
	var ae *AdmissionError
	if !errors.As(err, &ae) || ae.Code != AdmitRateLimited || ae.RetryAfter != 40*time.Minute {
		t.Fatalf("third request: %v (%+v), want rate_limited, retry in 40m", err, ae)
	}
	if err := a.Admit("bob", "acme", "shop"); err != nil {
		t.Errorf("another requester is limited too: %v", err)
	}
	// A refused request is not counted: after the first one leaves the window, one fits.
	now = now.Add(41 * time.Minute)
	if err := a.Admit("ann", "acme", "shop"); err != nil {
		t.Errorf("after the window: %v", err)
	}
	if err := a.Admit("ann", "acme", "shop"); err == nil {
		t.Error("limit not enforced after the window moved")
	}
	if err := a.Admit("", "acme", "shop"); err == nil {
		t.Error("an anonymous request passed a per-requester limit")
	}
	// Not-allowed repositories do not use up the requester's budget.
	b := &Admission{Allow: []string{"acme/*"}, Limit: 1, Window: time.Hour, Now: func() time.Time { return now }}
	_ = b.Admit("cy", "evil", "x")
	if err := b.Admit("cy", "acme", "shop"); err != nil {
		t.Errorf("refused request counted: %v", err)
	}
}

// TestAdmissionBeforeSurvey: a refused repository is never read or cloned.
func TestAdmissionBeforeSurvey(t *testing.T) {
	clones := t.TempDir()
	a := &Author{Admission: &Admission{Allow: []string{"acme/*"}}, Verifier: authoringtest.Verifier, CloneDir: clones}
	src, err := survey.ResolveSource(context.Background(), "file:///nonexistent/evil/repo.git", "", "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Draft(context.Background(), Request{Requester: "ann", Source: src, Goal: "Make the watchlist work on mobile"})
	var ae *AdmissionError
	if !errors.As(err, &ae) || ae.Code != AdmitNotAllowed {
		t.Fatalf("got %v, want not_allowed before any clone", err)
	}
	if entries, _ := os.ReadDir(clones); len(entries) != 0 {
		t.Errorf("something was cloned: %v", entries)
	}
}

// failingStore is a RateStore that cannot answer.
type failingStore struct{ err error }

func (s failingStore) Take(string, time.Time, int, time.Duration) ([]time.Time, bool, error) {
	return nil, false, s.err
}

// emptyRefusal refuses without naming a recent request (a broken store).
type emptyRefusal struct{}

func (emptyRefusal) Take(string, time.Time, int, time.Duration) ([]time.Time, bool, error) {
	return nil, false, nil
}

// TestAdmissionStoreFailsClosed: a rate limit that cannot be checked refuses the request with
// the store's error, rather than admitting it or panicking.
func TestAdmissionStoreFailsClosed(t *testing.T) {
	boom := errors.New("disk on fire")
	a := &Admission{Allow: []string{"*/*"}, Limit: 1, Window: time.Hour, Store: failingStore{boom}}
	err := a.Admit("ann", "acme", "shop")
	var ae *AdmissionError
	if !errors.Is(err, boom) || errors.As(err, &ae) || !strings.Contains(err.Error(), "ann") {
		t.Errorf("store error: %v, want it wrapped with the requester", err)
	}
	a.Store = emptyRefusal{}
	if err := a.Admit("ann", "acme", "shop"); err == nil || errors.As(err, &ae) {
		t.Errorf("refusal without stamps: %v, want an error", err)
	}
	// Without a limit the store is never asked.
	a.Limit = 0
	a.Store = failingStore{boom}
	if err := a.Admit("ann", "acme", "shop"); err != nil {
		t.Errorf("no limit: %v", err)
	}
}

// TestMemoryRatesForgets: requesters whose window has passed are dropped, so a long-lived
// process does not remember everyone it ever served.
func TestMemoryRatesForgets(t *testing.T) {
	var m MemoryRates
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, r := range []string{"ann", "bob"} {
		if _, ok, err := m.Take(r, t0, 1, time.Hour); !ok || err != nil {
			t.Fatalf("%s: %v %v", r, ok, err)
		}
	}
	if recent, ok, _ := m.Take("ann", t0.Add(time.Minute), 1, time.Hour); ok || len(recent) != 1 || !recent[0].Equal(t0) {
		t.Errorf("second take within the window: ok=%v recent=%v", ok, recent)
	}
	if _, ok, _ := m.Take("cy", t0.Add(2*time.Hour), 1, time.Hour); !ok {
		t.Error("cy refused")
	}
	if _, kept := m.seen["ann"]; kept || len(m.seen) != 1 {
		t.Errorf("stale requesters kept: %v", m.seen)
	}
}
