package proof_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signoff/signoff/cmd/signoff/internal/cmd/proof"
	"github.com/signoff/signoff/cmd/signoff/internal/cmd/root"
	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/internal/proofstore"
	"github.com/signoff/signoff/internal/proofstore/prooftest"
	"github.com/signoff/signoff/internal/signing"
)

// fixture is a proof store with a satisfied W1 run and a three-attempt W2 run, and a data dir
// (elsewhere) whose keys/*.pub are the test keys.
type fixture struct {
	root, dataDir string
	w1, w2        *prooftest.Proof
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "proofs")
	w1 := prooftest.Build(t, root, prooftest.Spec{Contract: prooftest.W1(t), Attempts: []prooftest.Attempt{{}}})
	c := prooftest.W1(t)
	c.ContractID = "w2-watchlist-header"
	w2 := prooftest.Build(t, root, prooftest.Spec{Contract: c, Attempts: []prooftest.Attempt{
		{Override: prooftest.W2Override()}, {Override: prooftest.W2Override()}, {Override: prooftest.W2Override()}}})
	// The deployment's data dir lives apart from the proof: a data dir beside the proof store
	// could have come with it, and its keys would be refused.
	dataDir := filepath.Join(t.TempDir(), "data")
	writeKeys(t, dataDir, prooftest.VerifierPublicKey(), prooftest.ControlPublicKey())
	return fixture{root: root, dataDir: dataDir, w1: w1, w2: w2}
}

// writeKeys publishes public keys into dataDir/keys as the workers do.
func writeKeys(t *testing.T, dataDir string, verifier, control ed25519.PublicKey) {
	t.Helper()
	keys := datadir.Paths(dataDir).Keys
	if err := os.MkdirAll(keys, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, pub := range map[string]ed25519.PublicKey{datadir.VerifierKeyFile: verifier, datadir.ControlKeyFile: control} {
		pem, err := signing.PublicPEM(pub)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(keys, name+".pub"), pem, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// run executes `signoff proof ARGS...` through the root command and the one exit-code
// mapping, as main does.
func run(t *testing.T, args ...string) (string, int) {
	t.Helper()
	ios, out, errOut := iostreams.Test()
	f := cmdutil.New(ios)
	cmd := root.NewCmdRoot(f)
	cmd.SetArgs(append([]string{"proof"}, args...))
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	code := cmdutil.Execute(cmd, ios)
	return out.String() + errOut.String(), code
}

func TestVerifyCommand(t *testing.T) {
	f := newFixture(t)
	dd := "--data-dir=" + f.dataDir
	for name, dir := range map[string]string{"try dir": f.w1.Dirs[0], "contract dir": f.w2.ContractDir, "store root": f.root} {
		out, code := run(t, "verify", dir, dd)
		if code != 0 || !strings.Contains(out, "verified: all") {
			t.Errorf("%s: exit %d\n%s", name, code, out)
		}
	}

	// A flipped byte in a screenshot: exit 1, naming the artifact.
	art := f.w2.Evidence[1].Artifacts[2].Name
	p := filepath.Join(f.w2.Dirs[1], art)
	data, _ := os.ReadFile(p)
	data[len(data)-1] ^= 0x80
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := run(t, "verify", f.w2.ContractDir, dd)
	if code != 1 || !strings.Contains(out, "FAILED "+proofstore.CheckArtifactPrefix+art) || !strings.Contains(out, "NOT VERIFIED") {
		t.Errorf("tampered artifact: exit %d\n%s", code, out)
	}
	out, code = run(t, "verify", f.w2.Dirs[1], dd, "--json")
	var res proof.VerifyResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 1 || res.OK {
		t.Errorf("--json: exit %d ok %v err %v\n%s", code, res.OK, err, out)
	}
	// Swapped keys: both signatures fail.
	vk := filepath.Join(f.dataDir, "keys", datadir.VerifierKeyFile+".pub")
	ck := filepath.Join(f.dataDir, "keys", datadir.ControlKeyFile+".pub")
	if out, code := run(t, "verify", f.w1.Dirs[0], "--verifier-key", ck, "--control-key", vk); code != 1 || !strings.Contains(out, "FAILED bundle_signature") {
		t.Errorf("swapped keys: exit %d\n%s", code, out)
	}
}

func TestVerifyCommandBadInput(t *testing.T) {
	f := newFixture(t)
	dd := "--data-dir=" + f.dataDir
	priv := filepath.Join(t.TempDir(), "control.key")
	if _, err := signing.LoadOrCreate(priv); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(t.TempDir(), "key.txt")
	_ = os.WriteFile(garbage, []byte("not a key"), 0o644)
	for name, args := range map[string][]string{
		"missing dir":       {"verify", filepath.Join(f.root, "nope"), dd},
		"not a proof":       {"verify", t.TempDir(), dd},
		"no keys":           {"verify", f.w1.Dirs[0], "--data-dir=" + t.TempDir()},
		"private key given": {"verify", f.w1.Dirs[0], dd, "--control-key", priv},
		"garbage key":       {"verify", f.w1.Dirs[0], dd, "--verifier-key", garbage},
		"no dir argument":   {"verify", dd},
	} {
		if out, code := run(t, args...); code != 2 {
			t.Errorf("%s: exit %d, want 2\n%s", name, code, out)
		}
	}
}

func TestRenderCommand(t *testing.T) {
	f := newFixture(t)
	site := filepath.Join(t.TempDir(), "site")
	out, code := run(t, "render", f.root, "--out", site, "--data-dir="+f.dataDir)
	if code != 0 || !strings.Contains(out, "verified: every check holds") {
		t.Fatalf("render: exit %d\n%s", code, out)
	}
	for _, p := range []string{"index.html", "w1-watchlist-mobile/index.html", "w2-watchlist-header/index.html",
		"w2-watchlist-header/attempt-3/try-1/bundle.json"} {
		if _, err := os.Stat(filepath.Join(site, p)); err != nil {
			t.Errorf("site lacks %s", p)
		}
	}
	page, _ := os.ReadFile(filepath.Join(site, "w2-watchlist-header", "index.html"))
	if !strings.Contains(string(page), "scrollWidth = 927, innerWidth = 390") {
		t.Error("W2 page does not name the observed values")
	}
	// Without keys the site still renders, headed unverified, and the command exits 1.
	s2 := filepath.Join(t.TempDir(), "s2")
	out, code = run(t, "render", f.w1.Dirs[0], "--out", s2, "--data-dir="+t.TempDir())
	if code != 1 || !strings.Contains(out, "NOT VERIFIED: no verifier and control public keys") {
		t.Errorf("render without keys: exit %d\n%s", code, out)
	}
	if page, err := os.ReadFile(filepath.Join(s2, "w1-watchlist-mobile", "index.html")); err != nil || !strings.Contains(string(page), `id="unverified"`) {
		t.Errorf("the page rendered without keys is not headed unverified (%v)", err)
	}
	if out, code := run(t, "render", f.root, "--out", filepath.Join(f.root, "site")); code != 2 {
		t.Errorf("--out inside the store: exit %d\n%s", code, out)
	}
	if out, code := run(t, "render", f.root); code != 2 {
		t.Errorf("no --out: exit %d\n%s", code, out)
	}
}

func TestServeCommand(t *testing.T) {
	f := newFixture(t)
	ios, out, _ := iostreams.Test()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	o := &proof.ServeOptions{IO: ios, Dir: f.w2.ContractDir, Addr: "127.0.0.1:0", Keys: proof.Keys{DataDir: f.dataDir},
		Ready: func(u string) { ready <- u }}
	go func() { done <- proof.RunServe(ctx, o) }()
	var base string
	select {
	case base = <-ready:
	case err := <-done:
		t.Fatalf("serve ended: %v\n%s", err, out.String())
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not start")
	}
	resp, err := http.Get(base + "w2-watchlist-header/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "checks hold") {
		t.Errorf("page: %d", resp.StatusCode)
	}
	// Only the contract asked for is served.
	if resp, err := http.Get(base + "w1-watchlist-mobile/"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != 404 {
			t.Errorf("a contract outside PROOF_DIR is served: %d", resp.StatusCode)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}

	if out, code := run(t, "serve", f.root, "--addr", "0.0.0.0:0"); code != 2 {
		t.Errorf("non-loopback --addr: exit %d\n%s", code, out)
	}
}
