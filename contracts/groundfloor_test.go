package contracts_test

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/signoff/signoff/"

// goTool is the go command and the module's root, where `go list` runs.
func goTool(t *testing.T) (gobin, root string) {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go toolchain on PATH")
	}
	_, file, _, _ := runtime.Caller(0)
	return gobin, filepath.Dir(filepath.Dir(file))
}

// TestGroundFloorImportsNothingAbove: contracts and policy are the ground floor every other
// package stands on. They may use the standard library and the JSON Schema library only, so
// that neither Temporal nor any of this module's upper packages can leak into the terms or
// the verdict.
func TestGroundFloorImportsNothingAbove(t *testing.T) {
	gobin, root := goTool(t)
	cmd := exec.Command(gobin, "list", "-deps", "-test", "./contracts/...", "./policy/...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := func(pkg string) bool {
		switch {
		case !strings.Contains(strings.SplitN(pkg, "/", 2)[0], "."):
			return true // the standard library (and its vendored parts)
		case strings.HasPrefix(pkg, "github.com/santhosh-tekuri/jsonschema/"):
			return true
		}
		rest, ok := strings.CutPrefix(pkg, module)
		if !ok {
			return false
		}
		for _, floor := range []string{"contracts", "policy"} {
			if rest == floor || strings.HasPrefix(rest, floor+"/") || strings.HasPrefix(rest, floor+"_test") || strings.HasPrefix(rest, floor+".test") {
				return true
			}
		}
		return false
	}
	var bad []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if pkg := strings.Fields(line)[0]; !allowed(pkg) {
			bad = append(bad, pkg)
		}
	}
	if len(bad) > 0 {
		t.Fatalf("contracts/ and policy/ depend on packages above the ground floor:\n  %s", strings.Join(bad, "\n  "))
	}
}

// TestHouseRules: the arrows the layout draws (docs/project-layout.md), checked on what the
// packages really import, so an arrow that comes back fails here.
func TestHouseRules(t *testing.T) {
	gobin, root := goTool(t)
	// list prints each package matching pattern with its imports: direct ones, or (deps)
	// everything it depends on.
	list := func(pattern string, deps bool) map[string][]string {
		t.Helper()
		format := `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`
		if deps {
			format = `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`
		}
		cmd := exec.Command(gobin, "list", "-f", format, pattern)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pattern, err)
		}
		m := map[string][]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Fields(line)
			if len(f) > 0 {
				m[f[0]] = f[1:]
			}
		}
		if len(m) == 0 {
			t.Fatalf("go list %s: no packages", pattern)
		}
		return m
	}
	workflowCode := func(imp string) bool { return imp == module+"workflows" || imp == module+"activities" }
	rules := []struct {
		name    string
		pattern string
		deps    bool
		refused func(imp string) bool
	}{
		{"capabilities use no Temporal and know neither the workflows, their adapters nor the wiring",
			"./internal/...", true,
			func(imp string) bool {
				return strings.HasPrefix(imp, "go.temporal.io/") || imp == module+"workflows" || imp == module+"activities" ||
					imp == module+"workers" || strings.HasPrefix(imp, module+"workers/")
			}},
		{"chat speaks to a contract through its API and client, not the workflows' code", "./chatbridge/...", true, workflowCode},
		{"the web pages speak to a contract through its API and client, not the workflows' code", "./web/...", true, workflowCode},
		{"the prepared runs speak to a contract through its API and client, not the workflows' code", "./fixtures/...", true, workflowCode},
		{"the workflows' API stands apart from the SDK and the activities", "./workflows/contractapi", true,
			func(imp string) bool { return strings.HasPrefix(imp, "go.temporal.io/") || workflowCode(imp) }},
		{"authoring does not depend on the wiring", "./authoring/...", true,
			func(imp string) bool { return imp == module+"workers" || strings.HasPrefix(imp, module+"workers/") }},
		{"activities stand on the ground floor and the capabilities' terms only", "./activities", false,
			func(imp string) bool {
				return strings.HasPrefix(imp, module) && imp != module+"contracts" && imp != module+"internal/capability"
			}},
	}
	for _, r := range rules {
		var bad []string
		for pkg, imps := range list(r.pattern, r.deps) {
			for _, imp := range imps {
				if r.refused(imp) {
					bad = append(bad, pkg+" -> "+imp)
				}
			}
		}
		if len(bad) > 0 {
			t.Errorf("%s, but:\n  %s", r.name, strings.Join(bad, "\n  "))
		}
	}

	// A test binary that links the server is about 280 MB under -race and takes some 14 s to
	// link: a command or library that only dials Temporal must not pull it in.
	starters := []string{"temporal/embedded", "temporal/temporaltest", "workers/devstack", "cmd/signoff",
		"cmd/signoff/internal/cmd/root", "cmd/signoff/internal/cmd/dev", "cmd/signoff/internal/cmd/server",
		"cmd/signoff/internal/cmd/replay"}
	var bad []string
	for pkg, deps := range list("./...", true) {
		if !slices.Contains(starters, strings.TrimPrefix(pkg, module)) && slices.ContainsFunc(deps, func(imp string) bool {
			return strings.HasPrefix(imp, "go.temporal.io/server/")
		}) {
			bad = append(bad, pkg)
		}
	}
	if len(bad) > 0 {
		t.Errorf("only what starts the embedded server links it, but these do:\n  %s", strings.Join(bad, "\n  "))
	}
}
