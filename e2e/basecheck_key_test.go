package e2e_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"go.temporal.io/sdk/worker"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/authoring/basecheck"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/e2e/signoffproc"
	"github.com/signoff/signoff/fixtures/runs"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/temporal/temporaltest"
	"github.com/signoff/signoff/workers"
	"github.com/signoff/signoff/workflows/contractapi"
)

// countingPreview stands in for the execute queue's previews: every base check builds once, and the
// build fails (so no verify queue is needed); it counts the builds.
type countingPreview struct {
	mu     sync.Mutex
	builds int
}

func (p *countingPreview) Start(_ context.Context, r capability.PreviewRequest) (capability.PreviewResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.builds++
	return capability.PreviewResult{PreviewID: "p", Build: contracts.BuildResult{Passed: false,
		Steps: []contracts.BuildStep{{Name: "build", Log: "exit 1"}}}}, nil
}

func (p *countingPreview) Stop(context.Context, string) error { return nil }

func (p *countingPreview) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.builds
}

// A keyed base check (a quote drafted again after a restart) joins the check it started,
// running or finished, instead of building again; another key, or none, builds anew.
func TestKeyedBaseCheckRunsOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the embedded Temporal server: not in the unit tier")
	}
	srv := temporaltest.StartServer(t)
	c := temporaltest.Dial(t, srv)
	temporaltest.StartWorker(t, c, contractapi.ControlQueue, func(r worker.Registry) {
		workers.RegisterControl(r, &activities.Control{})
	})
	prev := &countingPreview{}
	temporaltest.StartWorker(t, c, contractapi.ExecuteQueue, func(r worker.Registry) {
		workers.RegisterExecute(r, &activities.Execute{Previews: prev})
	})
	w1, err := runs.Load(filepath.Join(signoffproc.RepoRoot(), "fixtures", "runs"), "W1")
	if err != nil {
		t.Fatal(err)
	}
	base := &basecheck.Queued{Client: c}
	run := func(name string, key string) {
		t.Helper()
		var err error
		if key == "" {
			_, err = base.CheckBase(temporaltest.Context(t), w1.Contract)
		} else {
			_, err = base.WithKey(key).CheckBase(temporaltest.Context(t), w1.Contract)
		}
		var bf *basecheck.BuildFailedError
		if !errors.As(err, &bf) {
			t.Fatalf("%s: want the base build's failure, got %v", name, err)
		}
	}
	run("first keyed check", "quote-a")
	run("the same key again", "quote-a")
	if n := prev.count(); n != 1 {
		t.Fatalf("the same key built %d times", n)
	}
	run("another key", "quote-b")
	run("no key", "")
	run("no key again", "")
	if n := prev.count(); n != 4 {
		t.Fatalf("builds %d, want 4 (one per key, one per unkeyed check)", n)
	}
}
