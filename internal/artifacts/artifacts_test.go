package artifacts

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"gocloud.dev/blob"
)

// newLocation makes a fresh, empty place for a store and returns its URL: a directory for
// file://, a bucket for s3://. The behavioural cases below run unchanged against each.
type newLocation func(t *testing.T) string

func TestFileStore(t *testing.T) {
	runStoreCases(t, func(t *testing.T) string {
		return (&url.URL{Scheme: "file", Path: t.TempDir()}).String()
	})
}

// runStoreCases is the behaviour every backend must show, asserted the same way for each.
func runStoreCases(t *testing.T, newLoc newLocation) {
	cases := []struct {
		name string
		run  func(t *testing.T, loc string)
	}{
		{"round trip", caseRoundTrip},
		{"re-put stores nothing new", caseIdempotentPut},
		{"corrupted blob is detected", caseCorruption},
		{"names are immutable", caseLinkImmutable},
		{"list order and prefix", caseList},
		{"name validation", caseNameValidation},
		{"size limit", caseSizeLimit},
		{"concurrent puts of the same content", caseConcurrentPuts},
		{"concurrent links of one name", caseConcurrentLinks},
		{"a name is created exactly once", caseCreateOnce},
		{"reopen sees what was stored", caseReopen},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, newLoc(t)) })
	}
}

func open(t *testing.T, loc string, opts ...Option) *bucketStore {
	t.Helper()
	s, err := Open(t.Context(), loc, opts...)
	if err != nil {
		t.Fatalf("open %s: %v", loc, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s.(*bucketStore)
}

func randomBytes(seed uint64, n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func sha256Digest(b []byte) Digest {
	sum := sha256.Sum256(b)
	return Digest("sha256:" + hex.EncodeToString(sum[:]))
}

func put(t *testing.T, s Store, b []byte) Digest {
	t.Helper()
	d, err := s.Put(t.Context(), bytes.NewReader(b))
	if err != nil {
		t.Fatalf("put %d bytes: %v", len(b), err)
	}
	if want := sha256Digest(b); d != want {
		t.Fatalf("put returned %s, want %s", d, want)
	}
	return d
}

func get(t *testing.T, s Store, d Digest) ([]byte, error) {
	t.Helper()
	r, err := s.Get(t.Context(), d)
	if err != nil {
		return nil, err
	}
	defer func() { _ = r.Close() }()
	return io.ReadAll(r)
}

func link(t *testing.T, s Store, name string, d Digest) {
	t.Helper()
	if err := s.Link(t.Context(), name, d); err != nil {
		t.Fatalf("link %q -> %s: %v", name, d, err)
	}
}

// rawKeys lists every object in the backing bucket, temporary files included, so a test sees
// exactly what a Put or Link left behind.
func rawKeys(t *testing.T, s *bucketStore) []string {
	t.Helper()
	var keys []string
	it := s.bucket.List(&blob.ListOptions{})
	for {
		obj, err := it.Next(t.Context())
		if err == io.EOF {
			return keys
		}
		if err != nil {
			t.Fatalf("list raw keys: %v", err)
		}
		keys = append(keys, obj.Key)
	}
}

func caseRoundTrip(t *testing.T, loc string) {
	s := open(t, loc)
	for _, n := range []int{0, 1, 100 << 10} {
		content := randomBytes(uint64(n), n)
		d := put(t, s, content)
		got, err := get(t, s, d)
		if err != nil {
			t.Fatalf("get %s: %v", d, err)
		}
		if !bytes.Equal(got, content) {
			t.Fatalf("get %s returned %d bytes that differ from the %d put", d, len(got), len(content))
		}
		if ok, err := s.Has(t.Context(), d); err != nil || !ok {
			t.Fatalf("has %s = %v, %v; want true", d, ok, err)
		}
	}
	absent := sha256Digest([]byte("never stored"))
	if ok, err := s.Has(t.Context(), absent); err != nil || ok {
		t.Fatalf("has absent = %v, %v; want false", ok, err)
	}
	if _, err := s.Get(t.Context(), absent); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get absent: %v; want ErrNotFound", err)
	}
	for _, bad := range []Digest{"", "sha256:abc", "md5:" + Digest(strings.Repeat("0", 64)), Digest("sha256:" + strings.Repeat("A", 64))} {
		if _, err := s.Get(t.Context(), bad); !errors.Is(err, ErrInvalidDigest) {
			t.Errorf("get %q: %v; want ErrInvalidDigest", bad, err)
		}
		if _, err := s.Has(t.Context(), bad); !errors.Is(err, ErrInvalidDigest) {
			t.Errorf("has %q: %v; want ErrInvalidDigest", bad, err)
		}
	}
}

func caseIdempotentPut(t *testing.T, loc string) {
	s := open(t, loc)
	a := randomBytes(1, 64<<10)
	first := put(t, s, a)
	for range 3 {
		if d := put(t, s, a); d != first {
			t.Fatalf("re-put gave %s, first put %s", d, first)
		}
	}
	if keys := rawKeys(t, s); len(keys) != 1 {
		t.Fatalf("after four puts of the same bytes the bucket holds %d objects, want 1: %v", len(keys), keys)
	}
	put(t, s, randomBytes(2, 64<<10))
	if keys := rawKeys(t, s); len(keys) != 2 {
		t.Fatalf("after a second content the bucket holds %d objects, want 2: %v", len(keys), keys)
	}
}

func caseCorruption(t *testing.T, loc string) {
	s := open(t, loc)
	content := randomBytes(3, 200<<10)
	flipped := bytes.Clone(content)
	flipped[len(flipped)/2] ^= 0x01
	damage := map[string][]byte{
		"one bit flipped": flipped,
		"truncated":       content[:len(content)-1],
		"extended":        append(bytes.Clone(content), 0),
		"emptied":         nil,
	}
	for what, stored := range damage {
		t.Run(what, func(t *testing.T) {
			d := put(t, s, content)
			key, err := blobKey(d)
			if err != nil {
				t.Fatal(err)
			}
			// Damage the object behind the store's back, as a faulty disk or server would.
			if err := s.bucket.WriteAll(t.Context(), key, stored, nil); err != nil {
				t.Fatalf("damage %s: %v", key, err)
			}
			_, err = get(t, s, d)
			if !errors.Is(err, ErrDigestMismatch) {
				t.Fatalf("get of a damaged blob: %v; want ErrDigestMismatch", err)
			}
			if !strings.Contains(err.Error(), string(d)) {
				t.Errorf("error %q does not name the digest", err)
			}
			// Restore, so the next damage starts from a sound blob (Put would see it exists).
			if err := s.bucket.WriteAll(t.Context(), key, content, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func caseLinkImmutable(t *testing.T, loc string) {
	s := open(t, loc)
	ctx := t.Context()
	d1 := put(t, s, []byte(`{"verdict":"pass"}`))
	d2 := put(t, s, []byte(`{"verdict":"fail"}`))
	name := "proofs/invoice-export/attempt-1/try-1/evidence.json"

	if _, err := s.Resolve(ctx, name); !errors.Is(err, ErrNotFound) {
		t.Fatalf("resolve before link: %v; want ErrNotFound", err)
	}
	link(t, s, name, d1)
	link(t, s, name, d1) // a retried activity linking the same content again
	err := s.Link(ctx, name, d2)
	var conflict *ConflictError
	if !errors.As(err, &conflict) {
		t.Fatalf("repoint %q to another digest: %v; want *ConflictError", name, err)
	}
	if conflict.Name != name || conflict.Have != d1 || conflict.Want != d2 {
		t.Fatalf("conflict %+v; want name %q have %s want %s", conflict, name, d1, d2)
	}
	if got, err := s.Resolve(ctx, name); err != nil || got != d1 {
		t.Fatalf("resolve after refused repoint = %s, %v; want %s", got, err, d1)
	}

	missing := sha256Digest([]byte("not in the store"))
	if err := s.Link(ctx, "proofs/invoice-export/attempt-1/try-1/trace.zip", missing); !errors.Is(err, ErrNotFound) {
		t.Fatalf("link to a blob not in the store: %v; want ErrNotFound", err)
	}
	if err := s.Link(ctx, "proofs/x/y", "sha256:nothex"); !errors.Is(err, ErrInvalidDigest) {
		t.Fatalf("link to a malformed digest: %v; want ErrInvalidDigest", err)
	}
	// A name may be a prefix-folder of another: "a" and "a/b" live side by side on every backend.
	link(t, s, "logs/build", d1)
	link(t, s, "logs/build/step-1.log", d2)
	for name, want := range map[string]Digest{"logs/build": d1, "logs/build/step-1.log": d2} {
		if got, err := s.Resolve(ctx, name); err != nil || got != want {
			t.Fatalf("resolve %q = %s, %v; want %s", name, got, err, want)
		}
	}
}

func caseList(t *testing.T, loc string) {
	s := open(t, loc)
	ctx := t.Context()
	names := []string{
		"proofs/c1/attempt-1/try-1/evidence.json",
		"proofs/c1/attempt-1/try-1/shot-01.png",
		"proofs/c1/attempt-1/try-2/evidence.json",
		"proofs/c1/attempt-10/try-1/evidence.json",
		"proofs/c1/settlement.json",
		"proofs/c10/attempt-1/try-1/evidence.json",
		"proofs/c1.txt",
		"proofs/c1-b/x",
		"repos/c1.bundle",
	}
	digests := map[string]Digest{}
	for i, n := range names {
		digests[n] = put(t, s, []byte(n))
		if i%2 == 0 { // some content shared between names
			digests[n] = put(t, s, []byte("shared"))
		}
	}
	shuffled := slices.Clone(names)
	rand.New(rand.NewPCG(7, 7)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for _, n := range shuffled {
		link(t, s, n, digests[n])
	}

	check := func(prefix string, want []string) {
		t.Helper()
		got, err := s.List(ctx, prefix)
		if err != nil {
			t.Fatalf("list %q: %v", prefix, err)
		}
		var gotNames []string
		for _, e := range got {
			gotNames = append(gotNames, e.Name)
			if e.Digest != digests[e.Name] {
				t.Errorf("list %q: %s has digest %s, want %s", prefix, e.Name, e.Digest, digests[e.Name])
			}
		}
		if !slices.Equal(gotNames, want) {
			t.Fatalf("list %q:\n got %q\nwant %q", prefix, gotNames, want)
		}
	}
	all := slices.Clone(names)
	slices.Sort(all)
	check("", all)
	check("proofs/c1/", []string{
		"proofs/c1/attempt-1/try-1/evidence.json",
		"proofs/c1/attempt-1/try-1/shot-01.png",
		"proofs/c1/attempt-1/try-2/evidence.json",
		"proofs/c1/attempt-10/try-1/evidence.json",
		"proofs/c1/settlement.json",
	})
	check("proofs/c1/attempt-1/", []string{
		"proofs/c1/attempt-1/try-1/evidence.json",
		"proofs/c1/attempt-1/try-1/shot-01.png",
		"proofs/c1/attempt-1/try-2/evidence.json",
	})
	// A prefix without a trailing slash is a string prefix, as in S3.
	check("proofs/c1", []string{
		"proofs/c1-b/x",
		"proofs/c1.txt",
		"proofs/c1/attempt-1/try-1/evidence.json",
		"proofs/c1/attempt-1/try-1/shot-01.png",
		"proofs/c1/attempt-1/try-2/evidence.json",
		"proofs/c1/attempt-10/try-1/evidence.json",
		"proofs/c1/settlement.json",
		"proofs/c10/attempt-1/try-1/evidence.json",
	})
	check("proofs/c2/", nil)
	if _, err := s.List(ctx, "proofs/../"); !errors.Is(err, ErrInvalidName) {
		t.Fatalf("list with a '..' prefix: %v; want ErrInvalidName", err)
	}
}

// badNames break one naming rule each.
var badNames = map[string]string{
	"empty":             "",
	"leading slash":     "/proofs/a",
	"trailing slash":    "proofs/a/",
	"empty segment":     "proofs//a",
	"dot-dot":           "proofs/../a",
	"dot":               "proofs/./a",
	"only dot-dot":      "..",
	"space":             "proofs/a b",
	"backslash":         `proofs\a`,
	"control character": "proofs/a\x00",
	"non-ASCII":         "proofs/é",
	"suffix character":  "proofs/a!",
	"too long":          strings.Repeat("a/", MaxNameLen/2) + "a",
	"long segment":      "proofs/" + strings.Repeat("x", maxSegmentLen+1),
}

func caseNameValidation(t *testing.T, loc string) {
	s := open(t, loc)
	ctx := t.Context()
	d := put(t, s, []byte("content"))
	for why, name := range badNames {
		if err := s.Link(ctx, name, d); !errors.Is(err, ErrInvalidName) {
			t.Errorf("link %s (%q): %v; want ErrInvalidName", why, name, err)
		}
		if _, err := s.Resolve(ctx, name); !errors.Is(err, ErrInvalidName) {
			t.Errorf("resolve %s (%q): %v; want ErrInvalidName", why, name, err)
		}
	}
	longest := strings.Repeat(strings.Repeat("x", 99)+"/", 5) + strings.Repeat("y", MaxNameLen-500-1)
	for _, name := range []string{"a", "proofs/c1/attempt-1/try-1/evidence.json", ".hidden/file_name-1.tar.gz", longest} {
		link(t, s, name, d)
		if got, err := s.Resolve(ctx, name); err != nil || got != d {
			t.Fatalf("resolve %q = %s, %v; want %s", name, got, err, d)
		}
	}
	if keys := rawKeys(t, s); len(keys) != 5 {
		t.Fatalf("the bucket holds %d objects, want 1 blob and 4 names: %v", len(keys), keys)
	}
}

func caseSizeLimit(t *testing.T, loc string) {
	const limit = 1000
	s := open(t, loc, WithMaxObjectSize(limit))
	put(t, s, randomBytes(4, limit))
	_, err := s.Put(t.Context(), bytes.NewReader(randomBytes(5, limit+1)))
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "1000 bytes") {
		t.Fatalf("put of %d bytes with a %d limit: %v; want ErrTooLarge naming the limit", limit+1, limit, err)
	}
	if keys := rawKeys(t, s); len(keys) != 1 {
		t.Fatalf("a refused put left objects behind: %v", keys)
	}
	// A store opened with a larger limit wrote this; a small-limit reader refuses to serve it.
	big := randomBytes(6, 4*limit)
	d := put(t, open(t, loc), big)
	if _, err := get(t, s, d); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("get of a %d-byte blob with a %d limit: %v; want ErrTooLarge", len(big), limit, err)
	}
}

// caseConcurrentPuts has several goroutines put one content at once. 9 MiB is past the S3
// transfer manager's 8 MiB part size, so that size goes up as a multipart upload, whose
// If-None-Match rides on the completing request.
func caseConcurrentPuts(t *testing.T, loc string) {
	s := open(t, loc)
	const workers = 8
	for i, size := range []int{1 << 20, 9 << 20} {
		content := randomBytes(uint64(80+i), size)
		want := sha256Digest(content)
		digests := make([]Digest, workers)
		errs := make([]error, workers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				<-start
				digests[w], errs[w] = s.Put(t.Context(), bytes.NewReader(content))
			})
		}
		close(start)
		wg.Wait()
		for w := range workers {
			if errs[w] != nil || digests[w] != want {
				t.Fatalf("%d bytes: put %d: %s, %v; want %s", size, w, digests[w], errs[w], want)
			}
		}
		if keys := rawKeys(t, s); len(keys) != i+1 {
			t.Fatalf("%d concurrent puts of %d bytes: the bucket holds %d objects, want %d: %v", workers, size, len(keys), i+1, keys)
		}
		got, err := get(t, s, want)
		if err != nil || !bytes.Equal(got, content) {
			t.Fatalf("get after concurrent puts of %d bytes: %d bytes, %v", size, len(got), err)
		}
	}
}

// caseConcurrentLinks races Links of one new name to different digests: exactly one wins,
// every other is refused with the winner's digest, and the name keeps the winner.
func caseConcurrentLinks(t *testing.T, loc string) {
	s := open(t, loc)
	const workers = 8
	candidates := make([]Digest, workers)
	for i := range candidates {
		candidates[i] = put(t, s, fmt.Appendf(nil, "candidate %d", i))
	}
	for round := range 3 {
		name := fmt.Sprintf("race/round-%d/evidence.json", round)
		errs := make([]error, workers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range workers {
			wg.Go(func() {
				<-start
				errs[i] = s.Link(t.Context(), name, candidates[i])
			})
		}
		close(start)
		wg.Wait()
		winner, err := s.Resolve(t.Context(), name)
		if err != nil {
			t.Fatalf("resolve %q after the race: %v", name, err)
		}
		wins := 0
		for i, err := range errs {
			var conflict *ConflictError
			switch {
			case err == nil:
				wins++
				if candidates[i] != winner {
					t.Errorf("link %d (%s) succeeded but the name points at %s", i, candidates[i], winner)
				}
			case errors.As(err, &conflict):
				if conflict.Have != winner {
					t.Errorf("link %d refused with have=%s, but the name points at %s", i, conflict.Have, winner)
				}
			default:
				t.Errorf("link %d: %v", i, err)
			}
		}
		if wins != 1 {
			t.Fatalf("round %d: %d links of one name succeeded, want exactly 1", round, wins)
		}
	}
	for _, k := range rawKeys(t, s) {
		if strings.HasPrefix(k, namesPrefix) && !strings.HasSuffix(k, nameKeySuffix) {
			t.Errorf("a link left a temporary object behind: %s", k)
		}
	}
}

// caseCreateOnce races the primitive under Link directly, with nothing before it to stagger
// the writers, many times over: exactly one writer may create each key. On file:// the
// atomicity is ours (link(2)), and a stat-then-rename version fails here most runs only with
// many rounds. On s3:// the server decides under its own lock; SeaweedFS retries a contended
// lock once a second, so a round costs seconds there and a few rounds suffice.
func caseCreateOnce(t *testing.T, loc string) {
	s := open(t, loc)
	const workers = 8
	rounds := 100
	if strings.HasPrefix(loc, "s3:") {
		rounds = 5
	}
	for round := range rounds {
		key := fmt.Sprintf("%sonce/round-%d%s", namesPrefix, round, nameKeySuffix)
		errs := make([]error, workers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range workers {
			wg.Go(func() {
				<-start
				errs[i] = s.createOnce(t.Context(), key, fmt.Appendf(nil, "writer %d", i))
			})
		}
		close(start)
		wg.Wait()
		created := -1
		for i, err := range errs {
			switch {
			case err == nil && created >= 0:
				t.Fatalf("round %d: writers %d and %d both created %s", round, created, i, key)
			case err == nil:
				created = i
			case !errors.Is(err, errExists):
				t.Fatalf("round %d: writer %d: %v", round, i, err)
			}
		}
		if created < 0 {
			t.Fatalf("round %d: no writer created %s", round, key)
		}
		if got, err := s.bucket.ReadAll(t.Context(), key); err != nil || string(got) != fmt.Sprintf("writer %d", created) {
			t.Fatalf("round %d: %s holds %q, %v; want writer %d's content", round, key, got, err, created)
		}
	}
}

func caseReopen(t *testing.T, loc string) {
	s, err := Open(t.Context(), loc)
	if err != nil {
		t.Fatal(err)
	}
	content := randomBytes(9, 10<<10)
	d := put(t, s, content)
	link(t, s, "proofs/c1/attempt-1/try-1/bundle.json", d)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	again := open(t, loc)
	got, err := again.Resolve(t.Context(), "proofs/c1/attempt-1/try-1/bundle.json")
	if err != nil || got != d {
		t.Fatalf("resolve after reopen = %s, %v; want %s", got, err, d)
	}
	if b, err := get(t, again, d); err != nil || !bytes.Equal(b, content) {
		t.Fatalf("get after reopen: %d bytes, %v", len(b), err)
	}
}

func TestParseDigest(t *testing.T) {
	good := sha256Digest([]byte("x"))
	if d, err := ParseDigest(string(good)); err != nil || d != good {
		t.Fatalf("parse %s = %s, %v", good, d, err)
	}
	for _, bad := range []string{
		"", "sha256:", string(good)[:len(good)-1], string(good) + "0", strings.ToUpper(string(good)),
		"sha512:" + string(good)[7:], " " + string(good), string(good) + "\n", "sha256:" + strings.Repeat("g", 64),
	} {
		if _, err := ParseDigest(bad); !errors.Is(err, ErrInvalidDigest) {
			t.Errorf("parse %q: %v; want ErrInvalidDigest", bad, err)
		}
	}
}

func TestValidateName(t *testing.T) {
	for why, name := range badNames {
		if err := ValidateName(name); !errors.Is(err, ErrInvalidName) {
			t.Errorf("%s (%q): %v; want ErrInvalidName", why, name, err)
		}
	}
	for _, name := range []string{"a", "A-b_c.d", "proofs/c1/attempt-1/try-1/evidence.json", "..a/b..", strings.Repeat("x", maxSegmentLen)} {
		if err := ValidateName(name); err != nil {
			t.Errorf("%q: %v", name, err)
		}
	}
	// Keys sort like their names, which List's promise of name order leans on.
	names := []string{"a", "a-b", "a.b", "a/b", "a/b/c", "a0", "aa", "b"}
	keys := make([]string, len(names))
	for i, n := range names {
		k, err := nameKey(n)
		if err != nil {
			t.Fatal(err)
		}
		keys[i] = k
	}
	if !slices.IsSorted(keys) {
		t.Fatalf("name keys %q are not in name order", keys)
	}
}

func TestOpenRefuses(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	for url, want := range map[string]string{
		"gs://bucket":                      `unsupported scheme "gs"`,
		"http://127.0.0.1:9/bucket":        `unsupported scheme "http"`,
		"/abs/path":                        `unsupported scheme ""`,
		"file://relative/path":             "a file URL names a local directory",
		"file:relative":                    "absolute path",
		"file://" + dir + "?create_dir=1":  "no query parameters",
		"s3://?region=us-east-1":           "names no bucket",
		"s3://key:secret@bucket?region=us": "credentials in the URL are refused",
	} {
		s, err := Open(ctx, url)
		if err == nil {
			_ = s.Close()
			t.Errorf("open %q succeeded", url)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("open %q: %v; want an error saying %q", url, err, want)
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("open %q: the error repeats the secret: %v", url, err)
		}
	}
	if _, err := Open(ctx, "file://"+dir, WithMaxObjectSize(0)); err == nil || !strings.Contains(err.Error(), "must be positive") {
		t.Errorf("open with a zero size limit: %v", err)
	}
}

func TestFileStoreLayout(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "created", "on", "open")
	s := open(t, "file://"+dir)
	s.spoolDir = t.TempDir()
	d := put(t, s, []byte("evidence"))
	link(t, s, "proofs/c1/attempt-1/try-1/evidence.json", d)
	h, _ := d.hex()
	for _, p := range []string{
		filepath.Join(dir, "blobs", "sha256", h[:2], h),
		filepath.Join(dir, "names", "proofs", "c1", "attempt-1", "try-1", "evidence.json!"),
	} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("expected %s: %v", p, err)
		}
	}
	// Put spools through a local temporary file; none may stay behind.
	if left, err := os.ReadDir(s.spoolDir); err != nil || len(left) != 0 {
		t.Errorf("spool directory after put: %v, %v; want empty", left, err)
	}
}

func TestContextCancelled(t *testing.T) {
	s := open(t, "file://"+t.TempDir())
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Put(ctx, bytes.NewReader([]byte("x"))); !errors.Is(err, context.Canceled) {
		t.Fatalf("put with a cancelled context: %v; want context.Canceled", err)
	}
}
