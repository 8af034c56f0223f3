//go:build unix

package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"

	"github.com/signoff/signoff/internal/localgit"
)

// MaxBundleBytes bounds the git bundle an attempt may hand out of the sandbox.
const MaxBundleBytes = 256 << 20

// Bounds on what an attempt's change becomes when its tree is checked out (by the preview,
// by the PR's readers): a bundle of a few hundred KB carries a file of hundreds of MB of
// zeros. They are on the change, not the repository: a large base stays quotable.
const (
	MaxChangedFileBytes = 64 << 20  // one added or changed file
	MaxChangeGrowth     = 256 << 20 // how much larger the checkout may become
	MaxAddedFiles       = 20000     // files the change may add
)

// attemptRef is the ref the sandbox's packaging step bundles.
const attemptRef = "refs/signoff/attempt"

// Paths a coding CLI's change may not touch, beyond .git itself: submodule definitions
// (they make the worker clone other repositories) and CI workflows (they run with the
// repository's secrets once the PR opens).
var forbiddenPrefixes = []string{".gitmodules", ".github/workflows/"}

// ntfsShortGit is an 8.3 short name NTFS may give ".git" (GIT~1, and later numbers).
var ntfsShortGit = regexp.MustCompile(`^git~[0-9]+$`)

// fsName is a path element as case-insensitive file systems compare it: lower case, without
// the trailing dots and spaces NTFS drops, the code points HFS+ ignores, and an NTFS stream
// suffix (".git::$INDEX_ALLOCATION" opens the .git folder itself; a colon is in no Windows
// file name otherwise).
func fsName(el string) string {
	if i := strings.IndexByte(el, ':'); i > 0 {
		el = el[:i]
	}
	el = strings.Map(func(r rune) rune {
		switch {
		case r >= 0x200c && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x206a && r <= 0x206f, r == 0xfeff:
			return -1
		}
		return r
	}, el)
	return strings.ToLower(strings.TrimRight(el, ". "))
}

// imported is an attempt's change, taken out of the sandbox as objects and checked.
type imported struct {
	Tree  string // the attempt's tree, in the scratch repository
	Empty bool   // the tree is the parent's
}

// importAttempt brings the bundle the sandbox wrote into a scratch bare repository that
// only the worker writes, with fsck on and no configuration of the clone's in play, and
// checks the tree it carries. Problems are reasons to refuse the change; err is anything
// else. The bundle file is opened without following symlinks and copied first: it lives
// in a folder repository code could write.
func importAttempt(ctx context.Context, scratch, remote, bundle, parent string) (imported, []string, error) {
	if err := os.MkdirAll(filepath.Dir(scratch), 0o700); err != nil {
		return imported{}, nil, fmt.Errorf("scratch repository: %w", err)
	}
	if _, err := localgit.Git(ctx, filepath.Dir(scratch), "init", "--bare", "--quiet", scratch); err != nil {
		return imported{}, nil, fmt.Errorf("scratch repository: %w", err)
	}
	objects := filepath.Join(remote, "objects")
	if err := os.WriteFile(filepath.Join(scratch, "objects", "info", "alternates"), []byte(objects+"\n"), 0o600); err != nil {
		return imported{}, nil, fmt.Errorf("scratch repository: link the remote's objects: %w", err)
	}
	local := filepath.Join(scratch, "attempt.bundle")
	if problem, err := copyRegular(bundle, local, MaxBundleBytes); err != nil || problem != "" {
		if problem != "" {
			return imported{}, []string{problem}, nil
		}
		return imported{}, nil, err
	}
	fsck := []string{"-c", "transfer.fsckObjects=true", "-c", "fetch.fsckObjects=true", "-c", "core.symlinks=false"}
	if _, err := localgit.Git(ctx, scratch, append(fsck, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head",
		local, "+"+attemptRef+":"+attemptRef)...); err != nil {
		return imported{}, []string{"the attempt's objects did not pass git's checks: " + err.Error()}, nil
	}
	parents, err := localgit.Git(ctx, scratch, "rev-list", "--parents", "-n", "1", attemptRef)
	if err != nil {
		return imported{}, nil, fmt.Errorf("read the attempt: %w", err)
	}
	if f := strings.Fields(parents); len(f) != 2 || f[1] != parent {
		return imported{}, []string{fmt.Sprintf("the attempt is not one commit on %s", parent)}, nil
	}
	tree, err := localgit.Git(ctx, scratch, "rev-parse", "--verify", attemptRef+"^{tree}")
	if err != nil {
		return imported{}, nil, fmt.Errorf("read the attempt's tree: %w", err)
	}
	tree = strings.TrimSpace(tree)
	base, err := localgit.Git(ctx, scratch, "rev-parse", "--verify", parent+"^{tree}")
	if err != nil {
		return imported{}, nil, fmt.Errorf("read the parent's tree: %w", err)
	}
	if strings.TrimSpace(base) == tree {
		return imported{Tree: tree, Empty: true}, nil, nil
	}
	problems, err := checkTree(ctx, scratch, parent, tree)
	if err != nil {
		return imported{}, nil, err
	}
	big, err := checkExpansion(ctx, scratch, parent, tree)
	if err != nil {
		return imported{}, nil, err
	}
	return imported{Tree: tree}, append(problems, big...), nil
}

// copyRegular copies src to dst if src is a regular file no larger than max, refusing to
// follow a symlink at src. A non-empty problem means src is not something to take.
func copyRegular(src, dst string, max int64) (problem string, err error) {
	f, err := os.OpenFile(src, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, os.ErrNotExist) {
		return "the packaging step left no bundle", nil
	}
	if err != nil {
		return fmt.Sprintf("the bundle could not be opened safely (%v)", err), nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("stat bundle: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "the bundle is not a regular file", nil
	}
	if fi.Size() > max {
		return fmt.Sprintf("the bundle is %d bytes, over the %d-byte limit", fi.Size(), max), nil
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return "", fmt.Errorf("copy bundle: %w", err)
	}
	n, err := io.Copy(out, io.LimitReader(f, max+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("copy bundle: %w", err)
	}
	if n > max {
		return fmt.Sprintf("the bundle grew past the %d-byte limit while it was read", max), nil
	}
	return "", nil
}

// checkTree refuses what must not reach a commit: anything under a .git path, submodules,
// forbidden paths and symlinks that point out of the tree. It reads objects only; no work
// tree is involved.
func checkTree(ctx context.Context, repo, parent, tree string) ([]string, error) {
	out, err := localgit.Git(ctx, repo, "diff-tree", "-r", "-z", "--no-renames", parent, tree)
	if err != nil {
		return nil, fmt.Errorf("list the change: %w", err)
	}
	var problems []string
	fields := strings.Split(out, "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		meta, name := fields[i], fields[i+1]
		parts := strings.Fields(strings.TrimPrefix(meta, ":"))
		if len(parts) < 5 {
			return nil, fmt.Errorf("unexpected git diff-tree line %q", meta)
		}
		newMode, newObj, status := parts[1], parts[3], parts[4]
		elems := strings.Split(name, "/")
		for i, el := range elems {
			elems[i] = fsName(el)
			if elems[i] == ".git" || ntfsShortGit.MatchString(elems[i]) {
				problems = append(problems, name+": inside a .git directory (or a name a file system reads as one)")
			}
		}
		// The path as Windows and macOS file systems read it: a checkout there must not turn
		// ".github./workflows" or ".GitHub/workflows" into the workflows folder either.
		seen := strings.Join(elems, "/")
		for _, p := range forbiddenPrefixes {
			if strings.HasPrefix(seen, p) {
				problems = append(problems, name+": Signoff does not let a coding CLI change "+p)
			}
		}
		if status == "D" {
			continue
		}
		if newMode == "120000" && slices.ContainsFunc(forbiddenPrefixes, func(p string) bool { return strings.HasPrefix(p, seen+"/") }) {
			// A symlink in place of .github or .github/workflows would put a CI workflow
			// where the check above does not see it.
			problems = append(problems, name+": a symlink where Signoff's protected paths are ("+strings.Join(forbiddenPrefixes, ", ")+")")
		}
		switch newMode {
		case "160000":
			problems = append(problems, name+": an embedded git repository")
		case "120000":
			target, err := localgit.Git(ctx, repo, "cat-file", "blob", newObj)
			if err != nil {
				return nil, fmt.Errorf("read symlink %s: %w", name, err)
			}
			if linkEscapes(name, target) {
				problems = append(problems, fmt.Sprintf("%s: a symlink to %s, outside the repository", name, target))
			}
		}
	}
	return problems, nil
}

// treeEntry is one blob of a tree as ls-tree lists it.
type treeEntry struct {
	obj  string
	size int64
}

// treeBlobs lists every blob of tree (a commit or tree id) by path, with its size.
func treeBlobs(ctx context.Context, repo, tree string) (map[string]treeEntry, int64, error) {
	out, err := localgit.Git(ctx, repo, "ls-tree", "-r", "-l", "-z", tree)
	if err != nil {
		return nil, 0, fmt.Errorf("list the tree %s: %w", tree, err)
	}
	blobs := map[string]treeEntry{}
	var total int64
	for _, rec := range strings.Split(out, "\x00") {
		meta, path, ok := strings.Cut(rec, "\t")
		if !ok {
			continue
		}
		f := strings.Fields(meta) // mode type object size
		if len(f) != 4 || f[1] != "blob" {
			continue // a submodule (refused by checkTree) has no size
		}
		var size int64
		if _, err := fmt.Sscan(f[3], &size); err != nil {
			return nil, 0, fmt.Errorf("unexpected git ls-tree line %q", meta)
		}
		blobs[path] = treeEntry{obj: f[2], size: size}
		total += size
	}
	return blobs, total, nil
}

// checkExpansion refuses a change whose checkout would be too large: a file over
// MaxChangedFileBytes, growth over MaxChangeGrowth, or more than MaxAddedFiles new files.
// It reads object headers only; nothing is expanded.
func checkExpansion(ctx context.Context, repo, parent, tree string) ([]string, error) {
	before, beforeTotal, err := treeBlobs(ctx, repo, parent)
	if err != nil {
		return nil, err
	}
	after, afterTotal, err := treeBlobs(ctx, repo, tree)
	if err != nil {
		return nil, err
	}
	var big []string
	added := 0
	for path, e := range after {
		b, ok := before[path]
		if ok && b.obj == e.obj {
			continue
		}
		if !ok {
			added++
		}
		if e.size > MaxChangedFileBytes {
			big = append(big, fmt.Sprintf("%s: %d bytes once checked out, over the %d-byte limit for one file", path, e.size, MaxChangedFileBytes))
		}
	}
	slices.Sort(big)
	if len(big) > 5 {
		big = append(big[:5], fmt.Sprintf("and %d more files over the %d-byte limit", len(big)-5, MaxChangedFileBytes))
	}
	if growth := afterTotal - beforeTotal; growth > MaxChangeGrowth {
		big = append(big, fmt.Sprintf("the change makes the checkout %d bytes larger, over the %d-byte limit", growth, MaxChangeGrowth))
	}
	if added > MaxAddedFiles {
		big = append(big, fmt.Sprintf("the change adds %d files, over the limit of %d", added, MaxAddedFiles))
	}
	return big, nil
}

// linkEscapes reports whether a symlink at name (slash-separated, relative to the tree's
// root) with the given target may resolve outside the tree. Lexical cleaning alone is not
// enough once other symlinks are involved ("s -> .." beside "l -> s/../x" leaves the
// tree), so ".." may only lead the target: it then climbs real directories of the tree,
// and what follows only descends.
func linkEscapes(name, target string) bool {
	if target == "" || strings.HasPrefix(target, "/") || strings.ContainsRune(target, 0) {
		return true
	}
	elems := strings.Split(target, "/")
	up := 0
	for up < len(elems) && elems[up] == ".." {
		up++
	}
	for _, el := range elems[up:] {
		if el == ".." {
			return true
		}
	}
	depth := strings.Count(name, "/")
	return up > depth
}
