package e2e_test

import (
	"context"
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/fixtures/runs"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/payment/localstripe"
	"github.com/signoff/signoff/internal/staticpreview"
	"github.com/signoff/signoff/temporal/temporaltest"
	"github.com/signoff/signoff/web"
	"github.com/signoff/signoff/workers"
)

// wiring is the three queues' workers in this process, wired as the product wires them: the
// control queue's services opened by workers.OpenServices (without STRIPE_SECRET_KEY, the
// local Stripe test double), the prepared executor, a static preview and the test's verifier.
type wiring struct {
	Config   workers.Config
	Local    *workers.ControlPlane
	Services *workers.Services
	client   client.Client
}

// wiringOptions adjust startWiring.
type wiringOptions struct {
	// RunsDir holds the prepared runs; "" is e2e/testdata/runs.
	RunsDir string
	// Services say how to open the control queue's services (as `signoff worker` does, with
	// nothing from the environment unless Getenv is set).
	Services workers.ServiceOptions
}

// startWiring starts the workers on c with a new data dir, verifying with v. Everything it
// starts is stopped when the test ends.
func startWiring(t *testing.T, c client.Client, v capability.Verifier, o wiringOptions) *wiring {
	t.Helper()
	requireStripeMock(t)
	if o.RunsDir == "" {
		o.RunsDir = testRunsDir()
	}
	cfg := workers.Config{DataDir: t.TempDir(), RunsDir: o.RunsDir, Allow: []string{"signoff-fixtures/*"}}
	svc, err := workers.OpenServices(temporaltest.Context(t), cfg, o.Services)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	local := workers.NewControlPlane(cfg)
	svc.Apply(local)
	control, err := workers.NewControl(cfg, c, local, nil)
	if err != nil {
		t.Fatal(err)
	}
	execute := &activities.Execute{Executor: workers.NewPreparedExecutor(cfg),
		Previews: &staticpreview.Previews{Remotes: local.Deliverer.Remotes, JobsDir: filepath.Join(cfg.DataDir, "jobs")}}
	stop, err := workers.Start(c, workers.Set{Control: control, Execute: execute, Verify: &activities.Verify{Verifier: v}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop) // before the services close: cleanups run last first
	return &wiring{Config: cfg, Local: local, Services: svc, client: c}
}

// Pay completes a contract's checkout on the local Stripe test double, as the payer would.
func (w *wiring) Pay(ctx context.Context, contractID string) error {
	_, err := web.CompleteTestCheckout(ctx, w.client, contractID)
	return err
}

// Env is what a prepared run c replays against on these workers, with fastTimeouts.
func (w *wiring) Env(c contracts.Contract) runs.Env {
	return runs.Env{Client: w.client, Remotes: w.Local.Deliverer.Remotes, DataDir: w.Config.DataDir, Trust: testTrust(c),
		Timeouts: fastTimeouts, Pay: w.Pay}
}

// requireStripeMock fails a test that needs stripe-mock (the local Stripe test double
// forwards every request to it) when it is not installed, saying how to install it; in
// -short mode the test is skipped instead.
func requireStripeMock(t *testing.T) {
	t.Helper()
	if _, err := localstripe.FindStripeMock(""); err != nil {
		if testing.Short() {
			t.Skipf("skipping in -short mode: %v", err)
		}
		t.Fatalf("this test needs stripe-mock: %v", err)
	}
}
