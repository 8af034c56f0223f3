package localgit

import (
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
// artifact store. The execute and control workers may run on hosts with no shared disk; each
// host registers the contract's base itself, so a bundle carries only the commits after it.
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
	if _, err := (Remotes{}).Path(owner, name); err != nil {
		return "", err
	}
	if !fullSHA.MatchString(sha) {
		return "", fmt.Errorf("commit of %s/%s: %q is not a full commit SHA", owner, name, sha)
	}
	n := "git/" + owner + "/" + name + "/" + sha + ".bundle"
	if err := artifacts.ValidateName(n); err != nil {
		return "", fmt.Errorf("commit %s of %s/%s: %w", sha, owner, name, err)
	}
	return n, nil
}

// commitRef is the one ref a commit's bundle carries, and where the fetching host keeps it.
func commitRef(sha string) string { return "refs/signoff/commits/" + sha }

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
	d, err := s.put(ctx, file)
	if err != nil {
		return "", fmt.Errorf("export %s/%s commit %s: %w", owner, name, sha, err)
	}
	var conflict *artifacts.ConflictError
	switch err := s.Store.Link(ctx, key, d); {
	case errors.As(err, &conflict):
		return conflict.Have, nil // another exporter linked the name since Resolve
	case err != nil:
		return "", fmt.Errorf("export %s/%s commit %s: %w", owner, name, sha, err)
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
// from the store when it is not. The bundle is hostile input: it is size-limited, must carry
// exactly refs/signoff/commits/<sha> pointing at sha, must need only commits this remote
// holds, and its objects reach the remote only after fsck passes.
// A commit missing from the store is an error wrapping artifacts.ErrNotFound.
func (s Shared) Ensure(ctx context.Context, owner, name, sha string) error {
	_, err := s.ensure(ctx, owner, name, sha)
	return err
}

// EnsureBranch is Ensure plus pointing refs/heads/<branch> at sha (forced), for the control
// worker's deliverable, which checks that the branch head is the attempt's commit. The branch
// must be a valid branch name under "signoff/"; a bad one is refused before any fetch.
func (s Shared) EnsureBranch(ctx context.Context, owner, name, branch, sha string) error {
	remote, err := s.remote(owner, name)
	if err != nil {
		return fmt.Errorf("ensure branch: %w", err)
	}
	if err := checkBranch(ctx, remote, branch); err != nil {
		return fmt.Errorf("ensure branch of %s/%s: %w", owner, name, err)
	}
	if _, err := s.ensure(ctx, owner, name, sha); err != nil {
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
// outside refs/heads.
func checkBranch(ctx context.Context, remote, branch string) error {
	if !strings.HasPrefix(branch, "signoff/") {
		return fmt.Errorf("branch %q is not under signoff/", branch)
	}
	out, err := Git(ctx, remote, "check-ref-format", "--branch", branch)
	if err != nil {
		return fmt.Errorf("branch %q is not a valid branch name: %w", branch, err)
	}
	if strings.TrimSpace(out) != branch {
		return fmt.Errorf("branch %q is not a plain branch name (git reads it as %q)", branch, strings.TrimSpace(out))
	}
	return nil
}

// remote is owner/name's bare remote, which must exist: every host registers the
// contract's base itself, so a missing remote means this host was never set up for it.
func (s Shared) remote(owner, name string) (string, error) {
	p, err := s.Remotes.Path(owner, name)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(p, "HEAD")); err != nil {
		return "", fmt.Errorf("no remote for %s/%s on this host (register the repository first): %w", owner, name, err)
	}
	return p, nil
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
	remote, err := s.remote(owner, name)
	if err != nil {
		return "", fmt.Errorf("ensure: %w", err)
	}
	if complete(ctx, remote, sha) {
		return remote, nil
	}
	fail := func(err error) (string, error) {
		return "", fmt.Errorf("ensure %s/%s commit %s: %w", owner, name, sha, err)
	}
	d, err := s.Store.Resolve(ctx, key)
	if err != nil {
		return fail(fmt.Errorf("no bundle %s in the artifact store: %w", key, err))
	}
	dir, err := os.MkdirTemp("", "signoff-ensure-*")
	if err != nil {
		return fail(err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	file := filepath.Join(dir, "commit.bundle")
	if err := s.download(ctx, d, file); err != nil {
		return fail(fmt.Errorf("bundle %s (%s): %w", key, d, err))
	}
	// verify runs in the remote: it checks the bundle's prerequisites (the base) are there.
	if _, err := Git(ctx, remote, "bundle", "verify", file); err != nil {
		return fail(fmt.Errorf("bundle %s refused: %w", key, err))
	}
	ref := commitRef(sha)
	heads, err := Git(ctx, remote, "bundle", "list-heads", file)
	if err != nil {
		return fail(fmt.Errorf("bundle %s refused: %w", key, err))
	}
	if got := strings.TrimSpace(heads); got != sha+" "+ref {
		return fail(fmt.Errorf("bundle %s refused: it must carry only %s at %s, carries %q", key, ref, sha, got))
	}
	if err := quarantinedFetch(ctx, remote, filepath.Join(dir, "quarantine.git"), file, ref); err != nil {
		// A concurrent Ensure of the same commit makes the loser's ref update fail; what
		// counts is that the commit arrived whole.
		if !complete(ctx, remote, sha) {
			return fail(fmt.Errorf("bundle %s refused: %w", key, err))
		}
	}
	if got, err := Git(ctx, remote, "rev-parse", "--verify", ref+"^{commit}"); err != nil || strings.TrimSpace(got) != sha {
		return fail(fmt.Errorf("after fetching bundle %s, %s is %q (%v), not %s", key, ref, strings.TrimSpace(got), err, sha))
	}
	if !complete(ctx, remote, sha) {
		return fail(fmt.Errorf("after fetching bundle %s the remote still lacks objects of the commit", key))
	}
	return remote, nil
}

// download copies blob d to file, refusing more than MaxBundleBytes. Reading to the end is
// what makes the store check the digest, so a short or altered blob fails here.
func (s Shared) download(ctx context.Context, d artifacts.Digest, file string) error {
	rc, err := s.Store.Get(ctx, d)
	if err != nil {
		return err
	}
	defer func() { _ = rc.Close() }()
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	limit := s.maxBundleBytes()
	n, err := io.Copy(f, io.LimitReader(rc, limit+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if n > limit {
		return fmt.Errorf("larger than the %d-byte limit", limit)
	}
	return nil
}

// quarantinedFetch brings ref from the bundle into remote with fsck on. Git before 2.46 does
// not fsck objects fetched from a bundle, whatever fetch.fsckObjects says, so the bundle is first fetched into a scratch repository that borrows the remote's objects
// (an alternate: the base is there) and shares its shallow boundary; the remote then
// fetches from the scratch repository over the ordinary protocol, whose index-pack does
// fsck. Objects that fail it never enter the remote's object store.
func quarantinedFetch(ctx context.Context, remote, scratch, bundle, ref string) error {
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
	switch shallow, err := os.ReadFile(filepath.Join(remote, "shallow")); {
	case err == nil:
		if err := os.WriteFile(filepath.Join(scratch, "shallow"), shallow, 0o600); err != nil {
			return fmt.Errorf("quarantine: %w", err)
		}
	case !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("quarantine: %w", err)
	}
	args := append(append(append([]string{}, fsck...), fetch...), bundle, ref+":"+ref)
	if _, err := Git(ctx, scratch, args...); err != nil {
		return err
	}
	args = append(append(append([]string{}, fsck...), fetch...), scratch, ref+":"+ref)
	_, err = Git(ctx, remote, args...)
	return err
}
