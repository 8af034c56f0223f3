package verify

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/signoff/signoff/contracts"
)

// envUpdateFixtures=1 rewrites the prepared contracts' verifier reference to this verifier's.
const envUpdateFixtures = "SIGNOFF_UPDATE_FIXTURES"

// TestPreparedContractsNameThisVerifier: the prepared runs (the demo's and the end-to-end
// suite's) are frozen against this verifier. A
// change to the probe, its parameters or the assertion semantics changes the digest; the
// prepared contracts are then stamped again (SIGNOFF_UPDATE_FIXTURES=1), which changes their
// hashes and nothing else.
func TestPreparedContractsNameThisVerifier(t *testing.T) {
	var paths []string
	for _, dir := range []string{"../../fixtures/runs", "../../e2e/testdata/runs"} {
		found, err := filepath.Glob(filepath.Join(dir, "*", "contract.json"))
		if err != nil || len(found) == 0 {
			t.Fatalf("no prepared contracts in %s: %v", dir, err)
		}
		paths = append(paths, found...)
	}
	want := Ref()
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		c, err := contracts.Load(raw, contracts.LoadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if c.Verifier == want {
			continue
		}
		if os.Getenv(envUpdateFixtures) != "1" {
			t.Errorf("%s is frozen against verifier %s %s (digest %s), this one is %s (digest %s): run with %s=1 to stamp it again",
				p, c.Verifier.Name, c.Verifier.Version, c.Verifier.Digest, want.Version, want.Digest, envUpdateFixtures)
			continue
		}
		old, _ := json.Marshal(c.Verifier)
		now, _ := json.Marshal(want)
		var oldIndented, nowIndented bytes.Buffer
		_ = json.Indent(&oldIndented, old, "  ", "  ")
		_ = json.Indent(&nowIndented, now, "  ", "  ")
		fixed := bytes.Replace(raw, oldIndented.Bytes(), nowIndented.Bytes(), 1)
		if bytes.Equal(fixed, raw) {
			t.Fatalf("%s: could not find its verifier block to replace", p)
		}
		if err := os.WriteFile(p, fixed, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: stamped with verifier %s", p, want.Digest)
	}
}
