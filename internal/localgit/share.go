package localgit

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/signoff/signoff/internal/artifacts"
)

// defaultMaxBundleBytes bounds a fetched bundle when Shared.MaxBundleBytes is unset: an
// attempt's commits run to kilobytes or a few megabytes, so this only stops a runaway or
// hostile blob from filling the disk.
const defaultMaxBundleBytes int64 = 256 << 20

// Shared moves commits between this host's bare remotes and other hosts' through the
// artifact store. The execute and control workers may run on hosts with no shared disk. A
// commit's bundle carries only the commits after the contract's base; the base travels in a
// bundle of its own (ExportBase), without history, since the host that registers it is
// often not the one that builds it.
type Shared struct {
	Remotes Remotes
	Store   artifacts.Store
	// MaxBundleBytes bounds a bundle fetched from the store (256 MiB when 0 or less). Export
	// refuses to publish a bundle larger than that, since no host would accept it.
	MaxBundleBytes int64
}

func (s Shared) maxBundleBytes() int64 {
	if s.MaxBundleBytes <= 0 {
		return defaultMaxBundleBytes
	}
	return s.MaxBundleBytes
}

// CommitName is the store name of the bundle that carries commit sha of owner/name:
// "git/<owner>/<name>/<sha>.bundle". Keying by commit makes a retried or duplicated export
// land on the same name, and a name never moves once linked.
func CommitName(owner, name, sha string) (string, error) {
	return bundleName(owner, name, sha, ".bundle")
}

// BaseName is the store name of the bundle that carries base commit sha of owner/name
// without its history: "git/<owner>/<name>/<sha>.base.bundle". It differs from CommitName
// because the two bundles differ in kind: a commit's needs its base, a base's needs nothing.
func BaseName(owner, name, sha string) (string, error) {
	return bundleName(owner, name, sha, ".base.bundle")
}

func bundleName(owner, name, sha, suffix string) (string, error) {
	if _, err := (Remotes{}).Path(owner, name); err != nil {
		return "", err
	}
	if !fullSHA.MatchString(sha) {
		return "", fmt.Errorf("commit of %s/%s: %q is not a full commit SHA", owner, name, sha)
	}
	n := "git/" + owner + "/" + name + "/" + sha + suffix
	if err := artifacts.ValidateName(n); err != nil {
		return "", fmt.Errorf("commit %s of %s/%s: %w", sha, owner, name, err)
	}
	return n, nil
}

// commitRef is the one ref a commit's bundle carries, and where the fetching host keeps it.
func commitRef(sha string) string { return "refs/signoff/commits/" + sha }

// baseRef is the one ref a base's bundle carries: the ref Register fetches a base into.
func baseRef(sha string) string { return "refs/signoff/bases/" + sha }

// Export bundles the commits from base (exclusive) up to sha (inclusive) of owner/name's
// remote, with sha as the bundle's only ref (refs/signoff/commits/<sha>), puts it in the
// store and links CommitName to it, returning the bundle's digest.
//
// A commit whose name is already linked is not exported again: another worker or a retried
// activity got there first, and while its bundle bytes may differ, the commit cannot. Export
// then returns the digest the name points at. When base == sha there is nothing to carry
// (every host holds the base), so it returns "" and no error.
func (s Shared) Export(ctx context.Context, owner, name, base, sha string) (artifacts.Digest, error) {
	key, err := CommitName(owner, name, sha)
	if err != nil {
		return "", fmt.Errorf("export: %w", err)
	}
	if !fullSHA.MatchString(base) {
		return "", fmt.Errorf("export %s/%s: base %q is not a full commit SHA", owner, name, base)
	}
	if base == sha {
		return "", nil
	}
	if d, err := s.Store.Resolve(ctx, key); err == nil {
		return d, nil
	} else if !errors.Is(err, artifacts.ErrNotFound) {
		return "", fmt.Errorf("export %s/%s commit %s: %w", owner, name, sha, err)
	}
	remote, err := s.remote(owner, name)
	if err != nil {
		return "", fmt.Errorf("export: %w", err)
	}
	for _, c := range []string{base, sha} {
		if !Has(ctx, remote, c) {
			return "", fmt.Errorf("export %s/%s: remote %s has no commit %s", owner, name, remote, c)
		}
	}
	if _, err := Git(ctx, remote, "merge-base", "--is-ancestor", base, sha); err != nil {
		return "", fmt.Errorf("export %s/%s: commit %s does not descend from base %s: %w", owner, name, sha, base, err)
	}
	// The bundle's prerequisites are the boundary of sha ^base. Other hosts hold the base and
	// nothing older (their remotes may be depth-1), so any other boundary commit, such as a
	// merge from older history, would make a bundle no other host can fetch: refuse it here,
	// where the cause is visible.
	boundary, err := Git(ctx, remote, "rev-list", "--boundary", sha, "^"+base)
	if err != nil {
		return "", fmt.Errorf("export %s/%s commit %s: %w", owner, name, sha, err)
	}
	for line := range strings.Lines(boundary) {
		if c, ok := strings.CutPrefix(strings.TrimSpace(line), "-"); ok && c != base {
			return "", fmt.Errorf("export %s/%s commit %s: it needs commit %s besides the base %s, which other hosts lack", owner, name, sha, c, base)
		}
	}
	ref := commitRef(sha)
	if _, err := Git(ctx, remote, "update-ref", ref, sha); err != nil {
		return "", fmt.Errorf("export %s/%s commit %s: %w", owner, name, sha, err)
	}
	dir, err := os.MkdirTemp("", "signoff-export-*")
	if err != nil {
		return "", fmt.Errorf("export %s/%s commit %s: %w", owner, name, sha, err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	file := filepath.Join(dir, "commit.bundle")
	if _, err := Git(ctx, remote, "bundle", "create", "--quiet", file, ref, "^"+base); err != nil {
		return "", fmt.Errorf("export %s/%s commit %s: %w", owner, name, sha, err)
	}
	d, err := s.putOnce(ctx, key, file)
	if err != nil {
		return "", fmt.Errorf("export %s/%s commit %s: %w", owner, name, sha, err)
	}
	return d, nil
}

// ExportBase puts commit sha of owner/name's remote in the store as a bundle of that commit
// and its tree, with refs/signoff/bases/<sha> as its only ref, and links BaseName to it. It is
// how a base registered on one host (where `signoff contract new` runs) reaches the host
// that builds it. The bundle has no history, since the fetching remote may be shallow and a
// real history is large; it is made from a depth-1 copy, so a full remote exports no more
// than a shallow one. Like Export, a name already linked is not exported again: its digest is
// returned.
func (s Shared) ExportBase(ctx context.Context, owner, name, sha string) (artifacts.Digest, error) {
	key, err := BaseName(owner, name, sha)
	if err != nil {
		return "", fmt.Errorf("export base: %w", err)
	}
	fail := func(err error) (artifacts.Digest, error) {
		return "", fmt.Errorf("export base %s of %s/%s: %w", sha, owner, name, err)
	}
	if d, err := s.Store.Resolve(ctx, key); err == nil {
		return d, nil
	} else if !errors.Is(err, artifacts.ErrNotFound) {
		return fail(err)
	}
	remote, err := s.remote(owner, name)
	if err != nil {
		return fail(err)
	}
	if !Has(ctx, remote, sha) {
		return fail(fmt.Errorf("remote %s has no such commit", remote))
	}
	dir, err := os.MkdirTemp("", "signoff-export-base-*")
	if err != nil {
		return fail(err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	// Registering the commit in a scratch remote is exactly the depth-1 copy the bundle needs.
	scratch, err := (Remotes{Root: dir}).Register(ctx, owner, name, remote, sha)
	if err != nil {
		return fail(err)
	}
	file := filepath.Join(dir, "base.bundle")
	if _, err := Git(ctx, scratch, "bundle", "create", "--quiet", file, baseRef(sha)); err != nil {
		return fail(err)
	}
	// A fetching host may have nothing of the repository: a prerequisite would strand it.
	switch pre, err := bundlePrerequisites(file); {
	case err != nil:
		return fail(err)
	case len(pre) > 0:
		return fail(fmt.Errorf("its bundle needs commits %s, want none", strings.Join(pre, ", ")))
	}
	d, err := s.putOnce(ctx, key, file)
	if err != nil {
		return fail(err)
	}
	return d, nil
}

// putOnce stores a bundle file and links key to it. Losing a race to another exporter is
// success, since a name's commit cannot differ even if its bundle bytes do: the digest the
// name points at is returned.
func (s Shared) putOnce(ctx context.Context, key, file string) (artifacts.Digest, error) {
	d, err := s.put(ctx, file)
	if err != nil {
		return "", err
	}
	var conflict *artifacts.ConflictError
	switch err := s.Store.Link(ctx, key, d); {
	case errors.As(err, &conflict):
		return conflict.Have, nil
	case err != nil:
		return "", err
	}
	return d, nil
}

// put stores a bundle file, refusing one that no fetching host would accept.
func (s Shared) put(ctx context.Context, file string) (artifacts.Digest, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	info, err := f.Stat()
	if err != nil {
		return "", err
	}
	if info.Size() > s.maxBundleBytes() {
		return "", fmt.Errorf("bundle of %d bytes exceeds the %d-byte limit", info.Size(), s.maxBundleBytes())
	}
	return s.Store.Put(ctx, f)
}

// Ensure makes commit sha present in owner/name's remote on this host, fetching its bundle
// from the store when it is not: the commit's (CommitName), or failing that the base's
// (BaseName), since the commit may be a contract's base registered on another host. A
// commit bundle whose base this host lacks brings that base's bundle first, and a base
// bundle creates the remote when this host has none.
// Bundles are hostile input: size-limited, carrying exactly the one ref their name implies,
// needing only a base (a commit's) or nothing (a base's), and their objects reach the remote
// only after fsck passes.
// A commit under neither name in the store is an error wrapping artifacts.ErrNotFound.
func (s Shared) Ensure(ctx context.Context, owner, name, sha string) error {
	_, err := s.ensure(ctx, owner, name, sha)
	return err
}

// EnsureBranch is Ensure plus pointing refs/heads/<branch> at sha (forced), for the control
// worker's deliverable, which checks that the branch head is the attempt's commit. The branch
// must be a valid branch name under "signoff/"; a bad one is refused before any fetch.
func (s Shared) EnsureBranch(ctx context.Context, owner, name, branch, sha string) error {
	if _, err := s.Remotes.Path(owner, name); err != nil {
		return fmt.Errorf("ensure branch: %w", err)
	}
	if err := checkBranch(ctx, branch); err != nil {
		return fmt.Errorf("ensure branch of %s/%s: %w", owner, name, err)
	}
	remote, err := s.ensure(ctx, owner, name, sha)
	if err != nil {
		return err
	}
	if _, err := Git(ctx, remote, "update-ref", "refs/heads/"+branch, sha); err != nil {
		return fmt.Errorf("ensure branch %s of %s/%s at %s: %w", branch, owner, name, sha, err)
	}
	head, err := Head(ctx, remote, branch)
	if err != nil {
		return fmt.Errorf("ensure branch %s of %s/%s: %w", branch, owner, name, err)
	}
	if head != sha {
		return fmt.Errorf("ensure branch %s of %s/%s: head is %s, not %s", branch, owner, name, head, sha)
	}
	return nil
}

// checkBranch admits only Signoff's own branches, so a request cannot move main or a ref
// outside refs/heads. It runs outside the remote, which may not exist yet (its base still in
// the store); git needs no repository to check a name.
func checkBranch(ctx context.Context, branch string) error {
	if !strings.HasPrefix(branch, "signoff/") {
		return fmt.Errorf("branch %q is not under signoff/", branch)
	}
	out, err := Git(ctx, os.TempDir(), "check-ref-format", "--branch", branch)
	if err != nil {
		return fmt.Errorf("branch %q is not a valid branch name: %w", branch, err)
	}
	if strings.TrimSpace(out) != branch {
		return fmt.Errorf("branch %q is not a plain branch name (git reads it as %q)", branch, strings.TrimSpace(out))
	}
	return nil
}

// remote is owner/name's bare remote, which must exist: a missing one means this host was
// never set up for the repository and the store has no base to set it up from.
func (s Shared) remote(owner, name string) (string, error) {
	p, err := s.Remotes.Path(owner, name)
	if err != nil {
		return "", err
	}
	if !isRemote(p) {
		return "", fmt.Errorf("no remote for %s/%s on this host (register the repository first): %w", owner, name, os.ErrNotExist)
	}
	return p, nil
}

// isRemote reports whether a bare remote exists at p.
func isRemote(p string) bool {
	_, err := os.Stat(filepath.Join(p, "HEAD"))
	return err == nil
}

// complete reports whether the remote holds commit sha with everything it reaches. A bare
// object check is not enough: a fetch that failed part-way can leave a commit object behind
// without its tree.
func complete(ctx context.Context, remote, sha string) bool {
	if !Has(ctx, remote, sha) {
		return false
	}
	_, err := Git(ctx, remote, "rev-list", "--objects", "--quiet", sha, "--not", "--all")
	return err == nil
}

func (s Shared) ensure(ctx context.Context, owner, name, sha string) (string, error) {
	key, err := CommitName(owner, name, sha)
	if err != nil {
		return "", fmt.Errorf("ensure: %w", err)
	}
	p, err := s.Remotes.Path(owner, name)
	if err != nil {
		return "", fmt.Errorf("ensure: %w", err)
	}
	if isRemote(p) && complete(ctx, p, sha) {
		return p, nil
	}
	fail := func(err error) (string, error) {
		return "", fmt.Errorf("ensure %s/%s commit %s: %w", owner, name, sha, err)
	}
	d, err := s.Store.Resolve(ctx, key)
	if errors.Is(err, artifacts.ErrNotFound) {
		// The commit may be a base, which travels under its own name.
		remote, err := s.ensureBase(ctx, owner, name, sha)
		if err != nil {
			return fail(fmt.Errorf("no bundle %s in the artifact store; as a base: %w", key, err))
		}
		return remote, nil
	}
	if err != nil {
		return fail(fmt.Errorf("bundle %s: %w", key, err))
	}
	dir, err := os.MkdirTemp("", "signoff-ensure-*")
	if err != nil {
		return fail(err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	ref := commitRef(sha)
	file, err := s.download(ctx, key, d, dir, ref, sha)
	if err != nil {
		return fail(err)
	}
	if err := s.ensurePrerequisite(ctx, owner, name, p, file); err != nil {
		return fail(fmt.Errorf("bundle %s: %w", key, err))
	}
	remote, err := s.remote(owner, name)
	if err != nil {
		return fail(err)
	}
	// verify runs in the remote: it checks the bundle's prerequisites (the base) are there.
	if _, err := Git(ctx, remote, "bundle", "verify", file); err != nil {
		return fail(fmt.Errorf("bundle %s refused: %w", key, err))
	}
	if err := quarantinedFetch(ctx, remote, filepath.Join(dir, "quarantine.git"), file, ref, ""); err != nil {
		// A concurrent Ensure of the same commit makes the loser's ref update fail; what
		// counts is that the commit arrived whole.
		if !complete(ctx, remote, sha) {
			return fail(fmt.Errorf("bundle %s refused: %w", key, err))
		}
	}
	if err := landed(ctx, remote, ref, sha); err != nil {
		return fail(fmt.Errorf("after fetching bundle %s: %w", key, err))
	}
	return remote, nil
}

// ensurePrerequisite brings the base a commit bundle needs from its own bundle when this
// host lacks it, creating the remote if need be: the attempt's base may have been registered
// on another host only. Export's bundles need their base and nothing else, so a bundle
// needing more than one missing commit is refused before the store is asked for any.
func (s Shared) ensurePrerequisite(ctx context.Context, owner, name, remote, file string) error {
	pre, err := bundlePrerequisites(file)
	if err != nil {
		return fmt.Errorf("refused: %w", err)
	}
	exists := isRemote(remote)
	var missing []string
	for _, c := range pre {
		if !exists || !Has(ctx, remote, c) {
			missing = append(missing, c)
		}
	}
	switch {
	case len(missing) == 0:
		return nil
	case len(missing) > 1:
		return fmt.Errorf("refused: it needs commits %s, which this host lacks; a commit's bundle needs only its base", strings.Join(missing, ", "))
	}
	_, err = s.ensureBase(ctx, owner, name, missing[0])
	switch {
	case err == nil:
		return nil
	case !exists && errors.Is(err, artifacts.ErrNotFound):
		_, err = s.remote(owner, name)
		return fmt.Errorf("%w; nor is its base %s in the artifact store", err, missing[0])
	}
	// Not wrapped: ErrNotFound would say the commit is not in the store, and it is.
	return fmt.Errorf("its base %s, which this host lacks: %v", missing[0], err)
}

// ensureBase makes base commit sha present in owner/name's remote from its base bundle,
// creating the remote when this host has none. It arrives as Register leaves a base: a
// shallow boundary (its parents are never fetched) under refs/signoff/bases/<sha>, tagged
// BaseTag(sha) so the execute queue's clones through upload-pack see it.
// The bundle is hostile input: size-limited, carrying exactly refs/signoff/bases/<sha> at sha,
// needing no commits, and its objects reach the remote only after fsck passes.
func (s Shared) ensureBase(ctx context.Context, owner, name, sha string) (string, error) {
	key, err := BaseName(owner, name, sha)
	if err != nil {
		return "", err
	}
	p, err := s.Remotes.Path(owner, name)
	if err != nil {
		return "", err
	}
	if isRemote(p) && complete(ctx, p, sha) {
		return p, nil
	}
	d, err := s.Store.Resolve(ctx, key)
	if err != nil {
		return "", fmt.Errorf("no base bundle %s in the artifact store: %w", key, err)
	}
	dir, err := os.MkdirTemp("", "signoff-ensure-base-*")
	if err != nil {
		return "", err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	file, err := s.download(ctx, key, d, dir, baseRef(sha), sha)
	if err != nil {
		return "", fmt.Errorf("base %w", err)
	}
	refuse := func(err error) (string, error) {
		return "", fmt.Errorf("base bundle %s refused: %w", key, err)
	}
	switch pre, err := bundlePrerequisites(file); {
	case err != nil:
		return refuse(err)
	case len(pre) > 0:
		return refuse(fmt.Errorf("it needs commits %s; a base's bundle must need none", strings.Join(pre, ", ")))
	}
	if !isRemote(p) {
		created, err := newRemoteFromBase(ctx, p, filepath.Join(dir, "new.git"), file, sha)
		if err != nil {
			return "", fmt.Errorf("base bundle %s: %w", key, err)
		}
		if created {
			return p, nil
		}
	}
	if err := fetchBase(ctx, p, filepath.Join(dir, "quarantine.git"), file, sha); err != nil {
		return "", fmt.Errorf("base bundle %s: %w", key, err)
	}
	return p, nil
}

// newRemoteFromBase creates the bare remote p holding only the base in bundle, and reports
// whether it did: false with no error when another worker created p first. The remote is
// built under a temporary name and renamed into place, so a remote never appears without its
// base, and a refused bundle leaves no remote behind.
func newRemoteFromBase(ctx context.Context, p, scratch, bundle, sha string) (bool, error) {
	return createRemote(ctx, p, func(tmp string) error { return fetchBase(ctx, tmp, scratch, bundle, sha) })
}

// fetchBase brings base sha from bundle into remote as a shallow boundary and tags it.
func fetchBase(ctx context.Context, remote, scratch, bundle, sha string) error {
	ref := baseRef(sha)
	if err := quarantinedFetch(ctx, remote, scratch, bundle, ref, sha); err != nil && !complete(ctx, remote, sha) {
		return err // complete after an error: a concurrent Ensure won the ref update
	}
	tag := BaseTag(sha)
	if _, err := Git(ctx, remote, "update-ref", tag, sha); err != nil && landed(ctx, remote, tag, sha) != nil {
		return err
	}
	return landed(ctx, remote, ref, sha)
}

// landed checks that ref of remote names sha and that the remote holds all of it.
func landed(ctx context.Context, remote, ref, sha string) error {
	got, err := Git(ctx, remote, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil || strings.TrimSpace(got) != sha {
		return fmt.Errorf("%s is %q (%v), not %s", ref, strings.TrimSpace(got), err, sha)
	}
	if !complete(ctx, remote, sha) {
		return fmt.Errorf("the remote lacks objects of commit %s", sha)
	}
	return nil
}

// checkHeads refuses a bundle that carries anything but ref at sha. git reads the refs; it
// needs no repository to, so dir may be any directory.
func checkHeads(ctx context.Context, dir, bundle, ref, sha string) error {
	heads, err := Git(ctx, dir, "bundle", "list-heads", bundle)
	if err != nil {
		return err
	}
	if got := strings.TrimSpace(heads); got != sha+" "+ref {
		return fmt.Errorf("it must carry only %s at %s, carries %q", ref, sha, got)
	}
	return nil
}

// maxBundleHeader bounds the header bundlePrerequisites reads: Export's and ExportBase's
// headers are a few lines, so a longer one is not theirs.
const maxBundleHeader = 64 << 10

// bundlePrerequisites reads the commits a bundle needs from its header (gitformat-bundle(5):
// a signature line, "@" capabilities, "-<sha> <comment>" prerequisites and "<sha> <ref>" refs,
// then a blank line). git lists them only while failing to verify the bundle in a repository
// that lacks them, and a host may not have the repository yet.
func bundlePrerequisites(file string) ([]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	lines := bufio.NewScanner(io.LimitReader(f, maxBundleHeader))
	if !lines.Scan() || (lines.Text() != "# v2 git bundle" && lines.Text() != "# v3 git bundle") {
		return nil, errors.New("not a v2 or v3 git bundle")
	}
	var pre []string
	for lines.Scan() {
		line := lines.Text()
		if line == "" {
			return pre, nil
		}
		if c, ok := strings.CutPrefix(line, "-"); ok {
			c, _, _ = strings.Cut(c, " ")
			if !fullSHA.MatchString(c) {
				return nil, fmt.Errorf("bundle prerequisite %q is not a full commit SHA", c)
			}
			pre = append(pre, c)
		}
	}
	if err := lines.Err(); err != nil {
		return nil, fmt.Errorf("bundle header: %w", err)
	}
	return nil, fmt.Errorf("bundle header not ended within %d bytes", maxBundleHeader)
}

// download copies bundle blob d (stored under key) into dir, refusing more than
// MaxBundleBytes, and refuses it unless it carries only ref at sha. Reading to the end is what
// makes the store check the digest, so a short or altered blob fails here.
func (s Shared) download(ctx context.Context, key string, d artifacts.Digest, dir, ref, sha string) (string, error) {
	rc, err := s.Store.Get(ctx, d)
	if err != nil {
		return "", fmt.Errorf("bundle %s (%s): %w", key, d, err)
	}
	defer func() { _ = rc.Close() }()
	file := filepath.Join(dir, "fetched.bundle")
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("bundle %s (%s): %w", key, d, err)
	}
	limit := s.maxBundleBytes()
	n, err := io.Copy(f, io.LimitReader(rc, limit+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		return "", fmt.Errorf("bundle %s (%s): %w", key, d, err)
	case n > limit:
		return "", fmt.Errorf("bundle %s (%s): larger than the %d-byte limit", key, d, limit)
	}
	if err := checkHeads(ctx, dir, file, ref, sha); err != nil {
		return "", fmt.Errorf("bundle %s refused: %w", key, err)
	}
	return file, nil
}

// quarantinedFetch brings ref from the bundle into remote with fsck on. Git before 2.46 does
// not fsck objects fetched from a bundle, whatever fetch.fsckObjects says, so the bundle is
// first fetched into a scratch repository that borrows the remote's objects (an alternate:
// the base is there) and shares its shallow boundary; the remote then fetches from the
// scratch repository over the ordinary protocol, whose index-pack does fsck. Objects that
// fail it never enter the remote's object store.
//
// A base's bundle carries commit boundary without its parents: the scratch repository lists
// it as shallow, or the bundle's fetch would fail its connectivity check, and the remote
// fetches it at depth 1, which makes it a shallow boundary there too, as Register does.
func quarantinedFetch(ctx context.Context, remote, scratch, bundle, ref, boundary string) error {
	fsck := []string{"-c", "transfer.fsckObjects=true", "-c", "fetch.fsckObjects=true"}
	fetch := []string{"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-auto-gc"}
	if _, err := Git(ctx, filepath.Dir(scratch), "init", "--quiet", "--bare", scratch); err != nil {
		return err
	}
	objects, err := filepath.Abs(filepath.Join(remote, "objects"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(scratch, "objects", "info", "alternates"), []byte(objects+"\n"), 0o600); err != nil {
		return fmt.Errorf("quarantine: %w", err)
	}
	shallow, err := os.ReadFile(filepath.Join(remote, "shallow"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("quarantine: %w", err)
	}
	if boundary != "" {
		if len(shallow) > 0 && shallow[len(shallow)-1] != '\n' {
			shallow = append(shallow, '\n')
		}
		shallow = append(shallow, boundary+"\n"...)
	}
	if len(shallow) > 0 {
		if err := os.WriteFile(filepath.Join(scratch, "shallow"), shallow, 0o600); err != nil {
			return fmt.Errorf("quarantine: %w", err)
		}
	}
	args := append(append(append([]string{}, fsck...), fetch...), bundle, ref+":"+ref)
	if _, err := Git(ctx, scratch, args...); err != nil {
		return err
	}
	args = append(append([]string{}, fsck...), fetch...)
	if boundary != "" {
		args = append(args, "--depth=1")
	}
	_, err = Git(ctx, remote, append(args, scratch, ref+":"+ref)...)
	return err
}
