package verify

import (
	"runtime"
	"time"

	"github.com/signoff/signoff/internal/hostload"
)

// DefaultRealTimeFactor: a criterion's max_runtime_ms is the page's own time at each viewport
// (its clock runs virtually); the real time the browser gets for it, page loads and settling
// included, is this many times that per viewport on a host with a CPU to spare.
const DefaultRealTimeFactor = 2

// maxLoadStretch caps how far a busy host stretches the real-time budget, so a page that
// spins forever still ends in bounded time however loaded the host is. Four was too tight: on
// two cores running three test packages, each building Next.js apps and driving Chromium, a
// base check's pages ran out of real time three times in four minutes.
const maxLoadStretch = 8

// realDeadline is when a criterion that started at start must end in real time: its budget of
// page time at each of its n viewports, times the configured factor, stretched by the host's
// load. A slow or busy machine delays a verdict; it does not make a correct page unmeasurable.
func (c Config) realDeadline(start time.Time, budget time.Duration, n int) (time.Time, float64) {
	f := c.RealTimeFactor
	if f <= 0 {
		f = DefaultRealTimeFactor
	}
	f *= hostLoadStretch(hostload.Path, runtime.NumCPU())
	return start.Add(time.Duration(float64(budget) * f * float64(max(1, n)))), f
}

// hostLoadStretch is the one-minute load average per CPU, between 1 and maxLoadStretch: with
// more runnable tasks than CPUs, every page gets that much less of a CPU in real time. A host
// without the file (not Linux) is taken as idle.
func hostLoadStretch(path string, cpus int) float64 {
	load, ok := hostload.OneMinute(path)
	if !ok || cpus < 1 {
		return 1
	}
	return min(max(load/float64(cpus), 1), maxLoadStretch)
}
