package e2e_test

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/contracts/contractstest"
	"github.com/signoff/signoff/e2e/signoffproc"
	"github.com/signoff/signoff/fixtures/runs"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/policy/policytest"
	"github.com/signoff/signoff/temporal/embedded"
	"github.com/signoff/signoff/temporal/temporaltest"
	"github.com/signoff/signoff/web"
	"github.com/signoff/signoff/workers"
	"github.com/signoff/signoff/workers/devstack"
	"github.com/signoff/signoff/workflows/contractapi"
)

// instant is every client of the activity structs, doing no work, so the benchmark measures
// the workflow and the embedded server: scheduling, history, signals, timers. The activities
// are the product's, started by workers.Start as every process starts them, so none can be
// missing here; a client this lacks fails its activity at once as not configured.
type instant struct {
	contracts sync.Map // contract id -> contracts.Contract
	// deliverer, when set, publishes in place of the instant one.
	deliverer capability.Deliverer
}

func (i *instant) Authorize(ctx context.Context, a capability.AuthorizeRequest) (capability.PaymentState, error) {
	return capability.PaymentState{Provider: "bench", CheckoutSessionID: "cs_" + a.ContractID, State: capability.PaymentAuthorized, PaymentIntentID: "pi"}, nil
}

func (i *instant) Status(ctx context.Context, hash, session string) (capability.PaymentState, error) {
	return capability.PaymentState{State: capability.PaymentAuthorized}, nil
}

func (i *instant) Capture(ctx context.Context, a capability.PaymentAction) (capability.PaymentState, error) {
	return capability.PaymentState{State: capability.PaymentCaptured}, nil
}

func (i *instant) Cancel(ctx context.Context, a capability.PaymentAction) (capability.PaymentState, error) {
	return capability.PaymentState{State: capability.PaymentCanceled}, nil
}

func (i *instant) Publish(ctx context.Context, p capability.PublishRequest) (contracts.PRRef, error) {
	return contracts.PRRef{Branch: p.Branch}, nil
}

func (i *instant) Report(ctx context.Context, b contracts.Bundle, final bool, comment string) (contracts.PRRef, error) {
	return contracts.PRRef{}, nil
}

func (i *instant) Head(ctx context.Context, r capability.HeadRequest) (string, error) { return "", nil }

func (i *instant) WriteBundle(_ context.Context, c contracts.Contract, b contracts.Bundle) (capability.RecordResult, error) {
	return capability.RecordResult{}, nil
}

func (i *instant) WriteSettlement(_ context.Context, s contracts.Settlement) (string, error) {
	return "", nil
}

func (i *instant) Run(ctx context.Context, r capability.ExecRequest) (capability.ExecResult, error) {
	return capability.ExecResult{CommitSHA: fmt.Sprintf("%040d", r.Attempt), Branch: "signoff/b"}, nil
}

func (i *instant) Start(ctx context.Context, r capability.PreviewRequest) (capability.PreviewResult, error) {
	return capability.PreviewResult{PreviewID: "p", URL: "http://127.0.0.1:1", Build: contracts.BuildResult{Passed: true}}, nil
}

func (i *instant) Stop(ctx context.Context, id string) error { return nil }

func (i *instant) Verify(ctx context.Context, r capability.VerifyRequest) (capability.VerifyResult, error) {
	c, _ := i.contracts.Load(r.ContractID)
	ev, err := policytest.Evidence(c.(contracts.Contract), r.ExpectedSHA, policytest.Options{Attempt: r.Attempt})
	return capability.VerifyResult{Evidence: ev}, err
}

// start runs the three queues' workers on c with the instant clients until b ends.
func (i *instant) start(b testing.TB, c client.Client) {
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		b.Fatal(err)
	}
	var d capability.Deliverer = i
	if i.deliverer != nil {
		d = i.deliverer
	}
	stop, err := workers.Start(c, workers.Set{
		Control: &activities.Control{Payments: i, Deliverer: d, Proofs: i, BundleKey: key, Temporal: c},
		Execute: &activities.Execute{Executor: i, Previews: i},
		Verify:  &activities.Verify{Verifier: i},
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(stop)
}

// BenchmarkContracts runs contracts with instant activities on the embedded server, 1 and 20
// in flight, each on a repository of its own, and reports p50/p95 end-to-end latency and
// contracts per minute (go tool task bench). Five times as many contracts as are in flight
// run (twenty at least), so contracts/min is the rate the server keeps up, not one burst's:
// a single batch of twenty measured its own start and its slowest straggler.
func BenchmarkContracts(b *testing.B) {
	srv := temporaltest.StartServer(b)
	c := temporaltest.Dial(b, srv)
	base, err := contracts.Load(contractstest.ReadW1(b), contracts.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	inst := &instant{}
	inst.start(b, c)
	for _, inflight := range []int{1, 20} {
		b.Run(fmt.Sprintf("inflight-%d", inflight), func(b *testing.B) {
			total := max(20, 5*inflight)
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
	wid := contractapi.WorkflowID(id)
	// A wrong verdict must fail fast, not pause for an operator for a day.
	timeouts := contractapi.Timeouts{Operator: time.Second}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: wid, TaskQueue: contractapi.ControlQueue}, contractapi.ContractWorkflowName,
		contractapi.ContractInput{Quote: q, Timeouts: timeouts, Trust: contractapi.Trust{VerifierPublicKey: policytest.VerifierPublicKey(), VerifierDigest: ct.Verifier.Digest}})
	if err != nil {
		return 0, err
	}
	if err := c.SignalWorkflow(ctx, wid, "", contractapi.SignalApprove, contractapi.Approve{Hash: q.Hash, Approver: "bench"}); err != nil {
		return 0, err
	}
	var st contractapi.Status
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
	root := signoffproc.RepoRoot()
	if _, err := os.Stat(filepath.Join(root, ".cache", "finance-deps", "node_modules", "next")); err != nil {
		b.Skip("run go tool task setup first")
	}
	for i := 0; i < b.N; i++ {
		dataDir := b.TempDir()
		runsDir := filepath.Join(root, "fixtures", "runs")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		st, err := devstack.Start(ctx, devstack.Options{DataDir: dataDir, TemporalPort: embedded.AnyPort, RunsDir: runsDir,
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
		final, mm, err := r.Replay(ctx, runs.Env{Client: st.Client, Remotes: st.ControlPlane.Deliverer.Remotes, DataDir: dataDir, Trust: trust,
			Pay: func(ctx context.Context, id string) error {
				_, err := web.CompleteTestCheckout(ctx, st.Client, id)
				return err
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
		b.ReportMetric(phase(contracts.EventAttemptStarted, contracts.EventExecuted), "execute-ms")
		b.ReportMetric(phase(contracts.EventPublished, contracts.EventPreviewBuilt), "build+start-ms")
		b.ReportMetric(phase(contracts.EventVerifying, contracts.EventVerdict), "verify-ms")
		b.ReportMetric(phase(contracts.EventVerdict, contracts.EventPaymentCaptured), "settle-ms")
		b.ReportMetric(phase(contracts.EventQuoted, contracts.EventPaymentCaptured), "total-ms")
	}
}
