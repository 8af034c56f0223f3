package e2e_test

// Contract workflows on the real embedded server with real workers, the local Stripe test
// double (the product's payment services without STRIPE_SECRET_KEY), the prepared executor
// on real git repositories and a static preview; the verify queue is a scripted activity
// registered here (it reads the runtime SHA from the preview like the real verifier, and
// signs evidence with the test verifier key).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/e2e/signoffproc"
	"github.com/signoff/signoff/fixtures/runs"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/internal/signing"
	"github.com/signoff/signoff/policy/policytest"
	"github.com/signoff/signoff/temporal/temporaltest"
	"github.com/signoff/signoff/web"
	"github.com/signoff/signoff/workers"
	"github.com/signoff/signoff/workflows/contractapi"
)

func testRunsDir() string { return filepath.Join(signoffproc.RepoRoot(), "e2e", "testdata", "runs") }

// scriptedVerify stands in for the browser on the verify queue: it asks the preview for its
// runtime SHA, as the real verifier does, and reports the criteria as passing.
type scriptedVerify struct {
	contract contracts.Contract
	mu       sync.Mutex
	calls    int
}

func (s *scriptedVerify) Verify(ctx context.Context, req capability.VerifyRequest) (capability.VerifyResult, error) {
	s.mu.Lock()
	s.calls++
	s.mu.Unlock()
	runtimeSHA := ""
	if resp, err := http.Get(req.PreviewURL + "/__verification"); err == nil {
		var v struct {
			SHA string `json:"commit_sha"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&v)
		resp.Body.Close()
		runtimeSHA = v.SHA
	}
	ev, err := policytest.Evidence(s.contract, req.ExpectedSHA, policytest.Options{Attempt: req.Attempt, RuntimeSHA: runtimeSHA})
	if err != nil {
		return capability.VerifyResult{}, err
	}
	if runtimeSHA == "" {
		ev.RuntimeSHA = ""
		_ = ev.Sign(policytest.VerifierKey)
	}
	return capability.VerifyResult{Evidence: ev, EvidenceDigest: "scripted"}, nil
}

func testTrust(c contracts.Contract) contractapi.Trust {
	return contractapi.Trust{VerifierPublicKey: policytest.VerifierPublicKey(), VerifierDigest: c.Verifier.Digest}
}

// fastTimeouts let a killed worker's activity be retried within seconds.
var fastTimeouts = contractapi.Timeouts{PaymentPoll: 500 * time.Millisecond, ControlActivity: 5 * time.Second, Heartbeat: 3 * time.Second}

func loadRun(t *testing.T, name string) *runs.Run {
	t.Helper()
	r, err := runs.Load(testRunsDir(), name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestContractOnEmbeddedServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the embedded Temporal server: not in the unit tier")
	}
	srv := temporaltest.StartServer(t)
	c := temporaltest.Dial(t, srv)
	r := loadRun(t, "H1")
	w := startWiring(t, c, &scriptedVerify{contract: r.Contract}, wiringOptions{})
	dataDir, local := w.Config.DataDir, w.Local

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, mismatches, err := r.Replay(ctx, w.Env(r.Contract))
	if err != nil {
		t.Fatal(err)
	}
	if len(mismatches) > 0 {
		t.Fatalf("mismatches %v; status %+v", mismatches, st)
	}
	assertCapturedOnce(t, dataDir, r.Contract.ContractID, r.Contract.Price.Amount)
	waitLockReleased(t, c, "signoff-fixtures/finance")

	// The bundle is on disk, signed by the control key, beside the contract it judges.
	dir := st.Attempts[0].ProofDir
	var b contracts.Bundle
	readJSON(t, filepath.Join(dir, "bundle.json"), &b)
	pub, err := signing.LoadPublic(filepath.Join(dataDir, "keys", datadir.ControlKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.VerifySignature(pub); err != nil || b.Verdict != contracts.Satisfied {
		t.Fatalf("bundle: verdict %s signature %v", b.Verdict, err)
	}
	if _, err := contracts.VerifyChain(b.Timeline); err != nil {
		t.Fatal(err)
	}
	var cc contracts.Contract
	readJSON(t, filepath.Join(dir, "contract.json"), &cc)
	if h, _ := contracts.Hash(cc); h != b.ContractHash {
		t.Fatalf("contract.json hashes to %s, bundle says %s", h, b.ContractHash)
	}
	e, ok, err := local.Index.Get(r.Contract.ContractID)
	if err != nil || !ok || e.Verdict != contracts.Satisfied || e.ProofDir != dir {
		t.Fatalf("index entry %+v ok %v err %v", e, ok, err)
	}
	// History holds digests and small values, never artifacts: the whole history is small.
	size := temporaltest.HistorySize(t, c, contractapi.WorkflowID(r.Contract.ContractID))
	if size > 512*1024 {
		t.Fatalf("history is %d bytes", size)
	}
	temporaltest.RecordHistory(t, c, contractapi.WorkflowID(r.Contract.ContractID), "h1-satisfied")
	// The same run with the index updates and notices as local activities (local-bookkeeping).
	temporaltest.RecordHistory(t, c, contractapi.WorkflowID(r.Contract.ContractID), "h2-local-bookkeeping")
	// And with the payment's status and the pull request's head read locally (local-reads).
	temporaltest.RecordHistory(t, c, contractapi.WorkflowID(r.Contract.ContractID), "h3-local-reads")
	// And with the bundle and the settlement written locally (local-records).
	temporaltest.RecordHistory(t, c, contractapi.WorkflowID(r.Contract.ContractID), "h6-local-records")
}

func waitLockReleased(t *testing.T, c client.Client, repo string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		d, err := c.DescribeWorkflowExecution(context.Background(), contractapi.LockWorkflowID(repo), "")
		if err == nil && d.WorkflowExecutionInfo.Status == enums.WORKFLOW_EXECUTION_STATUS_COMPLETED {
			return
		}
		time.Sleep(100 * time.Millisecond) // polling the server for a state, with a deadline
	}
	t.Fatalf("the lock workflow for %s did not complete: the lock was not released", repo)
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// waitFile waits for a file another process writes. It fails as soon as over says the file
// can no longer come (nil: never), or after d, which only catches a hang.
func waitFile(t *testing.T, path string, d time.Duration, what func() string, over func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if over != nil {
			if why := over(); why != "" {
				t.Fatalf("%s will not appear: %s\n%s", filepath.Base(path), why, what())
			}
		}
		time.Sleep(20 * time.Millisecond) // waiting for a file another process writes
	}
	t.Fatalf("%s did not appear within %s\n%s", filepath.Base(path), d, what())
}

// TestWorkerKilledAtEachPhase SIGKILLs the worker that is inside a phase, at a barrier the
// test controls, restarts it, and checks the contract ends the same way with the payment
// captured exactly once, including a kill inside capture after the provider (the local Stripe
// test double) applied it and before the activity completed.
func TestWorkerKilledAtEachPhase(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the signoff binary and runs worker processes")
	}
	requireStripeMock(t) // the control worker opens the local Stripe test double
	points := []struct{ point, queue string }{
		{"RunExecutor:start", "execute"},
		{"StartPreview:start", "execute"},
		{"CapturePayment:applied", "control"},
	}
	for _, pt := range points {
		t.Run(strings.ReplaceAll(pt.point, ":", "_"), func(t *testing.T) {
			srv := temporaltest.StartServer(t)
			c := temporaltest.Dial(t, srv)
			dataDir := t.TempDir()
			admit(t, srv, dataDir)
			barrier := t.TempDir()
			r := loadRun(t, "H1")
			common := []string{"--temporal-address", srv.FrontendAddress(), "--data-dir", dataDir, "--runs-dir", testRunsDir(), "--preview", "static"}
			env := []string{workers.EnvBarrier + "=" + barrier + ":" + pt.point}
			procs := map[string]*signoffproc.Proc{
				"control": signoffproc.Start(t, env, append([]string{"worker", "--queue", "control"}, common...)...),
				"execute": signoffproc.Start(t, env, append([]string{"worker", "--queue", "execute"}, common...)...),
			}
			name := strings.ReplaceAll(pt.point, ":", "_")

			sv := &scriptedVerify{contract: r.Contract}
			stopVerify := temporaltest.StartWorker(t, c, contractapi.VerifyQueue, func(reg worker.Registry) {
				workers.RegisterVerify(reg, &activities.Verify{Verifier: sv})
			})
			defer stopVerify()

			cfg := workers.Config{DataDir: dataDir}
			local := workers.NewControlPlane(cfg)
			// Both deadlines only catch a hang: a loaded machine may be many times slower.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			type result struct {
				st  contractapi.Status
				mm  []string
				err error
			}
			done := make(chan result, 1)
			var ended atomic.Pointer[result]
			go func() {
				st, mm, err := r.Replay(ctx, runs.Env{Client: c, Remotes: local.Deliverer.Remotes, DataDir: dataDir, Trust: testTrust(r.Contract),
					Timeouts: fastTimeouts, Pay: func(ctx context.Context, id string) error {
						_, err := web.CompleteTestCheckout(ctx, c, id)
						return err
					}})
				ended.Store(&result{st, mm, err})
				done <- result{st, mm, err}
			}()
			p := procs[pt.queue]
			waitFile(t, filepath.Join(barrier, name+".reached"), 5*time.Minute, func() string { return p.Output() }, func() string {
				if r := ended.Load(); r != nil {
					return fmt.Sprintf("the run ended first (state %s, mismatches %v, error %v)", r.st.State, r.mm, r.err)
				}
				return ""
			})
			p.Kill()
			if err := os.WriteFile(filepath.Join(barrier, name+".release"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			p.Start()
			res := <-done
			if res.err != nil {
				t.Fatalf("%v\ncontrol:\n%s\nexecute:\n%s", res.err, procs["control"].Output(), procs["execute"].Output())
			}
			if len(res.mm) > 0 {
				t.Fatalf("after a kill at %s: %v", pt.point, res.mm)
			}
			assertCapturedOnce(t, dataDir, r.Contract.ContractID, r.Contract.Price.Amount)
			waitLockReleased(t, c, "signoff-fixtures/finance")
		})
	}
}

// TestDevRestartResumesFromSQLite drives a contract through `signoff dev` with the CLI,
// SIGKILLs the whole dev process while the executor is working, starts it again on the same
// data dir, and sees the contract finish from the history kept in SQLite.
func TestDevRestartResumesFromSQLite(t *testing.T) {
	if testing.Short() {
		t.Skip("runs signoff dev as a process")
	}
	dataDir := t.TempDir()
	barrier := t.TempDir()
	// The contract `contract start` starts waits this long, not the default minute, for the
	// killed worker's executor activity before another worker retries it.
	const heartbeat = 5 * time.Second
	t.Setenv("SIGNOFF_HEARTBEAT_TIMEOUT", heartbeat.String())
	port := signoffproc.FreePort(t)
	addr := "127.0.0.1:" + port
	devArgs := []string{"dev", "--data-dir", dataDir, "--temporal-port", port, "--ui-port", "0", "--loopback", "127.0.0.1:0",
		"--public", "127.0.0.1:0", "--runs-dir", testRunsDir(), "--preview", "static"}
	dev := signoffproc.Start(t, []string{workers.EnvBarrier + "=" + barrier + ":RunExecutor:start"}, devArgs...)
	signoffproc.WaitOutput(t, dev, "Ctrl-C stops.", 60*time.Second)

	conn := []string{"--data-dir", dataDir, "--temporal-address", addr}
	var started struct {
		Hash string `json:"contract_hash"`
	}
	if err := json.Unmarshal([]byte(signoffproc.CLI(t, append([]string{"contract", "start", filepath.Join(testRunsDir(), "H1", "contract.json"),
		"--requester", "alice", "--json"}, conn...)...)), &started); err != nil || len(started.Hash) != 64 {
		t.Fatalf("start: %v %q", err, started.Hash)
	}
	signoffproc.CLI(t, append([]string{"contract", "approve", "h1-static-status", started.Hash, "--as", "alice"}, conn...)...)
	signoffproc.CLI(t, append([]string{"payment", "authorize", "h1-static-status"}, conn...)...)

	waitFile(t, filepath.Join(barrier, "RunExecutor_start.reached"), 5*time.Minute, dev.Output, nil)
	dev.Kill()
	if err := os.WriteFile(filepath.Join(barrier, "RunExecutor_start.release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	dev.Start()
	signoffproc.WaitOutput(t, dev, "Ctrl-C stops.", 60*time.Second)

	if _, err := signoffproc.CLIRun(append([]string{"contract", "watch", "h1-static-status"}, conn...)...); err != nil {
		status, _ := signoffproc.CLIRun(append([]string{"contract", "status", "h1-static-status", "--json"}, conn...)...)
		t.Fatalf("%v\nstatus:\n%s\ndev:\n%s", err, status, dev.Output())
	}
	var st contractapi.Status
	if err := json.Unmarshal([]byte(signoffproc.CLI(t, append([]string{"contract", "status", "h1-static-status", "--json"}, conn...)...)), &st); err != nil {
		t.Fatal(err)
	}
	if st.Verdict != contracts.Satisfied || st.Payment.State != capability.PaymentCaptured || st.Executions < 1 {
		t.Fatalf("after restart: verdict %s payment %s\n%s", st.Verdict, st.Payment.State, dev.Output())
	}
	list := signoffproc.CLI(t, "contract", "list", "--data-dir", dataDir)
	if !strings.Contains(list, "h1-static-status") || !strings.Contains(list, "satisfied") {
		t.Fatalf("contract list:\n%s", list)
	}
	// The executor activity was scheduled with the configured heartbeat timeout, and the
	// attempt that completed it is a retry: the killed worker's went unheard.
	c := signoffproc.DialDev(t, dataDir, addr)
	it := c.GetWorkflowHistory(context.Background(), contractapi.WorkflowID("h1-static-status"), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var execs int
	var scheduled int64
	var attempt int32
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "RunExecutor" {
			execs, scheduled = execs+1, ev.GetEventId()
			if got := a.GetHeartbeatTimeout().AsDuration(); got != heartbeat {
				t.Errorf("RunExecutor scheduled with heartbeat timeout %s, want %s", got, heartbeat)
			}
		}
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil && a.GetScheduledEventId() == scheduled {
			attempt = a.GetAttempt()
		}
	}
	if execs != 1 || attempt < 2 {
		t.Errorf("RunExecutor scheduled %d times, started at attempt %d (want once, retried)", execs, attempt)
	}
}
