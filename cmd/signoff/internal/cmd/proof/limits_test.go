package proof_test

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signoff/signoff/cmd/signoff/internal/cmd/proof"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/contracts/contractstest"
	"github.com/signoff/signoff/internal/proofstore"
	"github.com/signoff/signoff/internal/proofstore/prooftest"
)

// proof verify on a folder whose evidence.json is a 600 KB nesting bomb: exit 1 with the
// limit named, not a crash.
func TestVerifyCommandRefusesAnEvidenceBomb(t *testing.T) {
	f := newFixture(t)
	if err := os.WriteFile(filepath.Join(f.w1.Dirs[0], proofstore.EvidenceFile), contractstest.DepthBomb(600<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := run(t, "verify", f.w1.Dirs[0], "--data-dir="+f.dataDir)
	if code != 1 || !strings.Contains(out, "nesting deeper than the limit of 128 levels") {
		t.Fatalf("exit %d, want 1 naming the depth limit\n%s", code, out)
	}
}

// proof verify on a folder holding a symlink out of it (to a copy of the very file it
// replaces, so following it would verify): exit 1, naming the link.
func TestVerifyCommandRefusesASymlinkOut(t *testing.T) {
	f := newFixture(t)
	dir := f.w1.Dirs[0]
	outside := filepath.Join(t.TempDir(), proofstore.ContractFile)
	if err := os.Rename(filepath.Join(dir, proofstore.ContractFile), outside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, proofstore.ContractFile)); err != nil {
		t.Fatal(err)
	}
	out, code := run(t, "verify", dir, "--data-dir="+f.dataDir)
	if code != 1 || !strings.Contains(out, "FAILED "+proofstore.CheckSymlinks) {
		t.Fatalf("exit %d, want 1 with a failed %s check\n%s", code, proofstore.CheckSymlinks, out)
	}
}

// proof serve on a store root: a foreign Host gets 421, the listener's own address works, and
// a contract folder that is a symlink out of the store is refused.
func TestServeCommandChecksHostAndSymlinks(t *testing.T) {
	f := newFixture(t)
	other := t.TempDir()
	c := prooftest.W1(t)
	c.ContractID = "w9-elsewhere"
	p := prooftest.Build(t, other, prooftest.Spec{Contract: c, Attempts: []prooftest.Attempt{{}}})
	if err := os.Symlink(p.ContractDir, filepath.Join(f.root, "w9-elsewhere")); err != nil {
		t.Fatal(err)
	}
	ios, out, _ := iostreams.Test()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan string, 1)
	done := make(chan error, 1)
	o := &proof.ServeOptions{IO: ios, Dir: f.root, Addr: "127.0.0.1:0", Keys: proof.Keys{DataDir: f.dataDir},
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
	u, _ := url.Parse(base)
	get := func(path, host string) int {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get("w2-watchlist-header/", "evil.example:"+u.Port()); code != http.StatusMisdirectedRequest {
		t.Errorf("foreign Host: %d, want 421", code)
	}
	if code := get("w2-watchlist-header/", ""); code != http.StatusOK {
		t.Errorf("own address: %d, want 200", code)
	}
	if code := get("w2-watchlist-header/", "localhost:"+u.Port()); code != http.StatusOK {
		t.Errorf("localhost: %d, want 200", code)
	}
	if code := get("w9-elsewhere/", ""); code != http.StatusForbidden {
		t.Errorf("symlinked contract folder: %d, want 403", code)
	}
	cancel()
	<-done
}
