//go:build unix

package executor_test

import (
	"context"
	"testing"
	"time"

	"github.com/signoff/signoff/internal/sandbox"
)

// BenchmarkSandboxCostPerAttempt makes the same attempt (clone, a CLI that edits two files,
// packaging, import and commit) in the sandbox and unsandboxed, alternating, and reports
// each one's time and their ratio: the sandbox's cost per attempt.
func BenchmarkSandboxCostPerAttempt(b *testing.B) {
	off, err := sandbox.New(sandbox.Config{Off: true})
	if err != nil {
		b.Fatal(err)
	}
	const rounds = 5
	var boxed, bare time.Duration
	for range b.N {
		for i := range rounds {
			for _, mode := range []string{"sandbox", "off"} {
				e := newCmdEnv(b, "/bin/sh", script("edit.sh"), "{prompt_file}")
				if mode == "off" {
					e.exec.Sandbox = off
				}
				began := time.Now()
				res, err := e.exec.Run(context.Background(), e.request(1+i))
				if err != nil || res.Empty {
					b.Fatalf("%s: %+v %v", mode, res, err)
				}
				if mode == "off" {
					bare += time.Since(began)
				} else {
					boxed += time.Since(began)
				}
			}
		}
	}
	n := float64(b.N * rounds)
	b.ReportMetric(float64(boxed.Milliseconds())/n, "ms/attempt-sandboxed")
	b.ReportMetric(float64(bare.Milliseconds())/n, "ms/attempt-unsandboxed")
	b.ReportMetric(float64(boxed)/float64(bare), "sandbox/unsandboxed")
}
