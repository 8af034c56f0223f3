package e2e_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/e2e/signoffproc"
	"github.com/signoff/signoff/fixtures/runs"
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/internal/proofstore"
	"github.com/signoff/signoff/internal/proofsync"
	"github.com/signoff/signoff/internal/signing"
	"github.com/signoff/signoff/temporal/embedded"
	"github.com/signoff/signoff/temporal/temporaltest"
	"github.com/signoff/signoff/web"
	"github.com/signoff/signoff/workers"
	"github.com/signoff/signoff/workers/devstack"
	"github.com/signoff/signoff/workflows/contractapi"
)

// TestPreparedRuns replays every prepared run once, for real: the embedded server, the
// prepared executor on git, a Next.js build per attempt in one reused slot, real Chromium,
// the policy and the local payment. Each run must reproduce run.json; every proof folder
// must verify offline; the proof pages of W1 and W2 must show their verdicts.
func TestPreparedRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the fixture app and drives Chromium for every prepared run")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	dataDir := t.TempDir()
	st, env := preparedStack(ctx, t, dataDir)
	defer st.Close()
	runsDir := filepath.Join(signoffproc.RepoRoot(), "fixtures", "runs")
	vk, _ := signing.LoadPublic(filepath.Join(dataDir, "keys", datadir.VerifierKeyFile))
	ck, _ := signing.LoadPublic(filepath.Join(dataDir, "keys", datadir.ControlKeyFile))

	for _, name := range []string{"W1", "W2", "W3", "W4", "W5", "P1", "P2"} {
		r, err := runs.Load(runsDir, name)
		if err != nil {
			t.Fatal(err)
		}
		started := time.Now()
		final, mismatches, err := r.Replay(ctx, env)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Logf("%s: %d attempt record(s), %s, in %s", name, len(final.Attempts), final.State, time.Since(started).Round(time.Second))
		if len(mismatches) > 0 {
			t.Errorf("%s does not reproduce run.json: %v", name, mismatches)
		}
		rep, err := proofstore.VerifyContract(st.Config.Layout().Proofs, r.Contract.ContractID, vk, ck)
		if err != nil || !rep.OK {
			t.Errorf("%s: proof does not verify offline: %v %+v", name, err, rep)
		}
		// The payment's end is signed beside the attempts, and settles on the last one.
		settled := false
		for _, ch := range rep.Checks {
			settled = settled || (ch.Name == proofstore.CheckSettlementSig && ch.OK)
		}
		if !settled {
			t.Errorf("%s: no verified settlement.json: %+v", name, rep.Checks)
		}
		temporaltest.RecordHistory(t, st.Client, contractapi.WorkflowID(r.Contract.ContractID), strings.ToLower(name))
		if name == "W1" || name == "W2" {
			// Recorded again once the workflow signed settlements (version "signed-settlement"),
			// so the replay test covers both sides of that version.
			temporaltest.RecordHistory(t, st.Client, contractapi.WorkflowID(r.Contract.ContractID), strings.ToLower(name)+"-settled")
		}
		switch name {
		case "W1":
			// The one-machine default keeps the proof in the data dir's artifact store as well:
			// the folder `proof get` materialises from it verifies as the local one does.
			got := proofsync.Sync{Store: st.Config.Artifacts, Root: t.TempDir()}
			if _, err := got.FetchContract(ctx, r.Contract.ContractID); err != nil {
				t.Fatalf("W1: proof get from the default store: %v", err)
			}
			if rep, err := proofstore.VerifyContract(got.Root, r.Contract.ContractID, vk, ck); err != nil || !rep.OK {
				t.Errorf("W1: the proof got from the store does not verify: %v %+v", err, rep)
			}
			url := st.LoopbackURL + "/proofs/" + r.Contract.ContractID + "/"
			get(t, url)
			checkProofPageInChromium(t, url, name, []string{"atisfied", "payment captured", "signature and link to the last bundle verified"}, len(r.Contract.Criteria))
		case "W2":
			url := st.LoopbackURL + "/proofs/" + r.Contract.ContractID + "/"
			get(t, url)
			page := get(t, url)
			checkProofPageInChromium(t, url, name, []string{"ot satisfied", "927", "390", "mobile-no-overflow"}, 3*len(r.Contract.Criteria))
			checkFirstScreenInChromium(t, url, "Not satisfied on attempt 3 of 3 (commit ", "4 of 6 criteria passed; criterion 3 (mobile-no-overflow) at 390x844: scrollWidth = 927, innerWidth = 390")
			// The build logs and the local remote are named, never by the worker's paths.
			if strings.Contains(page, dataDir) || strings.Contains(page, os.TempDir()+"/signoff-previews") {
				t.Errorf("W2 proof page shows a path of the worker")
			}
		}
	}
}

// fixtureStack starts the whole stack on the embedded server for the fixture's prepared runs,
// with the execute queue buildExecute makes and the real verifier. The caller closes it.
// preparedStack is the one-machine default with the prepared executor and real previews of
// the fixture (faults armed per run), and the replay environment for its prepared runs.
func preparedStack(ctx context.Context, t *testing.T, dataDir string) (*devstack.Stack, runs.Env) {
	t.Helper()
	root := signoffproc.RepoRoot()
	faults := &runs.FaultPlan{}
	st := fixtureStack(ctx, t, dataDir, func(cfg workers.Config) (*activities.Execute, error) {
		return workers.NewExecute(cfg, workers.ExecuteOptions{Executor: workers.NewPreparedExecutor(cfg), Preview: workers.PreviewNext,
			SharedDeps: filepath.Join(root, ".cache", "finance-deps"), WrapPreviews: faults.Decorator()})
	})
	trust, err := workers.ReadTrust(dataDir)
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	return st, runs.Env{Client: st.Client, Remotes: st.ControlPlane.Deliverer.Remotes, DataDir: dataDir, Trust: trust, Faults: faults,
		Pay: func(ctx context.Context, id string) error {
			_, err := web.CompleteTestCheckout(ctx, st.Client, id)
			return err
		}}
}

func fixtureStack(ctx context.Context, t *testing.T, dataDir string, buildExecute func(workers.Config) (*activities.Execute, error)) *devstack.Stack {
	t.Helper()
	root := signoffproc.RepoRoot()
	signoffproc.RequireSetup(t, filepath.Join(root, ".cache", "finance-deps", "node_modules", "next"), "go tool task fixture:setup")
	signoffproc.RequireSetup(t, filepath.Join(root, ".cache", "pw-driver", "1.64.1", "package", "cli.js"), "go tool task browser:setup")
	st, err := devstack.Start(ctx, devstack.Options{
		DataDir: dataDir, TemporalPort: embedded.AnyPort, RunsDir: filepath.Join(root, "fixtures", "runs"), Allow: []string{"signoff-fixtures/*"},
		Control: true, Execute: true, Verify: true, BuildExecute: buildExecute,
		BuildVerify: func(cfg workers.Config) (*activities.Verify, func(), error) { return workers.NewVerify(cfg, nil) },
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d\n%s", url, resp.StatusCode, b)
	}
	return string(b)
}
