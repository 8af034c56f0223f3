package survey_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff/signoff/authoring/internal/authoringtest"
	"github.com/signoff/signoff/authoring/refusal"
	"github.com/signoff/signoff/authoring/survey"
)

func TestResolveSource(t *testing.T) {
	ctx := context.Background()
	repo, _ := authoringtest.FinanceRepo(t)
	src, err := survey.ResolveSource(ctx, repo, "", "")
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
		s, err := survey.ResolveSource(ctx, raw, "main", "")
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
		_, err := survey.ResolveSource(ctx, b.repo, b.base, b.name)
		var ie *refusal.InputError
		if !errors.As(err, &ie) {
			t.Errorf("ResolveSource(%q, %q, %q) = %v, want an input error", b.repo, b.base, b.name, err)
		}
	}
	// An origin remote names the repository (credentials stripped).
	files := financeFiles(t, "")
	r2, _ := authoringtest.RepoFrom(t, files)
	gitIn(t, r2, "remote", "add", "origin", "https://someone:secret@github.com/acme/finance.git")
	s2, err := survey.ResolveSource(ctx, r2, "", "")
	if err != nil || s2.Slug() != "acme/finance" || strings.Contains(s2.URL, "secret") {
		t.Errorf("origin source %+v %v", s2, err)
	}
}

// TestRemoteSourceClones: a URL is cloned read-only (here over file://) and surveyed at the
// commit asked for.
func TestRemoteSourceClones(t *testing.T) {
	repo, sha := authoringtest.FinanceRepo(t)
	bare := filepath.Join(t.TempDir(), "acme", "finance.git")
	gitIn(t, filepath.Dir(repo), "clone", "--quiet", "--bare", repo, bare)
	src, err := survey.ResolveSource(context.Background(), "file://"+bare, sha, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Fetch(context.Background(), t.TempDir(), ""); err != nil {
		t.Fatal(err)
	}
	s, err := survey.Read(context.Background(), src, survey.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.BaseSHA != sha || s.Repo.Owner != "acme" || s.PageAt("/watchlist") == nil {
		t.Errorf("remote survey: %s %+v", s.BaseSHA, s.Repo)
	}
	src2, _ := survey.ResolveSource(context.Background(), "file://"+bare, strings.Repeat("0", 40), "")
	_ = src2.Fetch(context.Background(), t.TempDir(), "")
	_, err = survey.Read(context.Background(), src2, survey.Options{})
	var ie *refusal.InputError
	if !errors.As(err, &ie) || ie.Field != "base" {
		t.Errorf("unknown base: %v", err)
	}
}
