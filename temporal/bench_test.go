package temporal_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/contracts/contractstest"
	"github.com/signoff/signoff/fixtures/runs"
	"github.com/signoff/signoff/policy/policytest"
	"github.com/signoff/signoff/temporal"
	"github.com/signoff/signoff/web"
	"github.com/signoff/signoff/workers"
	"github.com/signoff/signoff/workers/devstack"
	"github.com/signoff/signoff/workflows"
)

// instant implements every activity with no work, so the benchmark measures the workflow
// and the embedded server: scheduling, history, signals, timers.
type instant struct {
	c         client.Client
	contracts sync.Map // contract id -> contracts.Contract
}

func (i *instant) register(r worker.Registry) {
	reg := func(fn any, name string) { r.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name}) }
	reg(func(ctx context.Context, a activities.AuthorizeRequest) (activities.PaymentState, error) {
		return activities.PaymentState{Provider: "bench", CheckoutSessionID: "cs_" + a.ContractID, State: activities.PaymentAuthorized, PaymentIntentID: "pi"}, nil
	}, activities.AuthorizePaymentName)
	reg(func(ctx context.Context, h, s string) (activities.PaymentState, error) {
		return activities.PaymentState{State: activities.PaymentAuthorized}, nil
	}, activities.PaymentStatusName)
	reg(func(ctx context.Context, a activities.PaymentAction) (activities.PaymentState, error) {
		return activities.PaymentState{State: activities.PaymentCaptured}, nil
	}, activities.CapturePaymentName)
	reg(func(ctx context.Context, a activities.PaymentAction) (activities.PaymentState, error) {
		return activities.PaymentState{State: activities.PaymentCanceled}, nil
	}, activities.CancelPaymentName)
	reg(func(ctx context.Context, p activities.PublishRequest) (contracts.PRRef, error) {
		return contracts.PRRef{Branch: p.Branch}, nil
	}, activities.PublishName)
	reg(func(ctx context.Context, r activities.RecordRequest) (activities.RecordResult, error) {
		return activities.RecordResult{}, nil
	}, activities.RecordAttemptName)
	reg(func(ctx context.Context, s contracts.Settlement) (string, error) { return "", nil }, activities.RecordSettlementName)
	reg(func(ctx context.Context, r activities.HeadRequest) (string, error) { return "", nil }, activities.PRHeadName)
	reg(func(ctx context.Context, e activities.IndexEntry) error { return nil }, activities.UpdateIndexName)
	reg(func(ctx context.Context, n activities.Notice) error { return nil }, activities.NotifyName)
	control := &activities.Control{Temporal: i.c}
	reg(control.RequestLock, activities.RequestLockName)
	reg(func(ctx context.Context, r activities.ExecRequest) (activities.ExecResult, error) {
		return activities.ExecResult{CommitSHA: fmt.Sprintf("%040d", r.Attempt), Branch: "signoff/b"}, nil
	}, activities.RunExecutorName)
	reg(func(ctx context.Context, r activities.PreviewRequest) (activities.PreviewResult, error) {
		return activities.PreviewResult{PreviewID: "p", URL: "http://127.0.0.1:1", Build: contracts.BuildResult{Passed: true}}, nil
	}, activities.StartPreviewName)
	reg(func(ctx context.Context, id string) error { return nil }, activities.StopPreviewName)
	reg(func(ctx context.Context, r activities.VerifyRequest) (activities.VerifyResult, error) {
		c, _ := i.contracts.Load(r.ContractID)
		ev, err := policytest.Evidence(c.(contracts.Contract), r.ExpectedSHA, policytest.Options{Attempt: r.Attempt})
		return activities.VerifyResult{Evidence: ev}, err
	}, activities.VerifyName)
	reg(func(ctx context.Context, r activities.GateRequest) (contracts.GateResult, error) {
		return contracts.GateResult{Source: "page-errors", Errors: []string{}}, nil
	}, activities.RuntimeGateName)
}

// BenchmarkContracts runs contracts with instant activities on the embedded server, 1 and 20
// in flight on 20 different repositories, and reports p50/p95 end-to-end latency and
// contracts per minute (go tool task bench).
func BenchmarkContracts(b *testing.B) {
	srv := startTestServer(b)
	c := dialTest(b, srv)
	base, err := contracts.Load(contractstest.ReadW1(b), contracts.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	inst := &instant{c: c}
	for _, q := range []string{workflows.ControlQueue, workflows.ExecuteQueue, workflows.VerifyQueue} {
		startTestWorker(b, c, q, func(r worker.Registry) {
			if q == workflows.ControlQueue {
				r.RegisterWorkflowWithOptions(workflows.ContractWorkflow, workflow.RegisterOptions{Name: workflows.ContractWorkflowName})
				r.RegisterWorkflowWithOptions(workflows.RepoLockWorkflow, workflow.RegisterOptions{Name: workflows.RepoLockWorkflowName})
			}
			inst.register(r)
		})
	}
	for _, inflight := range []int{1, 20} {
		b.Run(fmt.Sprintf("inflight-%d", inflight), func(b *testing.B) {
			const total = 20
			var mu sync.Mutex
			var lat []time.Duration
			sem := make(chan struct{}, inflight)
			var wg sync.WaitGroup
			start := time.Now()
			for n := 0; n < total; n++ {
				wg.Add(1)
				sem <- struct{}{}
				go func(n int) {
					defer wg.Done()
					defer func() { <-sem }()
					d, err := runInstant(c, inst, *base, fmt.Sprintf("bench-%d-%d-%d", inflight, n, b.N), fmt.Sprintf("repo%d", n))
					if err != nil {
						b.Error(err)
						return
					}
					mu.Lock()
					lat = append(lat, d)
					mu.Unlock()
				}(n)
			}
			wg.Wait()
			wall := time.Since(start)
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			if len(lat) == 0 {
				return
			}
			b.ReportMetric(float64(lat[len(lat)/2].Milliseconds()), "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*95/100].Milliseconds()), "p95-ms")
			b.ReportMetric(float64(len(lat))/wall.Minutes(), "contracts/min")
		})
	}
}

func runInstant(c client.Client, inst *instant, base contracts.Contract, id, repo string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ct := base
	ct.ContractID = id
	ct.Repo.Name = repo
	inst.contracts.Store(id, ct)
	q, err := contracts.NewQuote(ct, "bench")
	if err != nil {
		return 0, err
	}
	start := time.Now()
	wid := workflows.WorkflowID(id)
	// A wrong verdict must fail fast, not pause for an operator for a day.
	timeouts := workflows.Timeouts{Operator: time.Second}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: wid, TaskQueue: workflows.ControlQueue}, workflows.ContractWorkflowName,
		workflows.ContractInput{Quote: q, Timeouts: timeouts, Trust: workflows.Trust{VerifierPublicKey: policytest.VerifierPublicKey(), VerifierDigest: ct.Verifier.Digest}})
	if err != nil {
		return 0, err
	}
	if err := c.SignalWorkflow(ctx, wid, "", workflows.SignalApprove, workflows.Approve{Hash: q.Hash, Approver: "bench"}); err != nil {
		return 0, err
	}
	var st workflows.Status
	if err := run.Get(ctx, &st); err != nil {
		return 0, err
	}
	if st.Verdict != contracts.Satisfied {
		return 0, fmt.Errorf("%s: verdict %s", id, st.Verdict)
	}
	return time.Since(start), nil
}

// BenchmarkW1Phases runs prepared run W1 for real and reports the wall time of each phase of
// its attempt, read from the workflow's own timeline (go tool task bench).
func BenchmarkW1Phases(b *testing.B) {
	root := repoRoot()
	if _, err := os.Stat(filepath.Join(root, ".cache", "finance-deps", "node_modules", "next")); err != nil {
		b.Skip("run go tool task setup first")
	}
	for i := 0; i < b.N; i++ {
		dataDir := b.TempDir()
		runsDir := filepath.Join(root, "fixtures", "runs")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		st, err := devstack.Start(ctx, devstack.Options{DataDir: dataDir, TemporalPort: temporal.AnyPort, RunsDir: runsDir,
			Allow: []string{"signoff-fixtures/*"}, Control: true, Execute: true, Verify: true,
			BuildExecute: func(cfg workers.Config) (*activities.Execute, error) {
				return workers.NewExecute(cfg, workers.ExecuteOptions{Executor: workers.NewPreparedExecutor(cfg), Preview: workers.PreviewNext,
					SharedDeps: filepath.Join(root, ".cache", "finance-deps")})
			},
			BuildVerify: func(cfg workers.Config) (*activities.Verify, func(), error) { return workers.NewVerify(cfg, nil) },
		})
		if err != nil {
			cancel()
			b.Fatal(err)
		}
		trust, err := workers.ReadTrust(dataDir)
		if err != nil {
			b.Fatal(err)
		}
		r, err := runs.Load(runsDir, "W1")
		if err != nil {
			b.Fatal(err)
		}
		final, mm, err := r.Replay(ctx, runs.Env{Client: st.Client, Remotes: st.Local.Deliverer.Remotes, DataDir: dataDir, Trust: trust,
			Pay: func(ctx context.Context, id string) error {
				return web.AuthorizeLocal(ctx, st.Local.Ledger, st.Client, id)
			}})
		st.Close()
		cancel()
		if err != nil || len(mm) > 0 {
			b.Fatalf("W1: %v %v", err, mm)
		}
		at := map[string]time.Time{}
		for _, ev := range final.Timeline {
			if _, seen := at[ev.Type]; !seen {
				t, _ := time.Parse(time.RFC3339Nano, ev.At)
				at[ev.Type] = t
			}
		}
		phase := func(from, to string) float64 { return float64(at[to].Sub(at[from]).Milliseconds()) }
		b.ReportMetric(phase("attempt_started", "executed"), "execute-ms")
		b.ReportMetric(phase("published", "preview_built"), "build+start-ms")
		b.ReportMetric(phase("verifying", "verdict"), "verify-ms")
		b.ReportMetric(phase("verdict", "payment_captured"), "settle-ms")
		b.ReportMetric(phase("quoted", "payment_captured"), "total-ms")
	}
}
