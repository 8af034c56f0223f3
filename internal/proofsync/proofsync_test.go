package proofsync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/contracts/contractstest"
	"github.com/signoff/signoff/internal/artifacts"
)

const contractID = "shop-checkout-42"

// hosts is one store shared by two hosts that share nothing else: a publishes from its own
// proof root, b fetches into another.
type hosts struct {
	store artifacts.Store
	a, b  Sync
}

func newHosts(t *testing.T) hosts {
	t.Helper()
	store, err := artifacts.Open(context.Background(), "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	return hosts{
		store: store,
		a:     Sync{Store: store, Root: filepath.Join(t.TempDir(), "proofs")},
		b:     Sync{Store: store, Root: filepath.Join(t.TempDir(), "proofs")},
	}
}

// writeFiles writes files (slash paths to contents) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// tree reads every file under dir (slash paths to contents), without following symlinks:
// a symlink reads as "-> target". A missing dir is an empty tree.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == dir {
			return filepath.SkipDir
		}
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			out[filepath.ToSlash(rel)] = "-> " + target
			return err
		}
		data, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got  %q\n want %q", what, got, want)
	}
}

func mustName(t *testing.T, rel, part string) string {
	t.Helper()
	name, err := Name(contractID, rel, part)
	if err != nil {
		t.Fatal(err)
	}
	return name
}

func mustBasePart(t *testing.T, hash string) string {
	t.Helper()
	part, err := BasePart(hash)
	if err != nil {
		t.Fatal(err)
	}
	return part
}

func TestPublishedPartsReadBackIdenticalOnAnotherHost(t *testing.T) {
	ctx := context.Background()
	h := newHosts(t)
	rel := TryRel(1, 1)
	verifier := map[string]string{
		"evidence.json":                     `{"evidence":1}`,
		"shot-hero-1280x800.png":            "png bytes",
		"traces/checkout/trace-1.zip":       "zip bytes",
		"traces/checkout/empty-console.txt": "",
	}
	control := map[string]string{
		"bundle.json":   `{"contract_hash":"ab12"}`,
		"contract.json": `{"contract_id":"shop-checkout-42"}`,
	}
	dirA := filepath.Join(h.a.Root, contractID, filepath.FromSlash(rel))
	writeFiles(t, dirA, verifier)
	writeFiles(t, dirA, control)
	writeFiles(t, dirA, map[string]string{"unlisted.log": "stays on host a"})

	d, err := h.a.Publish(ctx, contractID, rel, PartVerifier, []string{"traces/checkout/trace-1.zip", "traces/checkout/empty-console.txt", "shot-hero-1280x800.png", "evidence.json"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := h.store.Resolve(ctx, mustName(t, rel, PartVerifier)); err != nil || got != d {
		t.Fatalf("name resolves to %s (%v), Publish returned %s", got, err, d)
	}
	if _, err := h.a.Publish(ctx, contractID, rel, PartControl, []string{"bundle.json", "contract.json"}); err != nil {
		t.Fatal(err)
	}

	for _, part := range []string{PartVerifier, PartControl} {
		ok, err := h.b.Fetch(ctx, contractID, rel, part)
		if err != nil || !ok {
			t.Fatalf("fetch %s: %v, %v", part, ok, err)
		}
	}
	want := map[string]string{}
	for k, v := range verifier {
		want[k] = v
	}
	for k, v := range control {
		want[k] = v
	}
	// Exactly the listed files, byte for byte, and no temporary file left behind.
	sameTree(t, "host b's try folder", tree(t, filepath.Join(h.b.Root, contractID)), prefixed(rel, want))
}

func prefixed(rel string, files map[string]string) map[string]string {
	out := make(map[string]string, len(files))
	for k, v := range files {
		if rel != "" {
			k = rel + "/" + k
		}
		out[k] = v
	}
	return out
}

func TestFetchReplacesFilesAndKeepsOthers(t *testing.T) {
	ctx := context.Background()
	h := newHosts(t)
	rel := TryRel(2, 3)
	writeFiles(t, filepath.Join(h.a.Root, contractID, rel), map[string]string{"evidence.json": "new evidence", "a.png": "new a"})
	if _, err := h.a.Publish(ctx, contractID, rel, PartVerifier, []string{"a.png", "evidence.json"}); err != nil {
		t.Fatal(err)
	}
	dirB := filepath.Join(h.b.Root, contractID, rel)
	writeFiles(t, dirB, map[string]string{"evidence.json": "stale evidence", "old.png": "left alone"})
	if ok, err := h.b.Fetch(ctx, contractID, rel, PartVerifier); err != nil || !ok {
		t.Fatalf("fetch: %v, %v", ok, err)
	}
	sameTree(t, "host b", tree(t, dirB), map[string]string{"evidence.json": "new evidence", "a.png": "new a", "old.png": "left alone"})
	for _, name := range []string{"evidence.json", "a.png"} {
		st, err := os.Stat(filepath.Join(dirB, name))
		if err != nil {
			t.Fatal(err)
		}
		if perm := st.Mode().Perm(); perm&^0o644 != 0 {
			t.Errorf("%s has mode %v, want at most 0644", name, perm)
		}
	}
}

// On the host that published, a fetch finds every file in place and rewrites none; a file
// of the same size but other bytes is still replaced.
func TestFetchLeavesIdenticalFilesInPlace(t *testing.T) {
	ctx := context.Background()
	h := newHosts(t)
	rel := TryRel(1, 1)
	dir := filepath.Join(h.a.Root, contractID, rel)
	writeFiles(t, dir, map[string]string{"evidence.json": "evidence", "a.png": "aaaa"})
	if _, err := h.a.Publish(ctx, contractID, rel, PartVerifier, []string{"a.png", "evidence.json"}); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(filepath.Join(dir, "evidence.json"))
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"a.png": "bbbb"})
	if ok, err := h.a.Fetch(ctx, contractID, rel, PartVerifier); err != nil || !ok {
		t.Fatalf("fetch: %v, %v", ok, err)
	}
	after, err := os.Stat(filepath.Join(dir, "evidence.json"))
	if err != nil || !os.SameFile(before, after) {
		t.Errorf("evidence.json was rewritten though it was in place (%v)", err)
	}
	sameTree(t, "host a", tree(t, dir), map[string]string{"evidence.json": "evidence", "a.png": "aaaa"})
}

func TestRepublishingTheSameFilesSucceeds(t *testing.T) {
	ctx := context.Background()
	h := newHosts(t)
	rel := TryRel(1, 1)
	writeFiles(t, filepath.Join(h.a.Root, contractID, rel), map[string]string{"evidence.json": "e", "s.png": "s"})
	first, err := h.a.Publish(ctx, contractID, rel, PartVerifier, []string{"evidence.json", "s.png"})
	if err != nil {
		t.Fatal(err)
	}
	// A retried activity, possibly on another host holding the same bytes.
	writeFiles(t, filepath.Join(h.b.Root, contractID, rel), map[string]string{"evidence.json": "e", "s.png": "s"})
	second, err := h.b.Publish(ctx, contractID, rel, PartVerifier, []string{"evidence.json", "s.png"})
	if err != nil {
		t.Fatalf("republish: %v", err)
	}
	if first != second {
		t.Errorf("republish gave manifest %s, first publication %s", second, first)
	}
}

func TestPublishingOtherFilesUnderATakenNameConflicts(t *testing.T) {
	ctx := context.Background()
	h := newHosts(t)
	rel := TryRel(1, 1)
	name := mustName(t, rel, PartVerifier)
	writeFiles(t, filepath.Join(h.a.Root, contractID, rel), map[string]string{"evidence.json": "first run"})
	first, err := h.a.Publish(ctx, contractID, rel, PartVerifier, []string{"evidence.json"})
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, filepath.Join(h.b.Root, contractID, rel), map[string]string{"evidence.json": "second run"})
	d, err := h.b.Publish(ctx, contractID, rel, PartVerifier, []string{"evidence.json"})
	var conflict *artifacts.ConflictError
	if !errors.As(err, &conflict) {
		t.Fatalf("publish over a taken name: %v (digest %s), want a *artifacts.ConflictError", err, d)
	}
	if conflict.Have != first || conflict.Name != name {
		t.Errorf("conflict %+v, want name %s keeping %s", conflict, name, first)
	}
	if !strings.HasPrefix(err.Error(), "proofsync: publish "+name+": ") {
		t.Errorf("error %q does not name the part", err)
	}
	if got, err := h.store.Resolve(ctx, name); err != nil || got != first {
		t.Errorf("after the conflict the name points at %s (%v), want %s", got, err, first)
	}
	// The loser adopts the earlier publication by fetching it.
	if ok, err := h.b.Fetch(ctx, contractID, rel, PartVerifier); err != nil || !ok {
		t.Fatalf("fetch: %v, %v", ok, err)
	}
	sameTree(t, "host b after adopting", tree(t, filepath.Join(h.b.Root, contractID, rel)), map[string]string{"evidence.json": "first run"})
}

func TestFetchOfAnUnpublishedPartReportsFalse(t *testing.T) {
	h := newHosts(t)
	ok, err := h.b.Fetch(context.Background(), contractID, TryRel(1, 1), PartControl)
	if err != nil || ok {
		t.Fatalf("fetch of an unlinked name: %v, %v; want false, nil", ok, err)
	}
	if _, err := os.Lstat(filepath.Join(h.b.Root, contractID)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("fetching nothing created the contract folder (%v)", err)
	}
}

// publishedTries are the try folders publishContract fills, in numeric order, which is not
// the order of their names.
var publishedTries = []string{TryRel(2, 2), TryRel(2, 10), TryRel(10, 1)}

// publishContract publishes, from host a, two attempts, a settlement and two base checks
// (one for other terms) of contractID, and returns what each folder holds.
func publishContract(t *testing.T, h hosts, hash, otherHash string) map[string]string {
	t.Helper()
	ctx := context.Background()
	contractDir := filepath.Join(h.a.Root, contractID)
	publish := func(rel, part string, files map[string]string) {
		t.Helper()
		writeFiles(t, filepath.Join(contractDir, filepath.FromSlash(rel)), files)
		var names []string
		for name := range files {
			names = append(names, name)
		}
		if _, err := h.a.Publish(ctx, contractID, rel, part, names); err != nil {
			t.Fatal(err)
		}
	}
	publish(BaseRel, mustBasePart(t, otherHash), map[string]string{"evidence.json": "base for other terms", "shot.png": "other base shot"})
	publish(BaseRel, mustBasePart(t, "sha256:"+hash), map[string]string{"evidence.json": "base for these terms", "shot.png": "base shot"})
	bundle := fmt.Sprintf(`{"contract_id":%q,"contract_hash":%q}`, contractID, hash)
	for _, rel := range publishedTries {
		publish(rel, PartVerifier, map[string]string{"evidence.json": rel + " evidence", "shots/s.png": rel + " shot"})
		publish(rel, PartControl, map[string]string{"bundle.json": bundle, "contract.json": "{}"})
	}
	publish("", PartSettlement, map[string]string{"settlement.json": "settled"})
	// A single artifact under the contract's prefix is not a part and is not fetched.
	d, err := h.store.Put(ctx, strings.NewReader("loose"))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.store.Link(ctx, "proofs/"+contractID+"/attempt-1/try-1/loose.txt", d); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"base/evidence.json": "base for these terms",
		"base/shot.png":      "base shot",
		"settlement.json":    "settled",
	}
	for _, rel := range publishedTries {
		want[rel+"/evidence.json"] = rel + " evidence"
		want[rel+"/shots/s.png"] = rel + " shot"
		want[rel+"/bundle.json"] = bundle
		want[rel+"/contract.json"] = "{}"
	}
	return want
}

func TestFetchContractMaterialisesEveryPartAndTheMatchingBase(t *testing.T) {
	h := newHosts(t)
	hash := strings.Repeat("c0ffee", 10) + "abcd"
	other := strings.Repeat("0", 63) + "1"
	want := publishContract(t, h, hash, other)

	names, err := h.b.FetchContract(context.Background(), contractID)
	if err != nil {
		t.Fatal(err)
	}
	wantNames := []string{
		"proofs/" + contractID + "/attempt-10/try-1/control",
		"proofs/" + contractID + "/attempt-10/try-1/verifier",
		"proofs/" + contractID + "/attempt-2/try-10/control",
		"proofs/" + contractID + "/attempt-2/try-10/verifier",
		"proofs/" + contractID + "/attempt-2/try-2/control",
		"proofs/" + contractID + "/attempt-2/try-2/verifier",
		"proofs/" + contractID + "/base/verifier-" + hash,
		"proofs/" + contractID + "/settlement",
	}
	if !reflect.DeepEqual(names, wantNames) {
		t.Errorf("fetched\n %q\nwant\n %q", names, wantNames)
	}
	sameTree(t, "host b's contract folder", tree(t, filepath.Join(h.b.Root, contractID)), want)
}

// recordingStore logs the names a reader resolves and the blobs it reads, in order.
type recordingStore struct {
	artifacts.Store
	log []string
}

func (r *recordingStore) Resolve(ctx context.Context, name string) (artifacts.Digest, error) {
	r.log = append(r.log, "resolve "+name)
	return r.Store.Resolve(ctx, name)
}

func (r *recordingStore) Get(ctx context.Context, d artifacts.Digest) (io.ReadCloser, error) {
	r.log = append(r.log, "get "+string(d))
	return r.Store.Get(ctx, d)
}

func TestFetchContractGoesByAttemptThenTryAndPartsInManifestOrder(t *testing.T) {
	ctx := context.Background()
	h := newHosts(t)
	hash := strings.Repeat("a", 64)
	publishContract(t, h, hash, strings.Repeat("b", 64))
	rec := &recordingStore{Store: h.store}
	if _, err := (Sync{Store: rec, Root: h.b.Root}).FetchContract(ctx, contractID); err != nil {
		t.Fatal(err)
	}
	var resolved []string
	for _, l := range rec.log {
		if name, ok := strings.CutPrefix(l, "resolve "); ok {
			resolved = append(resolved, name)
		}
	}
	var want []string
	for _, rel := range publishedTries {
		want = append(want, mustName(t, rel, PartVerifier), mustName(t, rel, PartControl))
	}
	want = append(want,
		mustName(t, "", PartSettlement),
		mustName(t, BaseRel, mustBasePart(t, hash)),
	)
	if !reflect.DeepEqual(resolved, want) {
		t.Errorf("resolved\n %q\nwant\n %q", resolved, want)
	}

	// Within a part, each file is read right after the manifest, in the manifest's order.
	rec.log = nil
	rel := publishedTries[0]
	if _, err := (Sync{Store: rec, Root: t.TempDir()}).Fetch(ctx, contractID, rel, PartVerifier); err != nil {
		t.Fatal(err)
	}
	d, err := h.store.Resolve(ctx, mustName(t, rel, PartVerifier))
	if err != nil {
		t.Fatal(err)
	}
	m, err := readManifest(ctx, h.store, d, PartVerifier)
	if err != nil {
		t.Fatal(err)
	}
	wantLog := []string{"resolve " + mustName(t, rel, PartVerifier), "get " + string(d)}
	for _, f := range m.Files {
		wantLog = append(wantLog, "get "+string(f.Digest))
	}
	if !reflect.DeepEqual(rec.log, wantLog) {
		t.Errorf("store calls\n %q\nwant\n %q", rec.log, wantLog)
	}
}

func TestFetchContractHashesContractJSONWithoutABundle(t *testing.T) {
	ctx := context.Background()
	h := newHosts(t)
	doc := contractstest.ReadW1(t)
	hash, err := contracts.HashJSON(doc, contracts.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, hh := range []string{strings.Repeat("1", 64), hash} {
		writeFiles(t, filepath.Join(h.a.Root, contractID, BaseRel), map[string]string{"evidence.json": "base " + hh})
		if _, err := h.a.Publish(ctx, contractID, BaseRel, mustBasePart(t, hh), []string{"evidence.json"}); err != nil {
			t.Fatal(err)
		}
	}
	rel := TryRel(1, 1)
	writeFiles(t, filepath.Join(h.a.Root, contractID, rel), map[string]string{"contract.json": string(doc)})
	if _, err := h.a.Publish(ctx, contractID, rel, PartControl, []string{"contract.json"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.b.FetchContract(ctx, contractID); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(h.b.Root, contractID, BaseRel, "evidence.json"))
	if err != nil || string(got) != "base "+hash {
		t.Errorf("base evidence %q (%v), want the check of hash %s", got, err, hash)
	}
}

func TestFetchContractTakesASoleBasePartAndSkipsAnAmbiguousOne(t *testing.T) {
	ctx := context.Background()
	h := newHosts(t)
	writeFiles(t, filepath.Join(h.a.Root, contractID, BaseRel), map[string]string{"evidence.json": "only base"})
	if _, err := h.a.Publish(ctx, contractID, BaseRel, mustBasePart(t, "aa"), []string{"evidence.json"}); err != nil {
		t.Fatal(err)
	}
	names, err := h.b.FetchContract(ctx, contractID)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"proofs/" + contractID + "/base/verifier-aa"}; !reflect.DeepEqual(names, want) {
		t.Errorf("fetched %q, want %q", names, want)
	}
	sameTree(t, "host b", tree(t, filepath.Join(h.b.Root, contractID)), map[string]string{"base/evidence.json": "only base"})

	// A second check for other terms: nothing says which is this contract's.
	writeFiles(t, filepath.Join(h.a.Root, contractID, BaseRel), map[string]string{"evidence.json": "other base"})
	if _, err := h.a.Publish(ctx, contractID, BaseRel, mustBasePart(t, "bb"), []string{"evidence.json"}); err != nil {
		t.Fatal(err)
	}
	c := Sync{Store: h.store, Root: t.TempDir()}
	names, err = c.FetchContract(ctx, contractID)
	if err != nil || len(names) != 0 {
		t.Errorf("with two base parts and no bundle: fetched %q (%v), want none", names, err)
	}
}

func TestFetchContractRefusesBundlesOfDifferentContracts(t *testing.T) {
	ctx := context.Background()
	h := newHosts(t)
	writeFiles(t, filepath.Join(h.a.Root, contractID, BaseRel), map[string]string{"evidence.json": "base"})
	if _, err := h.a.Publish(ctx, contractID, BaseRel, mustBasePart(t, "aa"), []string{"evidence.json"}); err != nil {
		t.Fatal(err)
	}
	for i, hash := range []string{"aa", "bb"} {
		rel := TryRel(1, i+1)
		writeFiles(t, filepath.Join(h.a.Root, contractID, rel), map[string]string{"bundle.json": `{"contract_hash":"` + hash + `"}`})
		if _, err := h.a.Publish(ctx, contractID, rel, PartControl, []string{"bundle.json"}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := h.b.FetchContract(ctx, contractID)
	if err == nil || !strings.Contains(err.Error(), "different contract hashes") {
		t.Fatalf("bundles naming two contract hashes: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(h.b.Root, contractID, BaseRel)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a base check was materialised despite the disagreement (%v)", err)
	}
}

func TestFetchContractOfAnUnknownContractIsNotFound(t *testing.T) {
	h := newHosts(t)
	publishContract(t, h, strings.Repeat("a", 64), strings.Repeat("b", 64))
	_, err := h.b.FetchContract(context.Background(), "other-contract")
	if !errors.Is(err, artifacts.ErrNotFound) || !strings.Contains(err.Error(), "other-contract") {
		t.Fatalf("unknown contract: %v; want ErrNotFound naming it", err)
	}
	// A contract whose id extends this one's must not pick up its parts.
	if _, err := h.b.FetchContract(context.Background(), contractID[:len(contractID)-1]); !errors.Is(err, artifacts.ErrNotFound) {
		t.Errorf("prefix of a known contract id: %v; want ErrNotFound", err)
	}
	if _, err := h.b.FetchContract(context.Background(), "../etc"); err == nil || errors.Is(err, artifacts.ErrNotFound) {
		t.Errorf("malformed contract id: %v; want a validation error", err)
	}
}

// linkManifest links name to a raw manifest whose blobs are already stored, as a hostile
// worker with write access to the store could.
func linkManifest(t *testing.T, store artifacts.Store, name string, manifest []byte) {
	t.Helper()
	ctx := context.Background()
	d, err := store.Put(ctx, strings.NewReader(string(manifest)))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Link(ctx, name, d); err != nil {
		t.Fatal(err)
	}
}

func TestFetchRefusesHostileManifests(t *testing.T) {
	content := "twelve bytes"
	entry := func(path string, size int) string {
		p, err := json.Marshal(path)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf(`{"path":%s,"digest":"%%[1]s","size":%d}`, p, size)
	}
	manifest := func(entries ...string) string {
		return `{"schema":"` + ManifestSchema + `","files":[` + strings.Join(entries, ",") + `]}`
	}
	many := make([]string, MaxFiles+1)
	for i := range many {
		many[i] = entry(fmt.Sprintf("f%d.png", i), len(content))
	}
	cases := []struct {
		name, manifest, want string
	}{
		{"dot-dot", manifest(entry("../../escape.png", 12)), `".." segment`},
		{"dot-dot inside", manifest(entry("shots/../../x.png", 12)), `".." segment`},
		{"absolute", manifest(entry("/tmp/escape.png", 12)), "absolute"},
		{"backslash", manifest(entry(`..\escape.png`, 12)), "backslash"},
		{"hidden", manifest(entry(".proofsync-x.tmp", 12)), "dot"},
		{"empty segment", manifest(entry("shots//a.png", 12)), "empty segment"},
		{"NUL", manifest(entry("a\x00.png", 12)), "control character"},
		{"long segment", manifest(entry(strings.Repeat("a", 256), 12)), "more than 255"},
		{"duplicate", manifest(entry("a.png", 12), entry("a.png", 12)), "twice"},
		{"file and folder", manifest(entry("a", 12), entry("a/b.png", 12)), "both as a file and as the folder"},
		{"control document", manifest(entry("bundle.json", 12)), "control worker writes it"},
		{"too many files", manifest(many...), "4097 files, more than 4096"},
		{"no files", manifest(), "no files"},
		{"larger than said", manifest(entry("a.png", 11)), "the store holds more"},
		{"smaller than said", manifest(entry("a.png", 13)), "the store holds 12"},
		{"negative size", manifest(entry("a.png", -1)), "negative size"},
		{"bad digest", strings.Replace(manifest(entry("a.png", 12)), `"%[1]s"`, `"sha256:XYZ"`, 1), "invalid digest"},
		{"unknown field", strings.TrimSuffix(manifest(entry("a.png", 12)), "}") + `,"exec":"rm -rf /"}`, `unknown field "exec"`},
		{"unknown file field", manifest(`{"path":"a.png","digest":"%[1]s","size":12,"mode":"4755"}`), `unknown field "mode"`},
		{"wrong schema", strings.Replace(manifest(entry("a.png", 12)), ManifestSchema, "signoff.proof-part/2", 1), "schema"},
		{"two values", manifest(entry("a.png", 12)) + manifest(entry("b.png", 12)), "more than one JSON value"},
		{"too deep", `{"schema":[[[[]]]]}`, "nesting deeper"},
		{"oversize", manifest(entry("a.png", 12)) + strings.Repeat(" ", MaxManifestBytes), "larger than the limit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			h := newHosts(t)
			d, err := h.store.Put(ctx, strings.NewReader(content))
			if err != nil {
				t.Fatal(err)
			}
			rel := TryRel(1, 1)
			m := c.manifest
			if strings.Contains(m, "%[1]s") {
				m = fmt.Sprintf(m, d)
			}
			linkManifest(t, h.store, mustName(t, rel, PartVerifier), []byte(m))
			ok, err := h.b.Fetch(ctx, contractID, rel, PartVerifier)
			if err == nil || ok {
				t.Fatalf("fetch of a hostile manifest: %v, %v", ok, err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not say %q", err, c.want)
			}
			if !strings.HasPrefix(err.Error(), "proofsync: fetch proofs/"+contractID+"/attempt-1/try-1/verifier: ") {
				t.Errorf("error %q does not name the part", err)
			}
			// Nothing written: not the file, not a temporary file, not outside the folder.
			sameTree(t, "host b's proof root", tree(t, filepath.Dir(h.b.Root)), map[string]string{})
		})
	}
}

func TestFetchRefusesASettlementPartWritingElsewhere(t *testing.T) {
	ctx := context.Background()
	h := newHosts(t)
	d, err := h.store.Put(ctx, strings.NewReader(`{"forged":true}`))
	if err != nil {
		t.Fatal(err)
	}
	m := fmt.Sprintf(`{"schema":%q,"files":[{"path":"attempt-1/try-1/bundle.json","digest":%q,"size":15}]}`, ManifestSchema, d)
	linkManifest(t, h.store, mustName(t, "", PartSettlement), []byte(m))
	if _, err := h.b.FetchContract(ctx, contractID); err == nil || !strings.Contains(err.Error(), "holds only settlement.json") {
		t.Fatalf("settlement part writing a bundle: %v", err)
	}
	sameTree(t, "host b", tree(t, h.b.Root), map[string]string{})
}

func TestFetchDoesNotWriteThroughPlantedSymlinks(t *testing.T) {
	ctx := context.Background()
	h := newHosts(t)
	rel := TryRel(1, 1)
	writeFiles(t, filepath.Join(h.a.Root, contractID, rel), map[string]string{"evidence.json": "published", "shots/s.png": "shot"})
	if _, err := h.a.Publish(ctx, contractID, rel, PartVerifier, []string{"shots/s.png", "evidence.json"}); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"secret.json": "do not touch", "shots/s.png": "outside shot"})
	untouched := tree(t, outside)

	t.Run("file", func(t *testing.T) {
		s := Sync{Store: h.store, Root: t.TempDir()}
		dir := filepath.Join(s.Root, contractID, rel)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(outside, "secret.json"), filepath.Join(dir, "evidence.json")); err != nil {
			t.Fatal(err)
		}
		if ok, err := s.Fetch(ctx, contractID, rel, PartVerifier); err != nil || !ok {
			t.Fatalf("fetch: %v, %v", ok, err)
		}
		sameTree(t, "outside", tree(t, outside), untouched)
		// The link was replaced by the published file.
		sameTree(t, "local folder", tree(t, dir), map[string]string{"evidence.json": "published", "shots/s.png": "shot"})
	})
	t.Run("folder", func(t *testing.T) {
		s := Sync{Store: h.store, Root: t.TempDir()}
		dir := filepath.Join(s.Root, contractID, rel)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(outside, "shots"), filepath.Join(dir, "shots")); err != nil {
			t.Fatal(err)
		}
		if ok, err := s.Fetch(ctx, contractID, rel, PartVerifier); err == nil || ok {
			t.Errorf("fetch through a symlinked folder: %v, %v; want an error", ok, err)
		}
		sameTree(t, "outside", tree(t, outside), untouched)
	})
	t.Run("contract folder", func(t *testing.T) {
		s := Sync{Store: h.store, Root: t.TempDir()}
		if err := os.Symlink(outside, filepath.Join(s.Root, contractID)); err != nil {
			t.Fatal(err)
		}
		if ok, err := s.Fetch(ctx, contractID, rel, PartVerifier); err == nil || ok {
			t.Errorf("fetch into a symlinked contract folder: %v, %v; want an error", ok, err)
		}
		sameTree(t, "outside", tree(t, outside), untouched)
	})
}

func TestPublishRefusesSymlinksAndSpecialFiles(t *testing.T) {
	ctx := context.Background()
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"key.pem": "private key", "shots/s.png": "outside"})
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
		files []string
		want  string
	}{
		{"file pointing out", func(t *testing.T, dir string) {
			if err := os.Symlink(filepath.Join(outside, "key.pem"), filepath.Join(dir, "shot.png")); err != nil {
				t.Fatal(err)
			}
		}, []string{"evidence.json", "shot.png"}, "shot.png is a symlink"},
		{"file pointing inside", func(t *testing.T, dir string) {
			if err := os.Symlink("evidence.json", filepath.Join(dir, "copy.json")); err != nil {
				t.Fatal(err)
			}
		}, []string{"evidence.json", "copy.json"}, "copy.json is a symlink"},
		{"folder", func(t *testing.T, dir string) {
			if err := os.Symlink(filepath.Join(outside, "shots"), filepath.Join(dir, "shots")); err != nil {
				t.Fatal(err)
			}
		}, []string{"evidence.json", "shots/s.png"}, "shots is a symlink"},
		{"a folder as a file", func(t *testing.T, dir string) {
			if err := os.Mkdir(filepath.Join(dir, "traces"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, []string{"evidence.json", "traces"}, "traces is a folder"},
		{"missing", func(*testing.T, string) {}, []string{"evidence.json", "gone.png"}, "gone.png"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHosts(t)
			rel := TryRel(1, 1)
			dir := filepath.Join(h.a.Root, contractID, rel)
			writeFiles(t, dir, map[string]string{"evidence.json": "e"})
			c.setup(t, dir)
			_, err := h.a.Publish(ctx, contractID, rel, PartVerifier, c.files)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("publish: %v; want an error saying %q", err, c.want)
			}
			if _, err := h.store.Resolve(ctx, mustName(t, rel, PartVerifier)); !errors.Is(err, artifacts.ErrNotFound) {
				t.Errorf("a refused publication was linked (%v)", err)
			}
		})
	}
}

func TestPublishRefusesBadPathsAndPartFiles(t *testing.T) {
	ctx := context.Background()
	h := newHosts(t)
	rel := TryRel(1, 1)
	writeFiles(t, filepath.Join(h.a.Root, contractID, rel), map[string]string{"evidence.json": "e", "bundle.json": "b"})
	writeFiles(t, filepath.Join(h.a.Root, contractID), map[string]string{"settlement.json": "s"})
	cases := []struct {
		rel, part string
		files     []string
		want      string
	}{
		{rel, PartVerifier, []string{"../try-2/evidence.json"}, `".." segment`},
		{rel, PartVerifier, []string{"./evidence.json"}, `"." segment`},
		{rel, PartVerifier, []string{"evidence.json", "evidence.json"}, "twice"},
		{rel, PartVerifier, []string{"evidence.json", "bundle.json"}, "control worker writes it"},
		{rel, PartControl, []string{"evidence.json"}, "holds only bundle.json and contract.json"},
		{"", PartSettlement, []string{"attempt-1/try-1/bundle.json"}, "holds only settlement.json"},
		{rel, PartVerifier, nil, "no files"},
	}
	for _, c := range cases {
		_, err := h.a.Publish(ctx, contractID, c.rel, c.part, c.files)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("publish %q to %s/%s: %v; want an error saying %q", c.files, c.rel, c.part, err, c.want)
		}
	}
	entries, err := h.store.List(ctx, "")
	if err != nil || len(entries) != 0 {
		t.Errorf("refused publications left names %v (%v)", entries, err)
	}
}

func TestNameAcceptsOnlyTheProofLayout(t *testing.T) {
	hash := strings.Repeat("0123456789abcdef", 4)
	good := []struct{ contract, rel, part, want string }{
		{"abc", "", PartSettlement, "proofs/abc/settlement"},
		{contractID, TryRel(1, 1), PartVerifier, "proofs/" + contractID + "/attempt-1/try-1/verifier"},
		{contractID, TryRel(9999, 12), PartControl, "proofs/" + contractID + "/attempt-9999/try-12/control"},
		{contractID, BaseRel, "verifier-" + hash, "proofs/" + contractID + "/base/verifier-" + hash},
	}
	for _, g := range good {
		got, err := Name(g.contract, g.rel, g.part)
		if err != nil || got != g.want {
			t.Errorf("Name(%q, %q, %q) = %q, %v; want %q", g.contract, g.rel, g.part, got, err, g.want)
		}
	}
	bad := []struct{ contract, rel, part string }{
		{"ab", "", PartSettlement},
		{"-abc", "", PartSettlement},
		{"ABC", "", PartSettlement},
		{"abc/def", "", PartSettlement},
		{contractID, "", PartVerifier},
		{contractID, BaseRel, PartVerifier},
		{contractID, BaseRel, "verifier-" + hash + "0"},
		{contractID, BaseRel, "verifier-ABCD"},
		{contractID, TryRel(0, 1), PartVerifier},
		{contractID, TryRel(1, 0), PartVerifier},
		{contractID, TryRel(10000, 1), PartVerifier},
		{contractID, "attempt-01/try-1", PartVerifier},
		{contractID, "attempt-1", PartVerifier},
		{contractID, "attempt-1/try-1/", PartVerifier},
		{contractID, TryRel(1, 1), PartSettlement},
		{contractID, TryRel(1, 1), "verifier-" + hash},
		{contractID, "../x", PartVerifier},
	}
	for _, b := range bad {
		if got, err := Name(b.contract, b.rel, b.part); err == nil {
			t.Errorf("Name(%q, %q, %q) = %q; want an error", b.contract, b.rel, b.part, got)
		}
	}
}

func TestBasePart(t *testing.T) {
	hash := strings.Repeat("ab", 32)
	for in, want := range map[string]string{hash: "verifier-" + hash, "sha256:" + hash: "verifier-" + hash, "00ff": "verifier-00ff"} {
		if got, err := BasePart(in); err != nil || got != want {
			t.Errorf("BasePart(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "sha256:", strings.ToUpper(hash), hash + "a", "abcg", "sha512:" + hash, "../x"} {
		if got, err := BasePart(in); err == nil {
			t.Errorf("BasePart(%q) = %q; want an error", in, got)
		}
	}
}

// The manifest a publisher writes is one a reader accepts, field for field.
func TestPublishedManifestIsStrictJSON(t *testing.T) {
	ctx := context.Background()
	h := newHosts(t)
	rel := TryRel(1, 1)
	writeFiles(t, filepath.Join(h.a.Root, contractID, rel), map[string]string{"evidence.json": "e", "a/b.png": "bb"})
	d, err := h.a.Publish(ctx, contractID, rel, PartVerifier, []string{"a/b.png", "evidence.json"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := readManifest(ctx, h.store, d, PartVerifier)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`{"schema":%q,"files":[{"path":"a/b.png","digest":%q,"size":2},{"path":"evidence.json","digest":%q,"size":1}]}`,
		ManifestSchema, contracts.DigestBytes([]byte("bb")), contracts.DigestBytes([]byte("e")))
	want = strings.ReplaceAll(want, `"digest":"`, `"digest":"sha256:`)
	if string(got) != want {
		t.Errorf("manifest\n %s\nwant\n %s", got, want)
	}
}
