package authoring

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	a := &Author{Admission: &Admission{Allow: []string{"acme/*"}}, Verifier: testVerifier, CloneDir: clones}
	src, err := ResolveSource(context.Background(), "file:///nonexistent/evil/repo.git", "", "")
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

func TestResolveSource(t *testing.T) {
	ctx := context.Background()
	repo, _ := financeRepo(t)
	src, err := ResolveSource(ctx, repo, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if src.Owner != "local" || src.Name != "finance" || src.URL != "file://"+repo || src.Base != "HEAD" || src.Remote {
		t.Errorf("local source %+v", src)
	}
	for raw, want := range map[string]string{
		"https://github.com/acme/shop.git": "acme/shop",
		"git@github.com:acme/shop.git":     "acme/shop",
		"ssh://git@example.com/acme/shop":  "acme/shop",
		"file:///srv/git/acme/shop.git":    "acme/shop",
	} {
		s, err := ResolveSource(ctx, raw, "main", "")
		if err != nil || s.Slug() != want || !s.Remote || s.Base != "main" {
			t.Errorf("%s: %+v %v, want %s", raw, s, err, want)
		}
	}
	bad := []struct{ repo, base, name string }{
		{"", "", ""},
		{"/nonexistent/dir", "", ""},
		{t.TempDir(), "", ""}, // not a repository
		{"https://user:token@github.com/acme/shop.git", "", ""},
		{"ftp://example.com/acme/shop", "", ""},
		{repo, "--upload-pack=evil", ""},
		{repo, "", "no-slash"},
	}
	for _, b := range bad {
		_, err := ResolveSource(ctx, b.repo, b.base, b.name)
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Errorf("ResolveSource(%q, %q, %q) = %v, want an input error", b.repo, b.base, b.name, err)
		}
	}
	// An origin remote names the repository (credentials stripped).
	files := financeFiles(t, "")
	r2, _ := repoFrom(t, files)
	gitIn(t, r2, "remote", "add", "origin", "https://someone:secret@github.com/acme/finance.git")
	s2, err := ResolveSource(ctx, r2, "", "")
	if err != nil || s2.Slug() != "acme/finance" || strings.Contains(s2.URL, "secret") {
		t.Errorf("origin source %+v %v", s2, err)
	}
}

// TestRemoteSourceClones: a URL is cloned read-only (here over file://) and surveyed at the
// commit asked for.
func TestRemoteSourceClones(t *testing.T) {
	repo, sha := financeRepo(t)
	bare := filepath.Join(t.TempDir(), "acme", "finance.git")
	gitIn(t, filepath.Dir(repo), "clone", "--quiet", "--bare", repo, bare)
	src, err := ResolveSource(context.Background(), "file://"+bare, sha, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Fetch(context.Background(), t.TempDir(), ""); err != nil {
		t.Fatal(err)
	}
	s, err := SurveyRepo(context.Background(), src, SurveyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.BaseSHA != sha || s.Repo.Owner != "acme" || s.PageAt("/watchlist") == nil {
		t.Errorf("remote survey: %s %+v", s.BaseSHA, s.Repo)
	}
	src2, _ := ResolveSource(context.Background(), "file://"+bare, strings.Repeat("0", 40), "")
	_ = src2.Fetch(context.Background(), t.TempDir(), "")
	_, err = SurveyRepo(context.Background(), src2, SurveyOptions{})
	var ie *InputError
	if !errors.As(err, &ie) || ie.Field != "base" {
		t.Errorf("unknown base: %v", err)
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
