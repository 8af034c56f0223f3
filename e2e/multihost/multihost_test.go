// Package multihost_test runs Signoff shared-nothing: the Temporal server, the S3-compatible
// artifact store and the control, execute and verify workers each on a "host" of their own
// (network and mount namespaces the test makes, see rig_test.go), reachable only over the
// rig's network, with no folder any two of them write.
package multihost_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/e2e/signoffproc"
	"github.com/signoff/signoff/fixtures/runs"
	"github.com/signoff/signoff/internal/artifacts/weedtest"
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/internal/proofstore"
	"github.com/signoff/signoff/workers"
)

// probeEnv makes this test binary a readiness probe of the S3 server ("ENDPOINT BUCKET"),
// run inside the server's network namespace: nothing outside the rig reaches it.
const probeEnv = "SIGNOFF_RIG_PROBE_S3"

func TestMain(m *testing.M) {
	if v := os.Getenv(probeEnv); v != "" {
		os.Exit(probeS3(v))
	}
	if err := subreaper(); err != nil {
		fmt.Fprintln(os.Stderr, "become a child subreaper:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func probeS3(v string) int {
	endpoint, bucket, _ := strings.Cut(v, " ")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // catches a hang only
	defer cancel()
	c := weedtest.Client(endpoint)
	tick := time.NewTicker(100 * time.Millisecond) // polling a server that is starting
	defer tick.Stop()
	for {
		err := weedtest.Probe(ctx, c, endpoint, bucket)
		if err == nil {
			return 0
		}
		select {
		case <-ctx.Done():
			fmt.Fprintf(os.Stderr, "S3 at %s not ready: %v\n", endpoint, err)
			return 1
		case <-tick.C:
		}
	}
}

// cluster is a rig with Temporal and the artifact store running.
type cluster struct {
	*rig
	temporal string   // host:port of the Temporal frontend
	store    string   // the artifact store's URL
	awsEnv   []string // the S3 credentials, for every host that opens the store
}

const bucket = "signoff"

// startCluster starts the Temporal and S3 hosts; workers is every other host the test will
// start, so each can hide the others' folders.
func startCluster(t testing.TB, workers ...string) *cluster {
	t.Helper()
	for _, p := range []string{".cache/finance-deps/node_modules/next", ".cache/pw-driver/1.64.1/package/cli.js", ".bin/weed"} {
		if _, err := os.Stat(filepath.Join(signoffproc.RepoRoot(), p)); err != nil {
			t.Fatalf("missing %s: run `go tool task setup`", p)
		}
	}
	r := newRig(t, append([]string{"temporal", "s3"}, workers...)...)
	c := &cluster{rig: r, temporal: rigSubnet + "2:7233"}
	r.start("temporal", 2, nil, "Temporal server on", r.bin, "server", "--ip", rigSubnet+"2", "--port", "7233",
		"--ui-port", "0", "--data-dir", filepath.Join(r.root, "temporal"))

	s3dir := filepath.Join(r.root, "s3")
	args := weedtest.Args(t, s3dir, rigSubnet+"3", weedtest.Ports{Master: 9333, MasterGRPC: 19333, Volume: 8080,
		VolumeGRPC: 18080, Filer: 8888, FilerGRPC: 18888, S3: 8333, S3GRPC: 18333})
	s3 := r.start("s3", 3, nil, "", append([]string{weedtest.Binary(t)}, args...)...)
	endpoint := "http://" + rigSubnet + "3:8333"
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	probe := exec.Command("nsenter", "-t", strconv.Itoa(s3.cmd.Process.Pid), "-n", "--", exe)
	probe.Env = []string{"PATH=" + os.Getenv("PATH"), probeEnv + "=" + endpoint + " " + bucket}
	if out, err := probe.CombinedOutput(); err != nil {
		t.Fatalf("S3 host not ready: %v\n%s\n%s", err, out, s3.tail(3000))
	}
	c.store = weedtest.BucketURL(endpoint, bucket)
	c.awsEnv = weedtest.Env("/nonexistent/aws-config")
	return c
}

// worker starts `signoff worker --queue queue` as host name.
func (c *cluster) worker(name string, octet int, queue string, extraEnv []string, flags ...string) *host {
	c.t.Helper()
	args := append([]string{c.bin, "worker", "--queue", queue, "--temporal-address", c.temporal, "--artifacts", c.store,
		"--data-dir", filepath.Join(c.root, name)}, flags...)
	return c.start(name, octet, append(append([]string{}, c.awsEnv...), extraEnv...), "worker for the "+queue+" queue", args...)
}

// executeWorker runs the prepared runs' executor and previews that the verify hosts reach at
// the host's own address. The fixture's installed dependencies are copied onto the host, as
// its image would hold them: previews hardlink them, which works only within one mount, and
// the repository is a read-only mount of its own on every host.
func (c *cluster) executeWorker(name string, octet int, runsDir string) *host {
	c.t.Helper()
	deps := filepath.Join(c.root, name, "finance-deps")
	if out, err := exec.Command("cp", "-a", filepath.Join(c.repo, ".cache", "finance-deps"), deps).CombinedOutput(); err != nil {
		c.t.Fatalf("copy the fixture's dependencies to %s: %v\n%s", name, err, out)
	}
	return c.worker(name, octet, "execute", nil, "--executor", "prepared", "--runs-dir", runsDir,
		"--shared-deps", deps, "--allow", "signoff-fixtures/*",
		"--advertise", rigSubnet+strconv.Itoa(octet), "--install-network", "none")
}

// start runs a host that talks to Temporal: like an operator, the rig first copies the
// server's client certificate folder into the host's data dir (the embedded server answers
// nothing else).
func (c *cluster) start(name string, octet int, env []string, readyLine string, argv ...string) *host {
	c.t.Helper()
	from := datadir.Paths(filepath.Join(c.root, "temporal")).TemporalClient
	entries, err := os.ReadDir(from)
	if err != nil {
		c.t.Fatalf("the Temporal host's client credentials: %v", err)
	}
	// The host's folder is traversed by the preview and browser users (its tmp is 1777).
	if err := os.MkdirAll(filepath.Join(c.root, name), 0o755); err != nil {
		c.t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			copyFile(c.t, filepath.Join(from, e.Name()), filepath.Join(datadir.Paths(filepath.Join(c.root, name)).TemporalClient, e.Name()), 0o600)
		}
	}
	return c.rig.start(name, octet, env, readyLine, argv...)
}

// copyFile provisions one host's file on another, as an operator does: public keys to the
// control host, the verify queue's key to a second verify host.
func copyFile(t testing.TB, from, to string, mode os.FileMode) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, mode); err != nil {
		t.Fatal(err)
	}
}

// trustVerifier gives the control host the verify queue's public key and digest.
func (c *cluster) trustVerifier(verifyHost, controlHost string) {
	for _, ext := range []string{".pub", ".digest"} {
		copyFile(c.t, filepath.Join(c.root, verifyHost, "keys", datadir.VerifierKeyFile+ext),
			filepath.Join(c.root, controlHost, "keys", datadir.VerifierKeyFile+ext), 0o644)
	}
}

// TestSharedNothing: W1 and W2 on the rig. The first verify worker is killed after it has
// published W1's evidence and before Temporal hears of it; a second verify worker on another
// host takes the task over, adopts that evidence, and W1 is still satisfied. W2 is not
// satisfied on all three attempts. `proof get` on yet another host materialises both proofs
// from the store, and `proof verify` accepts them.
func TestSharedNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Temporal, SeaweedFS and four workers in namespaces; builds the fixture and drives Chromium")
	}
	t.Parallel() // each rig has its own hub, addresses and folders; both mostly wait on their hosts
	c := startCluster(t, "execute", "verify", "verify2", "control", "reader")
	runsDir := filepath.Join(c.repo, "fixtures", "runs")
	w1, err := runs.Load(runsDir, "W1")
	if err != nil {
		t.Fatal(err)
	}
	w2, err := runs.Load(runsDir, "W2")
	if err != nil {
		t.Fatal(err)
	}

	barrier := filepath.Join(c.root, "verify", "barrier")
	if err := os.MkdirAll(barrier, 0o755); err != nil {
		t.Fatal(err)
	}
	verify1 := c.worker("verify", 5, "verify", []string{workers.EnvBarrier + "=" + barrier + ":Verify:applied"})
	c.executeWorker("execute", 4, runsDir)
	c.trustVerifier("verify", "control")
	control := c.start("control", 6, c.awsEnv, "", c.bin, "replay", "W1", "W2", "--temporal-address", c.temporal,
		"--queues", "control", "--artifacts", c.store, "--runs-dir", runsDir, "--data-dir", filepath.Join(c.root, "control"))

	ctx, cancel := context.WithTimeout(context.Background(), hostLimit)
	defer cancel()
	if _, err := awaitFile(ctx, filepath.Join(barrier, "Verify_applied.reached"), verify1); err != nil {
		t.Fatalf("the first verify worker never finished W1's verification: %v\n%s", err, verify1.tail(3000))
	}
	// The verification is published; the worker dies before Temporal hears of it.
	c.kill(verify1)
	published, err := os.ReadFile(filepath.Join(c.root, "verify", "proofs", w1.Contract.ContractID, "attempt-1", "try-1", proofstore.EvidenceFile))
	if err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(c.root, "verify", "keys", datadir.VerifierKeyFile), filepath.Join(c.root, "verify2", "keys", datadir.VerifierKeyFile), 0o600)
	c.worker("verify2", 7, "verify", nil)

	if code := c.wait(control); code != 0 {
		t.Fatalf("replay W1 W2 on the rig: exit %d\n%s", code, control.tail(6000))
	}

	// Another host reads the proofs out of the store and checks them with the published keys.
	keys := filepath.Join(c.root, "reader", "keys")
	copyFile(t, filepath.Join(c.root, "verify", "keys", datadir.VerifierKeyFile+".pub"), filepath.Join(keys, datadir.VerifierKeyFile+".pub"), 0o644)
	copyFile(t, filepath.Join(c.root, "control", "keys", datadir.ControlKeyFile+".pub"), filepath.Join(keys, datadir.ControlKeyFile+".pub"), 0o644)
	out := filepath.Join(c.root, "reader", "proofs")
	script := "set -e\n"
	for _, id := range []string{w1.Contract.ContractID, w2.Contract.ContractID} {
		script += fmt.Sprintf("%s proof get %s --artifacts '%s' --out %s --data-dir %s\n", c.bin, id, c.store, out, filepath.Join(c.root, "reader"))
		script += fmt.Sprintf("%s proof verify %s --keys %s\n", c.bin, filepath.Join(out, id), keys)
	}
	reader := c.start("reader", 8, c.awsEnv, "", "/bin/sh", "-c", script)
	if code := c.wait(reader); code != 0 {
		t.Fatalf("proof get and verify on another host: exit %d\n%s", code, reader.tail(6000))
	}

	wantVerdicts(t, filepath.Join(out, w1.Contract.ContractID), contracts.Satisfied)
	wantVerdicts(t, filepath.Join(out, w2.Contract.ContractID), contracts.NotSatisfied, contracts.NotSatisfied, contracts.NotSatisfied)
	// Nothing was lost with the first verify worker: the evidence in the proof is the one it
	// published, adopted by the second rather than measured again.
	got, err := os.ReadFile(filepath.Join(out, w1.Contract.ContractID, "attempt-1", "try-1", proofstore.EvidenceFile))
	if err != nil || string(got) != string(published) {
		t.Errorf("W1's evidence in the proof is not what the killed verify worker published (%v)", err)
	}
	// The control host holds the commits it published only because they came through the
	// store, and no worker wrote another's folder (each sees the others' as empty mounts).
	for _, absent := range []string{filepath.Join("verify", "remotes"), filepath.Join("verify2", "remotes"), filepath.Join("execute", "proofs")} {
		if _, err := os.Stat(filepath.Join(c.root, absent)); err == nil {
			t.Errorf("%s exists: a queue kept what is not its own", absent)
		}
	}
}

// wantVerdicts checks the bundles of a contract folder, attempt by attempt.
func wantVerdicts(t *testing.T, dir string, want ...string) {
	t.Helper()
	tries, err := proofstore.TryDirs(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, td := range tries {
		data, err := proofstore.ReadDocument(td.Path, proofstore.BundleFile)
		if err != nil {
			t.Fatal(err)
		}
		var b contracts.Bundle
		if err := json.Unmarshal(data, &b); err != nil {
			t.Fatal(err)
		}
		got = append(got, b.Verdict)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("%s: verdicts %v, want %v", filepath.Base(dir), got, want)
	}
}

// TestBaseCheckAcrossHosts: `contract check --base` on a host of its own, through the queues
// of workers elsewhere. The execute host has never seen the repository: the base commit
// reaches it through the store, without its history, and the check runs there.
func TestBaseCheckAcrossHosts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Temporal, SeaweedFS and three workers in namespaces; builds the fixture and drives Chromium")
	}
	t.Parallel() // each rig has its own hub, addresses and folders; both mostly wait on their hosts
	c := startCluster(t, "execute", "verify", "control", "cli")
	noRuns := filepath.Join(c.root, "bin", "no-runs") // so the execute host registers nothing itself
	if err := os.Mkdir(noRuns, 0o755); err != nil {
		t.Fatal(err)
	}
	w1, err := runs.Load(filepath.Join(c.repo, "fixtures", "runs"), "W1")
	if err != nil {
		t.Fatal(err)
	}
	c.worker("verify", 5, "verify", nil)
	c.executeWorker("execute", 4, noRuns)
	c.trustVerifier("verify", "control")
	c.worker("control", 6, "control", nil)
	c.trustVerifier("verify", "cli")
	cli := c.start("cli", 9, c.awsEnv, "", c.bin, "contract", "check", filepath.Join(c.repo, "fixtures", "runs", "W1", "contract.json"),
		"--base", "--temporal-address", c.temporal, "--artifacts", c.store, "--data-dir", filepath.Join(c.root, "cli"))
	if code := c.wait(cli); code != 0 {
		t.Fatalf("contract check through the rig's queues: exit %d\n%s", code, cli.tail(6000))
	}
	out := cli.output()
	if !strings.Contains(out, w1.Contract.ContractID+" on base "+contracts.ShortSHA(w1.Contract.Repo.BaseCommitSHA)) || !strings.Contains(out, "mobile-cards") {
		t.Errorf("the check does not report W1's criteria on its base:\n%s", out)
	}
	// The execute host holds the base as a shallow boundary: the commit, not its history.
	shallow, err := os.ReadFile(filepath.Join(c.root, "execute", "remotes", w1.Contract.Repo.Owner, w1.Contract.Repo.Name+".git", "shallow"))
	if err != nil || !strings.Contains(string(shallow), w1.Contract.Repo.BaseCommitSHA) {
		t.Errorf("the execute host's remote is not shallow at the base (%v): %q", err, shallow)
	}
}
