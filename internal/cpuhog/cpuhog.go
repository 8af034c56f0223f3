// Package cpuhog keeps every CPU busy, for tests and benchmarks that must hold under load.
package cpuhog

import (
	"runtime"
	"sync"
	"sync/atomic"
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
