package multihost_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/signoff/signoff/e2e/signoffproc"
	"github.com/signoff/signoff/internal/datadir"
)

// BenchmarkPairs prints contracts per minute through the rig with one and with two
// execute+verify pairs, and their ratio: the figure, not a target. The contracts are copies
// of W1, each on a repository of its own so the per-repository lock lets them run at once;
// all start together (replay --parallel). On a machine with few cores the pairs share them,
// so the ratio shows what a second pair of hosts costs or gains here, not on separate hardware.
func BenchmarkPairs(b *testing.B) {
	const n = 4
	perMin := map[int]float64{}
	for _, pairs := range []int{1, 2} {
		perMin[pairs] = benchPairs(b, pairs, n)
	}
	b.ReportMetric(perMin[1], "contracts/min-1-pair")
	b.ReportMetric(perMin[2], "contracts/min-2-pairs")
	b.ReportMetric(perMin[2]/perMin[1], "2-pairs/1-pair")
}

func benchPairs(b *testing.B, pairs, n int) float64 {
	var names []string
	for p := 1; p <= pairs; p++ {
		names = append(names, "execute"+strconv.Itoa(p), "verify"+strconv.Itoa(p))
	}
	c := startCluster(b, append(names, "control")...)
	runsDir := filepath.Join(c.root, "bin", "runs") // read-only on every host
	var runNames []string
	for k := 1; k <= n; k++ {
		runNames = append(runNames, benchRun(b, runsDir, k))
	}
	for p := 1; p <= pairs; p++ {
		v := "verify" + strconv.Itoa(p)
		if p > 1 { // one verify queue, one key: the second host is given the first's
			copyFile(b, filepath.Join(c.root, "verify1", "keys", datadir.VerifierKeyFile), filepath.Join(c.root, v, "keys", datadir.VerifierKeyFile), 0o600)
		}
		c.worker(v, 10+p, "verify", nil)
		c.executeWorker("execute"+strconv.Itoa(p), 20+p, runsDir)
	}
	c.trustVerifier("verify1", "control")
	started := time.Now()
	args := append([]string{c.bin, "replay"}, runNames...)
	control := c.start("control", 6, c.awsEnv, "", append(args, "--parallel", strconv.Itoa(n), "--temporal-address", c.temporal,
		"--queues", "control", "--artifacts", c.store, "--runs-dir", runsDir, "--data-dir", filepath.Join(c.root, "control"))...)
	if code := c.wait(control); code != 0 {
		b.Fatalf("%d contracts with %d pair(s): exit %d\n%s", n, pairs, code, control.tail(6000))
	}
	elapsed := time.Since(started)
	c.close() // the next measurement has the machine to itself
	b.Logf("%d pair(s): %d contracts in %s", pairs, n, elapsed.Round(time.Second))
	return float64(n) / elapsed.Minutes()
}

// benchRun writes a copy of W1 as run B<k>: its own contract id and repository name.
func benchRun(b *testing.B, runsDir string, k int) string {
	name := fmt.Sprintf("B%02d", k)
	src := filepath.Join(signoffproc.RepoRoot(), "fixtures", "runs", "W1")
	dst := filepath.Join(runsDir, name)
	if err := os.MkdirAll(filepath.Join(dst, "patches"), 0o755); err != nil {
		b.Fatal(err)
	}
	var c map[string]any
	readJSON(b, filepath.Join(src, "contract.json"), &c)
	c["contract_id"] = fmt.Sprintf("w1-bench-%02d", k)
	c["repo"].(map[string]any)["name"] = fmt.Sprintf("finance-b%02d", k)
	writeJSON(b, filepath.Join(dst, "contract.json"), c)
	var spec map[string]any
	readJSON(b, filepath.Join(src, "run.json"), &spec)
	spec["run"] = name
	writeJSON(b, filepath.Join(dst, "run.json"), spec)
	patches, err := os.ReadDir(filepath.Join(src, "patches"))
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range patches {
		data, err := os.ReadFile(filepath.Join(src, "patches", p.Name()))
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, "patches", p.Name()), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return name
}

func readJSON(b *testing.B, path string, v any) {
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		b.Fatal(err)
	}
}

func writeJSON(b *testing.B, path string, v any) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
}
