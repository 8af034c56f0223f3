package localgit

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff/signoff/internal/artifacts"
)

// gitT runs git for a test and returns its trimmed output.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := Git(context.Background(), dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

// countingStore counts the calls that move content, so a test can tell a no-op from a
// repeat that happens to give the same answer.
type countingStore struct {
	artifacts.Store
	puts, gets int
}

func (c *countingStore) Put(ctx context.Context, r io.Reader) (artifacts.Digest, error) {
	c.puts++
	return c.Store.Put(ctx, r)
}

func (c *countingStore) Get(ctx context.Context, d artifacts.Digest) (io.ReadCloser, error) {
	c.gets++
	return c.Store.Get(ctx, d)
}

func newStore(t *testing.T) *countingStore {
	t.Helper()
	s, err := artifacts.Open(context.Background(), "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return &countingStore{Store: s}
}

// twoHosts is the execute host A, which made commits c1 and c2 on branch signoff/c1 over
// the registered base, and the source repository any other host registers from.
type twoHosts struct {
	src, base string
	a         Remotes
	aRemote   string
	work      string // a clone of A's remote where the commits were made
	c1, c2    string
}

func newTwoHosts(t *testing.T) twoHosts {
	t.Helper()
	ctx := context.Background()
	src, base, _ := newRepo(t)
	h := twoHosts{src: src, base: base, a: Remotes{Root: t.TempDir()}}
	var err error
	if h.aRemote, err = h.a.Register(ctx, "local", "app", src, base); err != nil {
		t.Fatal(err)
	}
	h.work = filepath.Join(t.TempDir(), "work")
	gitT(t, filepath.Dir(h.work), "clone", "--quiet", "--no-checkout", h.aRemote, h.work)
	gitT(t, h.work, "checkout", "--quiet", "-B", "signoff/c1", base)
	commit := func(file, text string) string {
		if err := os.WriteFile(filepath.Join(h.work, file), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		gitT(t, h.work, "add", file)
		gitT(t, h.work, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "--quiet", "-m", file)
		return gitT(t, h.work, "rev-parse", "HEAD")
	}
	h.c1 = commit("b.txt", "b\n")
	h.c2 = commit("c.txt", "c\n")
	gitT(t, h.work, "push", "--quiet", "origin", "signoff/c1")
	return h
}

// hostB registers the base on a fresh host, as the control worker's host does.
func (h twoHosts) hostB(t *testing.T) (Remotes, string) {
	t.Helper()
	b := Remotes{Root: t.TempDir()}
	p, err := b.Register(context.Background(), "local", "app", h.src, h.base)
	if err != nil {
		t.Fatal(err)
	}
	return b, p
}

// bundle writes a bundle of the work clone with refs set as given (ref -> commit) and the
// rest of args as rev-list arguments, and returns its bytes: the raw material of a bundle
// someone else linked under a commit's name.
func (h twoHosts) bundle(t *testing.T, refs map[string]string, args ...string) []byte {
	t.Helper()
	names := make([]string, 0, len(refs))
	for ref, sha := range refs {
		gitT(t, h.work, "update-ref", ref, sha)
		names = append(names, ref)
	}
	file := filepath.Join(t.TempDir(), "x.bundle")
	gitT(t, h.work, append(append([]string{"bundle", "create", "--quiet", file}, names...), args...)...)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func link(t *testing.T, s artifacts.Store, sha string, data []byte) {
	t.Helper()
	ctx := context.Background()
	d, err := s.Put(ctx, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	name, err := CommitName("local", "app", sha)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Link(ctx, name, d); err != nil {
		t.Fatal(err)
	}
}

// noSharedRefs fails if a refused fetch left a ref behind.
func noSharedRefs(t *testing.T, remote string) {
	t.Helper()
	if refs := gitT(t, remote, "for-each-ref", "refs/signoff/commits/", "refs/heads/"); refs != "" {
		t.Fatalf("remote %s kept refs after a refusal:\n%s", remote, refs)
	}
}

func TestCommitName(t *testing.T) {
	sha := strings.Repeat("ab", 20)
	got, err := CommitName("local", "app", sha)
	if err != nil || got != "git/local/app/"+sha+".bundle" {
		t.Fatalf("CommitName = %q, %v", got, err)
	}
	for _, c := range []struct{ owner, name, sha string }{
		{"..", "app", sha}, {"local", "a/b", sha}, {"local", "a..b", sha}, {"", "app", sha},
		{"local", "app", "HEAD"}, {"local", "app", strings.ToUpper(sha)}, {"local", "app", sha[1:]},
	} {
		if got, err := CommitName(c.owner, c.name, c.sha); err == nil {
			t.Errorf("CommitName(%q, %q, %q) = %q, want an error", c.owner, c.name, c.sha, got)
		}
	}
}

func TestSharedCarriesCommitsToAnotherHost(t *testing.T) {
	ctx := context.Background()
	h := newTwoHosts(t)
	store := newStore(t)
	a := Shared{Remotes: h.a, Store: store}
	d, err := a.Export(ctx, "local", "app", h.base, h.c2)
	if err != nil {
		t.Fatal(err)
	}
	if d == "" || store.puts != 1 {
		t.Fatalf("export: digest %q after %d puts", d, store.puts)
	}
	bRemotes, bRemote := h.hostB(t)
	if gitT(t, bRemote, "rev-parse", "--is-shallow-repository") != "true" {
		t.Fatal("host B's remote is not shallow: the test no longer covers depth-1 registration")
	}
	if Has(ctx, bRemote, h.c1) || Has(ctx, bRemote, h.c2) {
		t.Fatal("host B has the new commits before fetching them")
	}
	b := Shared{Remotes: bRemotes, Store: store}
	if err := b.Ensure(ctx, "local", "app", h.c2); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{h.c1, h.c2} {
		if !Has(ctx, bRemote, c) {
			t.Fatalf("host B lacks commit %s after Ensure", c)
		}
	}
	gitT(t, bRemote, "fsck", "--no-dangling")
	if gets := store.gets; gets != 1 {
		t.Fatalf("Ensure downloaded %d times, want 1", gets)
	}

	// The control worker's deliverable reads the branch head. Pointing it back at c1 (not a
	// fast-forward) shows the update is forced; c1 came with c2's bundle, so neither call
	// downloads again.
	for _, c := range []string{h.c2, h.c1} {
		if err := b.EnsureBranch(ctx, "local", "app", "signoff/c1", c); err != nil {
			t.Fatal(err)
		}
		if head, err := Head(ctx, bRemote, "signoff/c1"); err != nil || head != c {
			t.Fatalf("branch head on host B = %q, %v; want %s", head, err, c)
		}
	}
	if err := b.Ensure(ctx, "local", "app", h.c2); err != nil || store.gets != 1 {
		t.Fatalf("second Ensure: %v after %d downloads, want no download", err, store.gets)
	}

	// A retried export finds the name linked and stores nothing.
	if d2, err := a.Export(ctx, "local", "app", h.base, h.c2); err != nil || d2 != d || store.puts != 1 {
		t.Fatalf("second export = %q, %v after %d puts; want %q after 1", d2, err, store.puts, d)
	}
	// An attempt that changed nothing exports nothing: every host holds the base.
	if d3, err := a.Export(ctx, "local", "app", h.base, h.base); err != nil || d3 != "" || store.puts != 1 {
		t.Fatalf("export of the base = %q, %v after %d puts", d3, err, store.puts)
	}
	if entries, err := store.List(ctx, "git/"); err != nil || len(entries) != 1 {
		t.Fatalf("store holds %v, %v; want the one bundle", entries, err)
	}
	// The exporting host already has the commit: Ensure there never touches the store.
	empty := newStore(t)
	if err := (Shared{Remotes: h.a, Store: empty}).Ensure(ctx, "local", "app", h.c2); err != nil || empty.gets != 0 {
		t.Fatalf("Ensure on the exporting host: %v after %d downloads", err, empty.gets)
	}
}

func TestSharedEnsureOfUnexportedCommit(t *testing.T) {
	ctx := context.Background()
	h := newTwoHosts(t)
	bRemotes, bRemote := h.hostB(t)
	err := Shared{Remotes: bRemotes, Store: newStore(t)}.Ensure(ctx, "local", "app", h.c2)
	if !errors.Is(err, artifacts.ErrNotFound) {
		t.Fatalf("Ensure of a commit never exported: %v, want ErrNotFound", err)
	}
	if !strings.Contains(err.Error(), h.c2) {
		t.Fatalf("error does not name the commit: %v", err)
	}
	noSharedRefs(t, bRemote)
}

func TestSharedExportRefusesWhatNoHostCouldFetch(t *testing.T) {
	ctx := context.Background()
	h := newTwoHosts(t)
	store := newStore(t)
	a := Shared{Remotes: h.a, Store: store}
	for _, c := range []struct{ why, base, sha string }{
		{"commit before its base", h.c2, h.c1},
		{"commit not in the remote", h.base, strings.Repeat("1", 40)},
		{"base not a SHA", "main", h.c2},
	} {
		if d, err := a.Export(ctx, "local", "app", c.base, c.sha); err == nil {
			t.Errorf("%s: exported as %q, want an error", c.why, d)
		}
	}
	if store.puts != 0 {
		t.Fatalf("refused exports stored %d blobs", store.puts)
	}
	// A bundle over the limit would be refused by every fetching host.
	a.MaxBundleBytes = 64
	if d, err := a.Export(ctx, "local", "app", h.base, h.c2); err == nil {
		t.Fatalf("oversized bundle exported as %q", d)
	}
}

func TestSharedRefusesHostileBundles(t *testing.T) {
	ctx := context.Background()
	h := newTwoHosts(t)
	c1Ref, c2Ref := commitRef(h.c1), commitRef(h.c2)

	// evil is a commit on the base whose tree holds a ".git" entry, which fsck rejects.
	blob := gitT(t, h.work, "hash-object", "-w", "b.txt")
	raw, err := hex.DecodeString(blob)
	if err != nil {
		t.Fatal(err)
	}
	treeFile := filepath.Join(t.TempDir(), "tree")
	if err := os.WriteFile(treeFile, append([]byte("100644 .git\x00"), raw...), 0o644); err != nil {
		t.Fatal(err)
	}
	tree := gitT(t, h.work, "hash-object", "-t", "tree", "--literally", "-w", treeFile)
	evil := gitT(t, h.work, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit-tree", tree, "-p", h.base, "-m", "evil")

	for _, c := range []struct {
		name string
		sha  string // the commit whose name the bundle is linked under
		data []byte
		max  int64
	}{
		{"another commit", h.c2, h.bundle(t, map[string]string{c1Ref: h.c1}, "^"+h.base), 0},
		{"the name's ref at another commit", h.c2, h.bundle(t, map[string]string{c2Ref: h.c1}, "^"+h.base), 0},
		{"an extra ref", h.c2, h.bundle(t, map[string]string{c2Ref: h.c2, "refs/heads/main": h.c2}, "^"+h.base), 0},
		{"a prerequisite the host lacks", h.c2, h.bundle(t, map[string]string{c2Ref: h.c2}, "^"+h.c1), 0},
		{"junk", h.c2, bytes.Repeat([]byte("not a bundle\n"), 10), 0},
		{"objects that fail fsck", evil, h.bundle(t, map[string]string{commitRef(evil): evil}, "^"+h.base), 0},
		{"over the size limit", h.c2, h.bundle(t, map[string]string{c2Ref: h.c2}, "^"+h.base), 64},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := newStore(t)
			link(t, store, c.sha, c.data)
			bRemotes, bRemote := h.hostB(t)
			b := Shared{Remotes: bRemotes, Store: store, MaxBundleBytes: c.max}
			if err := b.Ensure(ctx, "local", "app", c.sha); err == nil {
				t.Fatal("hostile bundle accepted")
			}
			noSharedRefs(t, bRemote)
			if _, err := Git(ctx, bRemote, "cat-file", "-e", c.sha); err == nil {
				t.Fatalf("refused bundle left commit %s in host B's objects", c.sha)
			}
			if c.max != 0 {
				// The bundle itself was sound: with the default limit it is accepted.
				b.MaxBundleBytes = 0
				if err := b.Ensure(ctx, "local", "app", c.sha); err != nil {
					t.Fatalf("sound bundle under the default limit: %v", err)
				}
			}
		})
	}
}

func TestSharedRefusesBadBranch(t *testing.T) {
	ctx := context.Background()
	h := newTwoHosts(t)
	store := newStore(t)
	if _, err := (Shared{Remotes: h.a, Store: store}).Export(ctx, "local", "app", h.base, h.c2); err != nil {
		t.Fatal(err)
	}
	bRemotes, bRemote := h.hostB(t)
	b := Shared{Remotes: bRemotes, Store: store}
	for _, branch := range []string{"main", "", "signoff/", "signoff", "refs/heads/signoff/x", "signoff/a..b",
		"signoff/a b", "signoff/x.lock", "signoff//x", "signoff/x/", "signoff/a@{1}", "-signoff/x"} {
		if err := b.EnsureBranch(ctx, "local", "app", branch, h.c2); err == nil {
			t.Errorf("branch %q accepted", branch)
		}
	}
	noSharedRefs(t, bRemote)
	if Has(ctx, bRemote, h.c2) {
		t.Fatal("a refused branch still fetched the commit")
	}
	if err := b.EnsureBranch(ctx, "local", "app", "signoff/c1", h.c2); err != nil {
		t.Fatal(err)
	}
}

func TestSharedConcurrentEnsure(t *testing.T) {
	ctx := context.Background()
	h := newTwoHosts(t)
	store := newStore(t)
	if _, err := (Shared{Remotes: h.a, Store: store.Store}).Export(ctx, "local", "app", h.base, h.c2); err != nil {
		t.Fatal(err)
	}
	bRemotes, bRemote := h.hostB(t)
	// Workers on one host may bring the same commit at once (a preview and a publish): each
	// works in its own scratch space and none may fail because another got there first.
	errs := make(chan error, 4)
	for range cap(errs) {
		go func() { errs <- (Shared{Remotes: bRemotes, Store: store.Store}).Ensure(ctx, "local", "app", h.c2) }()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if !Has(ctx, bRemote, h.c2) {
		t.Fatal("host B lacks the commit")
	}
}

// history is a source repository whose main branch has three commits, h[0] to h[2], each
// adding a file, and a side commit off h[0]: h[2] is the base, the rest is history no other
// host should receive.
type history struct {
	src  string
	h    [3]string
	side string
}

func newHistory(t *testing.T) history {
	t.Helper()
	hs := history{src: t.TempDir()}
	gitT(t, hs.src, "init", "--quiet")
	commit := func(file string) string {
		if err := os.WriteFile(filepath.Join(hs.src, file), []byte(file+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		gitT(t, hs.src, "add", file)
		gitT(t, hs.src, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "--quiet", "-m", file)
		return gitT(t, hs.src, "rev-parse", "HEAD")
	}
	for i := range hs.h {
		hs.h[i] = commit("h" + string(rune('0'+i)) + ".txt")
	}
	gitT(t, hs.src, "checkout", "--quiet", "-b", "side", hs.h[0])
	hs.side = commit("side.txt")
	gitT(t, hs.src, "checkout", "--quiet", "main")
	return hs
}

func (hs history) base() string { return hs.h[2] }

// commitOn makes one commit on branch signoff/c1 over the base in remote and pushes it, as
// an execute worker does, and returns it.
func commitOn(t *testing.T, remote, base string) string {
	t.Helper()
	work := filepath.Join(t.TempDir(), "work")
	gitT(t, filepath.Dir(work), "clone", "--quiet", "--no-checkout", remote, work)
	gitT(t, work, "checkout", "--quiet", "-B", "signoff/c1", base)
	if err := os.WriteFile(filepath.Join(work, "new.txt"), []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitT(t, work, "add", "new.txt")
	gitT(t, work, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "--quiet", "-m", "new")
	gitT(t, work, "push", "--quiet", "origin", "signoff/c1")
	return gitT(t, work, "rev-parse", "HEAD")
}

// checkBaseOnly fails unless remote holds base whole as Register leaves it (a shallow
// boundary, tagged) and none of the history before it.
func checkBaseOnly(t *testing.T, remote string, hs history) {
	t.Helper()
	ctx := context.Background()
	base := hs.base()
	if !complete(ctx, remote, base) {
		t.Fatalf("remote %s lacks the base %s or its objects", remote, base)
	}
	if files := gitT(t, remote, "ls-tree", "-r", "--name-only", base); files != "h0.txt\nh1.txt\nh2.txt" {
		t.Fatalf("base tree holds %q", files)
	}
	if got := gitT(t, remote, "show", base+":h1.txt"); got != "h1.txt" {
		t.Fatalf("base blob h1.txt = %q", got)
	}
	shallow, err := os.ReadFile(filepath.Join(remote, "shallow"))
	if err != nil || !strings.Contains(string(shallow), base+"\n") {
		t.Fatalf("remote is not shallow at the base: %q, %v", shallow, err)
	}
	for _, ref := range []string{BaseTag(base), baseRef(base)} {
		if got := gitT(t, remote, "rev-parse", "--verify", ref+"^{commit}"); got != base {
			t.Fatalf("%s = %s, want the base %s", ref, got, base)
		}
	}
	for _, c := range hs.h[:2] {
		if _, err := Git(ctx, remote, "cat-file", "-e", c); err == nil {
			t.Fatalf("remote holds commit %s from before the base", c)
		}
	}
	// The execute queue clones through upload-pack, which sends branches and tags only.
	clone := filepath.Join(t.TempDir(), "clone")
	gitT(t, filepath.Dir(clone), "clone", "--quiet", "--no-checkout", "file://"+remote, clone)
	gitT(t, clone, "checkout", "--quiet", "-B", "signoff/x", base)
	if b, err := os.ReadFile(filepath.Join(clone, "h2.txt")); err != nil || string(b) != "h2.txt\n" {
		t.Fatalf("checked-out base: %q, %v", b, err)
	}
}

func TestBaseName(t *testing.T) {
	sha := strings.Repeat("ab", 20)
	got, err := BaseName("local", "app", sha)
	if err != nil || got != "git/local/app/"+sha+".base.bundle" {
		t.Fatalf("BaseName = %q, %v", got, err)
	}
	for _, c := range []struct{ owner, name, sha string }{{"..", "app", sha}, {"local", "a/b", sha}, {"local", "app", "HEAD"}} {
		if got, err := BaseName(c.owner, c.name, c.sha); err == nil {
			t.Errorf("BaseName(%q, %q, %q) = %q, want an error", c.owner, c.name, c.sha, got)
		}
	}
}

// The base is registered on host A (the CLI's) and built on host B, which has never seen the
// repository. A's remote may be shallow (registered) or a full clone; either way only the
// base crosses, and B then takes the attempt's commits after it.
func TestSharedCarriesBaseToHostWithoutRemote(t *testing.T) {
	ctx := context.Background()
	hs := newHistory(t)
	base := hs.base()
	digests := map[string]artifacts.Digest{}
	for _, full := range []bool{false, true} {
		kind := map[bool]string{false: "shallow", true: "full"}[full]
		t.Run(kind, func(t *testing.T) {
			a := Remotes{Root: t.TempDir()}
			var aRemote string
			var err error
			if full {
				aRemote, err = a.Ensure(ctx, "local", "app", hs.src)
			} else {
				aRemote, err = a.Register(ctx, "local", "app", hs.src, base)
			}
			if err != nil {
				t.Fatal(err)
			}
			shallow := gitT(t, aRemote, "rev-parse", "--is-shallow-repository")
			if shallow != map[bool]string{false: "true", true: "false"}[full] || Has(ctx, aRemote, hs.h[0]) != full {
				t.Fatalf("host A's remote is not %s: the test no longer covers it", kind)
			}
			store := newStore(t)
			as := Shared{Remotes: a, Store: store}
			d, err := as.ExportBase(ctx, "local", "app", base)
			if err != nil {
				t.Fatal(err)
			}
			digests[kind] = d
			if d2, err := as.ExportBase(ctx, "local", "app", base); err != nil || d2 != d || store.puts != 1 {
				t.Fatalf("second ExportBase = %q, %v after %d puts; want %q after 1", d2, err, store.puts, d)
			}
			name, _ := BaseName("local", "app", base)
			if linked, err := store.Resolve(ctx, name); err != nil || linked != d {
				t.Fatalf("%s resolves to %q, %v; want %q", name, linked, err, d)
			}

			b := Remotes{Root: t.TempDir()}
			bRemote, _ := b.Path("local", "app")
			bs := Shared{Remotes: b, Store: store}
			if err := bs.Ensure(ctx, "local", "app", base); err != nil {
				t.Fatal(err)
			}
			checkBaseOnly(t, bRemote, hs)
			if err := bs.Ensure(ctx, "local", "app", base); err != nil || store.gets != 1 {
				t.Fatalf("second Ensure of the base: %v after %d downloads, want 1", err, store.gets)
			}

			c1 := commitOn(t, aRemote, base)
			if _, err := as.Export(ctx, "local", "app", base, c1); err != nil {
				t.Fatal(err)
			}
			if err := bs.EnsureBranch(ctx, "local", "app", "signoff/c1", c1); err != nil {
				t.Fatal(err)
			}
			if head, err := Head(ctx, bRemote, "signoff/c1"); err != nil || head != c1 {
				t.Fatalf("branch head on host B = %q, %v; want %s", head, err, c1)
			}
			gitT(t, bRemote, "fsck", "--no-dangling")
			if _, err := Git(ctx, bRemote, "cat-file", "-e", hs.h[1]); err == nil {
				t.Fatal("host B received history before the base with the commit")
			}
		})
	}
	// The bundle is made from a depth-1 copy either way, so a full remote puts no history in.
	if digests["shallow"] != digests["full"] {
		t.Errorf("base bundle from a full remote %s differs from a shallow remote's %s", digests["full"], digests["shallow"])
	}
}

// A commit whose base this host lacks brings the base's bundle first: onto no remote at
// all, or onto a remote registered for another contract's base.
func TestSharedEnsureBringsTheBaseOfACommit(t *testing.T) {
	ctx := context.Background()
	hs := newHistory(t)
	base := hs.base()
	a := Remotes{Root: t.TempDir()}
	aRemote, err := a.Register(ctx, "local", "app", hs.src, base)
	if err != nil {
		t.Fatal(err)
	}
	c1 := commitOn(t, aRemote, base)
	for _, other := range []bool{false, true} {
		t.Run(map[bool]string{false: "no remote", true: "another base"}[other], func(t *testing.T) {
			store := newStore(t)
			as := Shared{Remotes: a, Store: store}
			if _, err := as.Export(ctx, "local", "app", base, c1); err != nil {
				t.Fatal(err)
			}
			b := Remotes{Root: t.TempDir()}
			bRemote, _ := b.Path("local", "app")
			if other {
				if _, err := b.Register(ctx, "local", "app", hs.src, hs.side); err != nil {
					t.Fatal(err)
				}
			}
			bs := Shared{Remotes: b, Store: store}
			// With only the commit's bundle in the store, the host cannot take it.
			err := bs.EnsureBranch(ctx, "local", "app", "signoff/c1", c1)
			if err == nil {
				t.Fatal("commit taken without its base")
			}
			if errors.Is(err, artifacts.ErrNotFound) {
				t.Errorf("error says the commit is not in the store, and it is: %v", err)
			}
			if !other && !strings.Contains(err.Error(), "register the repository first") {
				t.Errorf("error does not say to register the repository: %v", err)
			}
			if isRemote(bRemote) != other {
				t.Fatalf("refusal changed whether host B has a remote (now %v)", isRemote(bRemote))
			}

			if _, err := as.ExportBase(ctx, "local", "app", base); err != nil {
				t.Fatal(err)
			}
			if err := bs.EnsureBranch(ctx, "local", "app", "signoff/c1", c1); err != nil {
				t.Fatal(err)
			}
			if head, err := Head(ctx, bRemote, "signoff/c1"); err != nil || head != c1 {
				t.Fatalf("branch head on host B = %q, %v; want %s", head, err, c1)
			}
			checkBaseOnly(t, bRemote, hs)
			if other && !complete(ctx, bRemote, hs.side) {
				t.Fatal("host B lost the other contract's base")
			}
			gitT(t, bRemote, "fsck", "--no-dangling")
		})
	}
}

func TestSharedEnsureWithNothingAnywhere(t *testing.T) {
	ctx := context.Background()
	hs := newHistory(t)
	b := Remotes{Root: t.TempDir()}
	err := Shared{Remotes: b, Store: newStore(t)}.Ensure(ctx, "local", "app", hs.base())
	if !errors.Is(err, artifacts.ErrNotFound) || !strings.Contains(err.Error(), hs.base()) {
		t.Fatalf("Ensure of a commit in no store and on no host: %v, want ErrNotFound naming it", err)
	}
	if entries, _ := os.ReadDir(b.Root); len(entries) != 0 {
		t.Fatalf("host B's remotes root holds %v", entries)
	}
}

func TestSharedExportBaseRefuses(t *testing.T) {
	ctx := context.Background()
	hs := newHistory(t)
	a := Remotes{Root: t.TempDir()}
	store := newStore(t)
	as := Shared{Remotes: a, Store: store}
	if _, err := as.ExportBase(ctx, "local", "app", hs.base()); err == nil {
		t.Error("exported a base from a host with no remote")
	}
	if _, err := a.Register(ctx, "local", "app", hs.src, hs.base()); err != nil {
		t.Fatal(err)
	}
	for _, sha := range []string{hs.side, "main", strings.Repeat("1", 40)} {
		if d, err := as.ExportBase(ctx, "local", "app", sha); err == nil {
			t.Errorf("exported base %q as %q", sha, d)
		}
	}
	as.MaxBundleBytes = 64
	if d, err := as.ExportBase(ctx, "local", "app", hs.base()); err == nil {
		t.Errorf("oversized base bundle exported as %q", d)
	}
	if store.puts != 0 {
		t.Fatalf("refused exports stored %d blobs", store.puts)
	}
}

// shallowBundle writes a bundle with refs set as given (ref -> commit of src), each commit
// fetched at depth 1, so the bundle needs nothing: a base bundle in all but, perhaps, its refs.
func shallowBundle(t *testing.T, src string, refs map[string]string) []byte {
	t.Helper()
	scratch := filepath.Join(t.TempDir(), "scratch.git")
	gitT(t, filepath.Dir(scratch), "init", "--quiet", "--bare", scratch)
	names := make([]string, 0, len(refs))
	for ref, sha := range refs {
		gitT(t, scratch, "fetch", "--quiet", "--depth=1", "--upload-pack=git -c uploadpack.allowAnySHA1InWant=true upload-pack", src, sha+":"+ref)
		names = append(names, ref)
	}
	return bundleOf(t, scratch, names...)
}

func bundleOf(t *testing.T, repo string, args ...string) []byte {
	t.Helper()
	file := filepath.Join(t.TempDir(), "x.bundle")
	gitT(t, repo, append([]string{"bundle", "create", "--quiet", file}, args...)...)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestSharedRefusesHostileBaseBundles(t *testing.T) {
	ctx := context.Background()
	hs := newHistory(t)
	base, parent := hs.base(), hs.h[1]

	// evil is a root commit whose tree holds a ".git" entry, which fsck rejects.
	blob := gitT(t, hs.src, "hash-object", "-w", "h0.txt")
	raw, err := hex.DecodeString(blob)
	if err != nil {
		t.Fatal(err)
	}
	treeFile := filepath.Join(t.TempDir(), "tree")
	if err := os.WriteFile(treeFile, append([]byte("100644 .git\x00"), raw...), 0o644); err != nil {
		t.Fatal(err)
	}
	tree := gitT(t, hs.src, "hash-object", "-t", "tree", "--literally", "-w", treeFile)
	evil := gitT(t, hs.src, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit-tree", tree, "-m", "evil")

	gitT(t, hs.src, "update-ref", baseRef(base), base)
	withPrerequisite := bundleOf(t, hs.src, baseRef(base), "^"+parent)
	gitT(t, hs.src, "update-ref", "-d", baseRef(base))

	for _, c := range []struct {
		name    string
		sha     string   // the commit whose base name the bundle is linked under
		carries []string // commits in the bundle, which must not reach host B
		data    []byte
		max     int64
		why     string // in the refusal, so the case is refused for its own reason
	}{
		{"a commit's ref", base, []string{base}, shallowBundle(t, hs.src, map[string]string{commitRef(base): base}), 0, "must carry only"},
		{"its ref at another commit", base, []string{parent}, shallowBundle(t, hs.src, map[string]string{baseRef(base): parent}), 0, "must carry only"},
		{"an extra ref", base, []string{base, parent}, shallowBundle(t, hs.src, map[string]string{baseRef(base): base, "refs/heads/main": parent}), 0, "must carry only"},
		{"a prerequisite", base, []string{base}, withPrerequisite, 0, "needs commits " + parent},
		{"junk", base, nil, bytes.Repeat([]byte("not a bundle\n"), 10), 0, "list-heads"},
		{"objects that fail fsck", evil, []string{evil}, shallowBundle(t, hs.src, map[string]string{baseRef(evil): evil}), 0, "dotgit"},
		{"over the size limit", base, []string{base}, shallowBundle(t, hs.src, map[string]string{baseRef(base): base}), 64, "limit"},
	} {
		for _, other := range []bool{false, true} {
			t.Run(c.name+map[bool]string{false: ", no remote", true: ", another base"}[other], func(t *testing.T) {
				store := newStore(t)
				d, err := store.Put(ctx, bytes.NewReader(c.data))
				if err != nil {
					t.Fatal(err)
				}
				name, _ := BaseName("local", "app", c.sha)
				if err := store.Link(ctx, name, d); err != nil {
					t.Fatal(err)
				}
				b := Remotes{Root: t.TempDir()}
				bRemote, _ := b.Path("local", "app")
				if other {
					if _, err := b.Register(ctx, "local", "app", hs.src, hs.side); err != nil {
						t.Fatal(err)
					}
				}
				bs := Shared{Remotes: b, Store: store, MaxBundleBytes: c.max}
				err = bs.Ensure(ctx, "local", "app", c.sha)
				if err == nil {
					t.Fatal("hostile base bundle accepted")
				}
				if !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(c.why)) {
					t.Fatalf("refused, but not for %q: %v", c.why, err)
				}
				if !other {
					if entries, _ := os.ReadDir(filepath.Dir(bRemote)); len(entries) != 0 {
						t.Fatalf("refusal left %v in host B's remotes", entries)
					}
				} else {
					if refs := gitT(t, bRemote, "for-each-ref", "--format=%(refname)"); refs != baseRef(hs.side)+"\n"+BaseTag(hs.side) {
						t.Fatalf("host B's refs after a refusal:\n%s", refs)
					}
					for _, x := range c.carries {
						if _, err := Git(ctx, bRemote, "cat-file", "-e", x); err == nil {
							t.Fatalf("refused bundle left commit %s in host B's objects", x)
						}
					}
				}
				if c.max != 0 {
					// The bundle itself was sound: with the default limit it is accepted.
					bs.MaxBundleBytes = 0
					if err := bs.Ensure(ctx, "local", "app", c.sha); err != nil {
						t.Fatalf("sound bundle under the default limit: %v", err)
					}
					checkBaseOnly(t, bRemote, hs)
				}
			})
		}
	}
}

// Workers on a host with no remote may bring the same base at once: each builds its own
// remote and one wins the rename; none may fail because another got there first.
func TestSharedConcurrentEnsureOfBase(t *testing.T) {
	ctx := context.Background()
	hs := newHistory(t)
	a := Remotes{Root: t.TempDir()}
	if _, err := a.Register(ctx, "local", "app", hs.src, hs.base()); err != nil {
		t.Fatal(err)
	}
	store := newStore(t)
	if _, err := (Shared{Remotes: a, Store: store}).ExportBase(ctx, "local", "app", hs.base()); err != nil {
		t.Fatal(err)
	}
	b := Remotes{Root: t.TempDir()}
	errs := make(chan error, 4)
	for range cap(errs) {
		go func() { errs <- (Shared{Remotes: b, Store: store.Store}).Ensure(ctx, "local", "app", hs.base()) }()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	bRemote, _ := b.Path("local", "app")
	checkBaseOnly(t, bRemote, hs)
	entries, _ := os.ReadDir(filepath.Dir(bRemote))
	if len(entries) != 1 {
		t.Fatalf("host B's remotes: %v, want the one remote", entries)
	}
}
