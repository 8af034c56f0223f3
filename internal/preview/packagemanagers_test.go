package preview

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// The setup task installs exactly the versions the launcher looks for.
func TestPinnedPackageManagersMatchSetup(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(moduleRoot(t), "tasks", "pm.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"PNPM_VERSION": PNPMVersion, "YARN_VERSION": YarnVersion, "BUN_VERSION": BunVersion} {
		m := regexp.MustCompile(`(?m)^\s+` + name + `: (\S+)$`).FindSubmatch(data)
		if m == nil || string(m[1]) != want {
			t.Errorf("tasks/pm.yml %s = %q, the launcher looks for %s", name, m, want)
		}
	}
}

// A commit naming a package manager that is not installed is refused with the setup task,
// and one Signoff does not run is refused as such; neither starts anything.
func TestMissingPackageManagerIsRefused(t *testing.T) {
	root := testRoot(t)
	repo, base := tinyRepo(t, root)
	l := newTinyLauncher(t, root, func(c *Config) { c.PackageManagers = map[string]string{} })
	for pm, want := range map[string]string{"pnpm": "go tool task pm:setup", "deno": "not one Signoff runs"} {
		job, err := l.Prepare(t.Context(), repo, base, Options{PackageManager: pm})
		var ie *InputError
		if !errors.As(err, &ie) || !regexp.MustCompile(regexp.QuoteMeta(want)).MatchString(err.Error()) {
			t.Errorf("%s: %v, want an input error naming %q", pm, err, want)
		}
		if job != nil && job.PID != 0 {
			t.Errorf("%s: something was started: %+v", pm, job)
		}
	}
	if len(pidFiles(t, l)) != 0 {
		t.Error("pid files left")
	}
}
