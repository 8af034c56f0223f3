package authoring

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/fixtures/finance"
	"github.com/signoff/signoff/fixtures/fixturerepo"
)

// The finance fixture is materialized once per test binary; tests only read it.
var (
	fixOnce   sync.Once
	fixRoot   string
	fixRepo   string
	fixSHA    string
	fixSurvey *Survey
	fixErr    error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fixRoot != "" {
		os.RemoveAll(fixRoot)
	}
	os.Exit(code)
}

// financeRepo returns the materialized finance fixture and its base commit.
func financeRepo(t testing.TB) (string, string) {
	t.Helper()
	fixOnce.Do(func() {
		fixRoot, fixErr = os.MkdirTemp("", "authoring-finance-")
		if fixErr != nil {
			return
		}
		fixRepo = filepath.Join(fixRoot, "finance")
		fixSHA, fixErr = fixturerepo.MaterializeFS(finance.Files, fixRepo)
		if fixErr != nil {
			return
		}
		var src *Source
		src, fixErr = ResolveSource(context.Background(), fixRepo, "", "signoff-fixtures/finance")
		if fixErr != nil {
			return
		}
		fixSurvey, fixErr = SurveyRepo(context.Background(), src, SurveyOptions{})
	})
	if fixErr != nil {
		t.Fatal(fixErr)
	}
	return fixRepo, fixSHA
}

func financeSurvey(t testing.TB) *Survey {
	t.Helper()
	financeRepo(t)
	return fixSurvey
}

// repoFrom makes a git repository from files (path -> content) and returns its path and SHA.
func repoFrom(t testing.TB, files map[string]string) (string, string) {
	t.Helper()
	fsys := fstest.MapFS{}
	for p, c := range files {
		fsys[p] = &fstest.MapFile{Data: []byte(c), Mode: 0o644}
	}
	dir := filepath.Join(t.TempDir(), "repo")
	sha, err := fixturerepo.MaterializeFS(fsys, dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, sha
}

// financeFiles returns the fixture's files under prefix (for a repository holding the app in
// a subfolder).
func financeFiles(t testing.TB, prefix string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := walkEmbed(func(p string, data []byte) { out[prefix+p] = string(data) })
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func walkEmbed(fn func(p string, data []byte)) error {
	var walk func(dir string) error
	walk = func(dir string) error {
		entries, err := finance.Files.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range entries {
			p := e.Name()
			if dir != "." {
				p = dir + "/" + e.Name()
			}
			if e.IsDir() {
				if err := walk(p); err != nil {
					return err
				}
				continue
			}
			b, err := finance.Files.ReadFile(p)
			if err != nil {
				return err
			}
			fn(p, b)
		}
		return nil
	}
	return walk(".")
}

func gitIn(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return string(out)
}

// kindsOf lists an assertion's kinds, all_of members included.
func kindsOf(a contracts.Assertion) []string {
	out := []string{a.Kind}
	for _, sub := range a.AllOf {
		out = append(out, kindsOf(sub)...)
	}
	return out
}

// leavesOf lists an assertion's non-all_of members.
func leavesOf(a contracts.Assertion) []contracts.Assertion {
	if a.Kind != contracts.KindAllOf {
		return []contracts.Assertion{a}
	}
	var out []contracts.Assertion
	for _, sub := range a.AllOf {
		out = append(out, leavesOf(sub)...)
	}
	return out
}
