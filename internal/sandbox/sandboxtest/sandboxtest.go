// Package sandboxtest gives a test binary one real sandbox: making one probes it with a real
// run, so every test of a package shares the first.
package sandboxtest

import (
	"sync"
	"testing"

	"github.com/signoff/signoff/internal/sandbox"
)

var (
	once   sync.Once
	runner *sandbox.Runner
	err    error
)

// Runner is the test binary's sandbox; without namespaces the test fails with the reason,
// which names the setup task that installs what is missing.
func Runner(t testing.TB) *sandbox.Runner {
	t.Helper()
	once.Do(func() { runner, err = sandbox.New(sandbox.Config{}) })
	if err != nil {
		t.Fatal(err)
	}
	return runner
}
