package contracts_test

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestGroundFloorImportsNothingAbove: contracts and policy are the ground floor every other
// package stands on. They may use the standard library and the JSON Schema library only, so
// that neither Temporal nor any of this module's upper packages can leak into the terms or
// the verdict.
func TestGroundFloorImportsNothingAbove(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go toolchain on PATH")
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(file))
	const module = "github.com/signoff/signoff/"
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
