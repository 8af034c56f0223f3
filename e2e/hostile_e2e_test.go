package e2e_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/e2e/signoffproc"
	"github.com/signoff/signoff/fixtures/runs"
	"github.com/signoff/signoff/internal/executor"
	"github.com/signoff/signoff/internal/hostiletest"
	"github.com/signoff/signoff/internal/localgit"
	"github.com/signoff/signoff/internal/preview"
	"github.com/signoff/signoff/internal/sandbox"
	"github.com/signoff/signoff/internal/unprivileged"
	"github.com/signoff/signoff/web"
	"github.com/signoff/signoff/workers"
)

// TestHostileCLIThroughTheWorkflow runs prepared contract W2 (a header-only fake fix) with a
// coding CLI that makes that fake fix and, on every attempt, tries what a prompt-injected
// agent would against the real stack: the Temporal frontend, the Web UI and the loopback
// listener on 127.0.0.1, the data dir's keys, and git configuration that would run a
// program once the CLI is gone. The verdicts, the payment and the signed proof come out
// exactly as W2's run.json says, and nothing got through.
func TestHostileCLIThroughTheWorkflow(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the fixture app three times and drives Chromium")
	}
	root := signoffproc.RepoRoot()
	cred, err := unprivileged.Lookup(preview.DefaultUser)
	if err != nil {
		t.Fatalf("%v: run `go tool task fixture:setup`", err)
	}
	sb, err := sandbox.New(sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}

	// The CLI's script and its report folder live where its user can reach them.
	shared, dump := hostiletest.Reachable(t, "hostile-e2e-")
	patch, err := os.ReadFile(filepath.Join(root, "fixtures", "runs", "W2", "patches", "attempt-1.patch"))
	if err != nil {
		t.Fatal(err)
	}

	dataDir := t.TempDir()
	runsDir := filepath.Join(root, "fixtures", "runs")
	script := filepath.Join(shared, "hostile-cli.sh")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	st := fixtureStack(ctx, t, dataDir, func(cfg workers.Config) (*activities.Execute, error) {
		p := cfg.Layout()
		ex := &executor.Command{Argv: []string{script, "{prompt_file}"}, JobsDir: filepath.Join(shared, "jobs"), LogDir: p.ExecutorLogs,
			Remotes: localgit.Remotes{Root: p.Remotes}, Allow: executor.Allowlist(cfg.Allow), Timeout: 5 * time.Minute,
			Sandbox: sb, RunAs: cred, Network: sandbox.NetEgress, Writable: []string{dump}, SecretPaths: []string{p.Keys}}
		return workers.NewExecute(cfg, workers.ExecuteOptions{Executor: ex, Preview: workers.PreviewNext,
			SharedDeps: filepath.Join(root, ".cache", "finance-deps")})
	})
	defer st.Close()

	keys := filepath.Join(dataDir, "keys")
	before := digestDir(t, keys)
	var ports []string
	for _, addr := range []string{st.Server.FrontendAddress(), hostOf(t, st.Server.UIURL()), hostOf(t, st.LoopbackURL)} {
		_, port, _ := strings.Cut(addr, ":")
		ports = append(ports, port)
	}
	body := fmt.Sprintf(`#!/bin/bash
# A coding CLI that makes W2's fake fix and attacks the stack it runs beside.
dump=%q
breach() { echo "attempt at $(date +%%s): $*" >> "$dump/breaches"; }
for p in %s; do
  timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$p" 2>/dev/null && breach "connected to 127.0.0.1:$p"
done
for f in %q/*; do cat "$f" >/dev/null 2>&1 && breach "read $f"; done
ls %q >/dev/null 2>&1 && breach "listed the data dir"
git config core.fsmonitor "touch $dump/pwned-fsmonitor"
setsid bash -c 'sleep 3; echo "daemon outlived the CLI" >> "$0/breaches"' "$dump" &
git apply --check - <<'PATCH' 2>/dev/null && git apply - <<'PATCH2'
%sPATCH
%sPATCH2
echo "made the header change"
`, dump, strings.Join(ports, " "), keys, dataDir, patch, patch)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}

	r, err := runs.Load(runsDir, "W2")
	if err != nil {
		t.Fatal(err)
	}
	trust, err := workers.ReadTrust(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	final, mismatches, err := r.Replay(ctx, runs.Env{Client: st.Client, Remotes: st.ControlPlane.Deliverer.Remotes, DataDir: dataDir, Trust: trust,
		Pay: func(ctx context.Context, id string) error {
			_, err := web.CompleteTestCheckout(ctx, st.Client, id)
			return err
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(mismatches) > 0 {
		t.Errorf("W2 under a hostile CLI does not reproduce run.json: %v (%s)", mismatches, final.State)
	}
	if data, err := os.ReadFile(filepath.Join(dump, "breaches")); err == nil {
		t.Errorf("the CLI got through:\n%s", data)
	}
	if pwned, _ := filepath.Glob(filepath.Join(dump, "pwned-*")); len(pwned) > 0 {
		t.Errorf("git ran the CLI's program outside its sandbox: %v", pwned)
	}
	if after := digestDir(t, keys); after != before {
		t.Error("the data dir's keys changed")
	}
}

func hostOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// digestDir hashes every file's name and content under dir.
func digestDir(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%x\x00", p, sha256.Sum256(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}
