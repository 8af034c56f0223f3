// Package cpuhog keeps every CPU busy, for tests and benchmarks that must hold under load.
// It is test support: only tests, benchmarks and internal/cpuhog/beside import it.
package cpuhog

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/signoff/signoff/internal/hostload"
)

// Start spins one goroutine per CPU until stop is called (stop may be called more than
// once).
func Start() (stop func()) {
	var done atomic.Bool
	var wg sync.WaitGroup
	for range runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := uint64(1)
			for !done.Load() {
				for range 1 << 16 {
					x = x*6364136223846793005 + 1442695040888963407
				}
			}
			_ = x
		}()
	}
	var once sync.Once
	return func() { once.Do(func() { done.Store(true); wg.Wait() }) }
}

// BusyLoad is the one-minute load per CPU at which a host counts as busy already: twice as
// many runnable tasks as CPUs, as when the test suite runs its long packages side by side
// (three at once measured 5 to 7 per CPU on two cores).
const BusyLoad = 2

// UnlessBusy keeps every CPU busy for a test that must hold under load, unless the host is
// busy already (then a hog only adds time, not load the test lacks). It says which through
// logf and returns the stop function.
func UnlessBusy(logf func(format string, args ...any)) (stop func()) {
	if load, ok := busy(hostload.Path, runtime.NumCPU()); ok {
		logf("the host is busy already (one-minute load %.1f on %d CPUs): no CPU hog", load, runtime.NumCPU())
		return func() {}
	}
	logf("a CPU hog on each of %d CPUs", runtime.NumCPU())
	return Start()
}

// busy reads the one-minute load average at path and says whether it is at least BusyLoad per
// CPU. An unreadable file counts as a quiet host, so the hog runs.
func busy(path string, cpus int) (load float64, ok bool) {
	load, read := hostload.OneMinute(path)
	if !read || cpus < 1 {
		return 0, false
	}
	return load, load >= BusyLoad*float64(cpus)
}
