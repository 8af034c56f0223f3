package preview

import (
	"context"
	"testing"
	"time"

	"github.com/signoff/signoff/internal/sandbox"
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
