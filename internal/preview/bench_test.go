package preview

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/signoff/signoff/internal/sandbox"
	"github.com/signoff/signoff/internal/sandbox/sandboxtest"
)

// BenchmarkPreviewSandboxCost prepares and stops the same small app (checkout, deps,
// build, start, the first answer on /__verification) in the sandbox and unsandboxed,
// alternating, and reports each one's time and their ratio.
func BenchmarkPreviewSandboxCost(b *testing.B) {
	off, err := sandbox.New(sandbox.Config{Off: true})
	if err != nil {
		b.Fatal(err)
	}
	root := testRoot(b)
	repo, base := tinyRepo(b, root)
	boxedL := newTinyLauncher(b, root, func(c *Config) { c.JobsRoot += "-sandboxed" })
	bareL := newTinyLauncher(b, root, func(c *Config) { c.JobsRoot += "-unsandboxed"; c.Sandbox = off })
	const rounds = 5
	var boxed, bare time.Duration
	for range b.N {
		for range rounds {
			for _, l := range []*Launcher{boxedL, bareL} {
				began := time.Now()
				job, err := l.Prepare(context.Background(), repo, base, Options{})
				if err != nil {
					b.Fatal(err)
				}
				if err := l.Stop(job); err != nil {
					b.Fatal(err)
				}
				if l == bareL {
					bare += time.Since(began)
				} else {
					boxed += time.Since(began)
				}
			}
		}
	}
	n := float64(b.N * rounds)
	b.ReportMetric(float64(boxed.Milliseconds())/n, "ms/preview-sandboxed")
	b.ReportMetric(float64(bare.Milliseconds())/n, "ms/preview-unsandboxed")
	b.ReportMetric(float64(boxed)/float64(bare), "sandbox/unsandboxed")
}

// BenchmarkReverifyW1 prepares W1's first attempt on the real Next.js fixture in a fresh slot
// (checkout, install from the shared deps, build, start, the first answer), stops it, and
// prepares the same commit again as a re-verification does, reporting both times and the
// re-verification's share of the first (goal: 0.2 or less).
func BenchmarkReverifyW1(b *testing.B) {
	deps := financeDeps(b, moduleRoot(b))
	root := testRoot(b)
	repo, _, w1 := financeW1(b, root)
	l, err := New(Config{Sandbox: sandboxtest.Runner(b), JobsRoot: filepath.Join(root, "jobs"), SharedDeps: deps, RunAs: previewUser(b),
		StepTimeout: 5 * time.Minute, StartTimeout: 2 * time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	var first, again time.Duration
	for i := range b.N {
		opts := Options{Slot: fmt.Sprintf("reverify-%d", i)}
		for n, total := range []*time.Duration{&first, &again} {
			began := time.Now()
			job, err := l.Prepare(context.Background(), repo, w1, opts)
			if err != nil {
				b.Fatal(err)
			}
			*total += time.Since(began)
			if reused := job.ReusedBuild != ""; reused != (n == 1) {
				b.Fatalf("preparation %d reused a build: %v", n+1, reused)
			}
			if err := l.Stop(job); err != nil {
				b.Fatal(err)
			}
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(first.Milliseconds())/n, "ms/first")
	b.ReportMetric(float64(again.Milliseconds())/n, "ms/reverify")
	b.ReportMetric(float64(again)/float64(first), "reverify/first")
}
