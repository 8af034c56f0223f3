// Package localgit is the no-account deliverable: a bare git remote per repository on this
// machine, with the pull-request record (head, comments, commit status) kept in Signoff's
// store and shown the way a GitHub PR would be. It also resolves a contract's repository to
// that remote for the execute queue's clones.
package localgit

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// Git runs git with a machine-independent configuration (no user or system config, no hooks,
// no signing), so what it does here it does everywhere.
func Git(ctx context.Context, dir string, args ...string) (string, error) {
	fixed := []string{"-c", "core.hooksPath=/dev/null", "-c", "commit.gpgSign=false", "-c", "safe.directory=*",
		"-c", "init.defaultBranch=main", "-c", "advice.detachedHead=false"}
	cmd := exec.CommandContext(ctx, "git", append(fixed, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir(), "GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0", "LANG=C"}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

var repoPart = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// Remotes maps "owner/name" to a bare repository under Root.
type Remotes struct {
	Root string
}

// Path is the bare remote of owner/name, refusing names that could leave Root.
func (r Remotes) Path(owner, name string) (string, error) {
	if !repoPart.MatchString(owner) || !repoPart.MatchString(name) || strings.Contains(owner+name, "..") {
		return "", fmt.Errorf("repository %q/%q is not a safe name", owner, name)
	}
	return filepath.Join(r.Root, owner, name+".git"), nil
}

// Ensure creates the bare remote of owner/name from a local repository if it does not exist
// yet, and returns its path. An existing remote is left as it is, and so is one another
// caller makes meanwhile.
func (r Remotes) Ensure(ctx context.Context, owner, name, source string) (string, error) {
	p, err := r.Path(owner, name)
	if err != nil {
		return "", err
	}
	if isRemote(p) {
		return p, nil
	}
	abs, err := filepath.Abs(source)
	if err != nil {
		return "", err
	}
	_, err = createRemote(ctx, p, func(tmp string) error {
		_, err := Git(ctx, tmp, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", abs, "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*")
		return err
	})
	return p, err
}

// Has reports whether the remote holds commit sha.
func Has(ctx context.Context, remote, sha string) bool {
	_, err := Git(ctx, remote, "cat-file", "-e", sha+"^{commit}")
	return err == nil
}

// Head reads a branch head of a remote.
func Head(ctx context.Context, remote, branch string) (string, error) {
	out, err := Git(ctx, remote, "rev-parse", "--verify", "refs/heads/"+branch)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// Register makes commit sha of the repository at source available to the execute queue: it
// creates owner/name's bare remote when there is none and fetches sha into it, at depth 1,
// as refs/signoff/bases/<sha>. Only that commit and its tree are copied, not its history,
// the source's branches or its work tree, so a shallow or partial clone registers as well as
// a full one (the remote then records sha as a shallow boundary).
// It is how a repository on this machine (`contract new --repo PATH`) becomes one the
// workers can build from, and it is a no-op when the remote already holds sha.
func (r Remotes) Register(ctx context.Context, owner, name, source, sha string) (string, error) {
	p, err := r.Path(owner, name)
	if err != nil {
		return "", err
	}
	if !fullSHA.MatchString(sha) {
		return "", fmt.Errorf("register %s/%s: %q is not a full commit SHA", owner, name, sha)
	}
	if _, err := os.Stat(filepath.Join(p, "HEAD")); err != nil {
		if _, err := createRemote(ctx, p, nil); err != nil {
			return "", err
		}
	}
	if Has(ctx, p, sha) {
		return p, nil
	}
	// A SHA the source lacks would push as a ref deletion (the all-zero SHA) or fail obscurely.
	if !Has(ctx, source, sha) {
		return "", fmt.Errorf("register %s/%s: %s has no commit %s", owner, name, source, sha)
	}
	abs, err := filepath.Abs(source)
	if err != nil {
		return "", fmt.Errorf("register %s/%s: %w", owner, name, err)
	}
	// The remote fetches that one commit at depth 1: its tree, never its history. A push
	// would send the whole history, and a shallow source cannot push into an empty remote
	// at all ("shallow update not allowed"). The commit is named by SHA, which upload-pack
	// serves only when asked to.
	if _, err := Git(ctx, p, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--depth=1",
		"--upload-pack=git -c uploadpack.allowAnySHA1InWant=true upload-pack",
		abs, sha+":refs/signoff/bases/"+sha); err != nil {
		return "", fmt.Errorf("register %s/%s at %s: %w", owner, name, sha, err)
	}
	// A clone of a shallow remote goes through upload-pack, which sends branches and tags
	// only: a tag keeps the base reachable for the execute queue's clones.
	if _, err := Git(ctx, p, "update-ref", BaseTag(sha), sha); err != nil {
		return "", fmt.Errorf("register %s/%s at %s: %w", owner, name, sha, err)
	}
	if !Has(ctx, p, sha) {
		return "", fmt.Errorf("register %s/%s: the push left %s without %s", owner, name, p, sha)
	}
	return p, nil
}

// createRemote makes the bare remote p: an empty repository beside it, filled by fill when
// set, then renamed into place, so p never exists half made. When another worker created p
// first, its remote is as good as ours: created is false and the error nil.
func createRemote(ctx context.Context, p string, fill func(tmp string) error) (created bool, err error) {
	parent := filepath.Dir(p)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return false, err
	}
	tmp, err := os.MkdirTemp(parent, "."+strings.TrimSuffix(filepath.Base(p), ".git")+"-*.git")
	if err != nil {
		return false, err
	}
	if _, err := Git(ctx, tmp, "init", "--quiet", "--bare", "."); err != nil {
		_ = os.RemoveAll(tmp)
		return false, err
	}
	if fill != nil {
		if err := fill(tmp); err != nil {
			_ = os.RemoveAll(tmp)
			return false, err
		}
	}
	if err := os.Rename(tmp, p); err != nil {
		_ = os.RemoveAll(tmp)
		if isRemote(p) {
			return false, nil
		}
		return false, fmt.Errorf("create remote %s: %w", p, err)
	}
	return true, nil
}

// BaseTag is the tag a registered base commit is kept under in its remote.
func BaseTag(sha string) string { return "refs/tags/signoff-bases/" + sha }

var fullSHA = regexp.MustCompile(`^[0-9a-f]{40}$`)
