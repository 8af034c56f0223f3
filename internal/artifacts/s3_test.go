package artifacts

// The s3:// tests run against a real SeaweedFS (Apache-2.0) that each test starts on loopback,
// on free ports, in its own temporary directory, and kills by PID when it ends. The binary is
// installed by `go tool task s3:setup` into .bin/weed.

import (
	"strings"
	"testing"

	"github.com/signoff/signoff/internal/artifacts/weedtest"
)

func TestS3Store(t *testing.T) {
	if testing.Short() {
		t.Skip("SeaweedFS-backed store tests skipped in -short mode; run `" + weedtest.Setup + "`, then run without -short")
	}
	w := weedtest.Start(t)
	runStoreCases(t, func(t *testing.T) string { return w.NewBucket(t) })
}

// TestS3Open covers what only a server can answer: a bucket that does not exist and a secret
// it does not know are refused at Open, not at the first artifact; and stores opened with
// different prefix= values on one bucket do not see each other's names or blobs.
func TestS3Open(t *testing.T) {
	if testing.Short() {
		t.Skip("SeaweedFS-backed store tests skipped in -short mode")
	}
	w := weedtest.Start(t)
	if s, err := Open(t.Context(), w.BucketURL("no-such-bucket")); err == nil {
		_ = s.Close()
		t.Fatal("open of a missing bucket succeeded")
	} else if !strings.Contains(err.Error(), `bucket "no-such-bucket" not reachable`) {
		t.Fatalf("open of a missing bucket: %v", err)
	}

	loc := w.NewBucket(t)
	a, b := open(t, loc+"&prefix=a/"), open(t, loc+"&prefix=b/")
	d := put(t, a, []byte("only in a"))
	link(t, a, "proofs/c1/evidence.json", d)
	if ok, err := b.Has(t.Context(), d); err != nil || ok {
		t.Fatalf("store b has a's blob: %v, %v", ok, err)
	}
	if entries, err := b.List(t.Context(), ""); err != nil || len(entries) != 0 {
		t.Fatalf("store b lists %v, %v; want nothing", entries, err)
	}
	if entries, err := a.List(t.Context(), ""); err != nil || len(entries) != 1 {
		t.Fatalf("store a lists %v, %v; want its one name", entries, err)
	}

	t.Setenv("AWS_SECRET_ACCESS_KEY", "wrong-secret")
	if s, err := Open(t.Context(), loc); err == nil {
		_ = s.Close()
		t.Fatal("open with a wrong secret key succeeded")
	}
}
