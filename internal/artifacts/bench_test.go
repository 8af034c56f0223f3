package artifacts

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/signoff/signoff/internal/artifacts/weedtest"
)

// attemptArtifact is one file a verification attempt leaves, at a representative size.
type attemptArtifact struct {
	name string
	size int
}

var attemptArtifacts = []attemptArtifact{
	{"evidence.json", 200 << 10},
	{"shot-1.png", 300 << 10},
	{"shot-2.png", 300 << 10},
	{"shot-3.png", 300 << 10},
	{"trace.zip", 2 << 20},
}

// BenchmarkStoreOverhead stores one attempt's artifacts (put, link, then read back and
// verify each) through file:// and through SeaweedFS's s3:// on loopback, and reports the
// time per attempt of each and their ratio: what moving artifacts off the local disk costs
// before any network distance is added. Figures, not assertions.
func BenchmarkStoreOverhead(b *testing.B) {
	w := weedtest.Start(b)
	stores := []struct {
		label string
		store Store
		spent time.Duration
	}{
		{label: "file", store: openBench(b, "file://"+b.TempDir())},
		{label: "s3", store: openBench(b, w.NewBucket(b))},
	}
	contents := make([][]byte, len(attemptArtifacts))
	attempts := 0
	for b.Loop() {
		// Fresh random bytes each attempt (compressed PNGs and zips look random), so every put
		// is a real write rather than an idempotent no-op.
		b.StopTimer()
		rng := rand.NewChaCha8([32]byte{byte(attempts), byte(attempts >> 8)})
		for i, a := range attemptArtifacts {
			contents[i] = make([]byte, a.size)
			_, _ = rng.Read(contents[i])
		}
		b.StartTimer()
		attempts++
		for k := range stores {
			// Alternate which store goes first, so neither always meets a warmer page cache.
			s := &stores[(k+attempts)%len(stores)]
			start := time.Now()
			storeAttempt(b, s.store, attempts, contents)
			s.spent += time.Since(start)
		}
	}
	perAttempt := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(attempts) }
	file, s3 := perAttempt(stores[0].spent), perAttempt(stores[1].spent)
	b.ReportMetric(file, "file-ms/attempt")
	b.ReportMetric(s3, "s3-ms/attempt")
	b.ReportMetric(s3/file, "s3/file")
}

func storeAttempt(b *testing.B, s Store, attempt int, contents [][]byte) {
	ctx := b.Context()
	for i, a := range attemptArtifacts {
		d, err := s.Put(ctx, bytes.NewReader(contents[i]))
		if err != nil {
			b.Fatalf("put %s: %v", a.name, err)
		}
		name := fmt.Sprintf("proofs/bench/attempt-%d/try-1/%s", attempt, a.name)
		if err := s.Link(ctx, name, d); err != nil {
			b.Fatalf("link %s: %v", name, err)
		}
		r, err := s.Get(ctx, d)
		if err != nil {
			b.Fatalf("get %s: %v", name, err)
		}
		n, err := io.Copy(io.Discard, r)
		_ = r.Close()
		if err != nil || n != int64(a.size) {
			b.Fatalf("read back %s: %d bytes, %v", name, n, err)
		}
	}
}

func openBench(b *testing.B, loc string) Store {
	s, err := Open(b.Context(), loc)
	if err != nil {
		b.Fatalf("open %s: %v", loc, err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}
