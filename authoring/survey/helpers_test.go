package survey_test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/signoff/signoff/authoring/internal/authoringtest"
	"github.com/signoff/signoff/fixtures/finance"
)

func TestMain(m *testing.M) { authoringtest.Main(m) }

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
