package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/e2e/signoffproc"
)

// TestBaseCheckOnQueues runs `signoff contract check --base` through a running `signoff dev`:
// the base commit is built on the execute queue and verified on the verify queue, the
// criteria the base fails are reported as the change's work and the rest as regression
// guards, and `contract start --check-base` records the result before approval.
func TestBaseCheckOnQueues(t *testing.T) {
	if testing.Short() {
		t.Skip("runs signoff dev as a process")
	}
	dataDir := t.TempDir()
	port := signoffproc.FreePort(t)
	addr := "127.0.0.1:" + port
	dev := signoffproc.Start(t, nil, "dev", "--data-dir", dataDir, "--temporal-port", port, "--ui-port", "0", "--loopback", "127.0.0.1:0",
		"--public", "127.0.0.1:0", "--runs-dir", testRunsDir(), "--preview", "static", "--no-chat")
	signoffproc.WaitOutput(t, dev, "Ctrl-C stops.", 60*time.Second)
	contract := filepath.Join(testRunsDir(), "H1", "contract.json")

	var disc struct {
		Checked bool     `json:"checked"`
		Failing []string `json:"failing"`
		Guards  []string `json:"guards"`
	}
	out := signoffproc.CLI(t, "contract", "check", contract, "--base", "--data-dir", dataDir, "--temporal-address", addr, "--json")
	if err := json.Unmarshal([]byte(out), &disc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// The base has no public/status.json: serving it fails there, and so do the JSON checks
	// of the 404 body (not JSON: nothing the contract asks for is delivered); package.json is
	// a regression guard.
	if !disc.Checked || strings.Join(disc.Failing, ",") != "status-served,status-ok,status-version" || len(disc.Guards) != 1 || disc.Guards[0] != "package-kept" {
		t.Fatalf("base check %+v", disc)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "proofs", "h1-static-status", "base", "evidence.json")); err != nil {
		t.Fatalf("the base check left no signed evidence: %v", err)
	}

	signoffproc.CLI(t, "contract", "start", contract, "--check-base", "--requester", "alice", "--data-dir", dataDir, "--temporal-address", addr)
	var st struct {
		Timeline []struct {
			Type string            `json:"type"`
			Data map[string]string `json:"data"`
		} `json:"timeline"`
	}
	if err := json.Unmarshal([]byte(signoffproc.CLI(t, "contract", "status", "h1-static-status", "--json", "--data-dir", dataDir, "--temporal-address", addr)), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Timeline) < 2 || st.Timeline[1].Type != contracts.EventBaseCheck || st.Timeline[1].Data["regression_guards"] != "package-kept" {
		t.Fatalf("timeline %+v", st.Timeline)
	}
}
