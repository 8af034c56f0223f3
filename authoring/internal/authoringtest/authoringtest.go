// Package authoringtest is test support for the authoring packages: the finance and shop
// fixtures as git repositories and surveys, made once per test binary, throwaway
// repositories, and helpers that look into drafted criteria. Nothing in the product imports
// it.
//
// It imports package survey but neither package authoring nor package criteria, so their
// in-package tests can use it; package survey's tests that use it are external.
package authoringtest

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/signoff/signoff/authoring/survey"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/fixtures/finance"
	"github.com/signoff/signoff/fixtures/fixturerepo"
	"github.com/signoff/signoff/internal/modroot"
)

// Verifier is the verifier the authoring tests put in a contract's terms.
var Verifier = contracts.VerifierRef{Name: "signoff-verifier", Version: "1", Digest: strings.Repeat("ab", 32)}

// Main runs the tests and removes the fixtures they made; a package's TestMain calls it.
func Main(m *testing.M) {
	code := m.Run()
	if root.v != "" {
		os.RemoveAll(root.v)
	}
	os.Exit(code)
}

// lazy is a value made on first use and shared by every test of the binary; a value that
// could not be made fails each test that asks for it.
type lazy[T any] struct {
	once sync.Once
	v    T
	err  error
}

func (l *lazy[T]) get(t testing.TB, build func() (T, error)) T {
	t.Helper()
	l.once.Do(func() { l.v, l.err = build() })
	if l.err != nil {
		t.Fatal(l.err)
	}
	return l.v
}

type repo struct{ dir, sha string }

var (
	root                      lazy[string] // the folder the fixtures are made in
	financeRepo, shopRepo     lazy[repo]
	financeSurvey, shopSurvey lazy[*survey.Survey]
)

// materialize makes fsys a git repository named name in the fixtures' folder.
func materialize(fsys fs.FS, name string) (repo, error) {
	root.once.Do(func() { root.v, root.err = os.MkdirTemp("", "authoring-fixtures-") })
	if root.err != nil {
		return repo{}, root.err
	}
	dir := filepath.Join(root.v, name)
	sha, err := fixturerepo.MaterializeFS(fsys, dir)
	return repo{dir, sha}, err
}

func read(dir, name string) (*survey.Survey, error) {
	src, err := survey.ResolveSource(context.Background(), dir, "", name)
	if err != nil {
		return nil, err
	}
	return survey.Read(context.Background(), src, survey.Options{})
}

// FinanceRepo returns the finance fixture (fixtures/finance) as a git repository named
// finance, and its base commit. Tests only read it.
func FinanceRepo(t testing.TB) (dir, sha string) {
	t.Helper()
	r := financeRepo.get(t, func() (repo, error) { return materialize(finance.Files, "finance") })
	return r.dir, r.sha
}

// FinanceSurvey returns the survey of FinanceRepo as signoff-fixtures/finance.
func FinanceSurvey(t testing.TB) *survey.Survey {
	t.Helper()
	dir, _ := FinanceRepo(t)
	return financeSurvey.get(t, func() (*survey.Survey, error) { return read(dir, "signoff-fixtures/finance") })
}

// ShopRepo returns authoring/testdata/shop as a git repository, and its base commit. Tests
// only read it.
func ShopRepo(t testing.TB) (dir, sha string) {
	t.Helper()
	r := shopRepo.get(t, func() (repo, error) {
		mod, err := modroot.FromWD()
		if err != nil {
			return repo{}, err
		}
		return materialize(os.DirFS(filepath.Join(mod, "authoring", "testdata", "shop")), "shop")
	})
	return r.dir, r.sha
}

// Shop returns the survey of ShopRepo as signoff-fixtures/shop: a Next.js app-router tree
// with a header, nav and footer in its layout, a pricing page with cards, a product list, a
// contact form posting to an API route.
func Shop(t testing.TB) *survey.Survey {
	t.Helper()
	dir, _ := ShopRepo(t)
	return shopSurvey.get(t, func() (*survey.Survey, error) { return read(dir, "signoff-fixtures/shop") })
}

// RepoFrom makes a git repository from files (path -> content) in the test's temporary
// folder and returns its path and SHA.
func RepoFrom(t testing.TB, files map[string]string) (dir, sha string) {
	t.Helper()
	fsys := fstest.MapFS{}
	for p, c := range files {
		fsys[p] = &fstest.MapFile{Data: []byte(c), Mode: 0o644}
	}
	dir = filepath.Join(t.TempDir(), "repo")
	sha, err := fixturerepo.MaterializeFS(fsys, dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, sha
}

// LeavesOf lists an assertion's non-all_of members.
func LeavesOf(a contracts.Assertion) []contracts.Assertion {
	if a.Kind != contracts.KindAllOf {
		return []contracts.Assertion{a}
	}
	var out []contracts.Assertion
	for _, sub := range a.AllOf {
		out = append(out, LeavesOf(sub)...)
	}
	return out
}

// KindsOf lists an assertion's kinds, all_of members included.
func KindsOf(a contracts.Assertion) []string {
	out := []string{a.Kind}
	for _, sub := range a.AllOf {
		out = append(out, KindsOf(sub)...)
	}
	return out
}

// Find returns the criteria having a leaf assertion that matches.
func Find(criteria []contracts.Criterion, match func(c contracts.Criterion, a contracts.Assertion) bool) []contracts.Criterion {
	var out []contracts.Criterion
	for _, c := range criteria {
		for _, a := range LeavesOf(c.Assert) {
			if match(c, a) {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// Kind matches a leaf assertion of the kind, for Find.
func Kind(k string) func(contracts.Criterion, contracts.Assertion) bool {
	return func(_ contracts.Criterion, a contracts.Assertion) bool { return a.Kind == k }
}
