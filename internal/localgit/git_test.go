package localgit

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// newRepo makes a work tree with one commit on main and one on a side branch.
func newRepo(t *testing.T) (dir, base, side string) {
	t.Helper()
	ctx := context.Background()
	dir = t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		out, err := Git(ctx, dir, args...)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(out)
	}
	run("init", "--quiet")
	id := []string{"-c", "user.name=t", "-c", "user.email=t@example.com"}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("add", "a.txt")
	run(append(id, "commit", "--quiet", "-m", "base")...)
	base = run("rev-parse", "HEAD")
	run("checkout", "--quiet", "-b", "side")
	if err := os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("not for the remote\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("add", "secret.txt")
	run(append(id, "commit", "--quiet", "-m", "side")...)
	side = run("rev-parse", "HEAD")
	run("checkout", "--quiet", "main")
	return dir, base, side
}

func TestRegisterCopiesOnlyTheBaseCommit(t *testing.T) {
	ctx := context.Background()
	src, base, side := newRepo(t)
	r := Remotes{Root: t.TempDir()}
	p, err := r.Register(ctx, "local", "app", src, base)
	if err != nil {
		t.Fatal(err)
	}
	if !Has(ctx, p, base) {
		t.Fatalf("remote %s lacks the registered base %s", p, base)
	}
	if Has(ctx, p, side) {
		t.Fatalf("remote holds the side branch's commit %s: more than the base was copied", side)
	}
	// The execute queue clones the remote and checks out the base, as an attempt does.
	clone := filepath.Join(t.TempDir(), "clone")
	if _, err := Git(ctx, filepath.Dir(clone), "clone", "--quiet", "--no-checkout", p, clone); err != nil {
		t.Fatal(err)
	}
	if _, err := Git(ctx, clone, "checkout", "--quiet", "-B", "signoff/x", base); err != nil {
		t.Fatalf("clone cannot check out the registered base: %v", err)
	}
	// Registering again is a no-op; registering another commit adds it.
	if p2, err := r.Register(ctx, "local", "app", src, base); err != nil || p2 != p {
		t.Fatalf("second registration: %q, %v", p2, err)
	}
	if _, err := r.Register(ctx, "local", "app", src, side); err != nil || !Has(ctx, p, side) {
		t.Fatalf("registering a second commit: %v", err)
	}
}

func TestRegisterRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	src, base, _ := newRepo(t)
	r := Remotes{Root: t.TempDir()}
	for _, c := range []struct{ owner, name, sha string }{
		{"..", "app", base}, {"local", "../x", base}, {"local", "app", "HEAD"}, {"local", "app", strings.Repeat("0", 40)},
	} {
		if _, err := r.Register(ctx, c.owner, c.name, src, c.sha); err == nil {
			t.Errorf("Register(%q, %q, %q) succeeded", c.owner, c.name, c.sha)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(r.Root, "local"))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left a temporary remote behind: %s", e.Name())
		}
	}
}

// A shallow clone (depth 1) and a partial one (no blobs but the checkout's) register their
// base: only that commit's objects go to the remote, and the execute queue can clone it and
// check the base out.
func TestRegisterFromShallowAndPartialClones(t *testing.T) {
	ctx := context.Background()
	src, _, side := newRepo(t)
	for _, c := range []struct{ name, flag string }{{"shallow", "--depth=1"}, {"partial", "--filter=blob:none"}} {
		t.Run(c.name, func(t *testing.T) {
			clone := filepath.Join(t.TempDir(), "clone")
			if _, err := Git(ctx, filepath.Dir(clone), "clone", "--quiet", c.flag, "--branch", "side", "file://"+src, clone); err != nil {
				t.Fatal(err)
			}
			r := Remotes{Root: t.TempDir()}
			p, err := r.Register(ctx, "local", "app", clone, side)
			if err != nil {
				t.Fatalf("register from a %s clone: %v", c.name, err)
			}
			if !Has(ctx, p, side) {
				t.Fatalf("remote lacks %s", side)
			}
			if n, err := Git(ctx, p, "rev-list", "--count", "refs/signoff/bases/"+side); err != nil || strings.TrimSpace(n) != "1" {
				t.Errorf("remote holds %s commits of history (%v), want the base alone", strings.TrimSpace(n), err)
			}
			work := filepath.Join(t.TempDir(), "work")
			if _, err := Git(ctx, filepath.Dir(work), "clone", "--quiet", "--no-checkout", "file://"+p, work); err != nil {
				t.Fatal(err)
			}
			if _, err := Git(ctx, work, "checkout", "--quiet", "-B", "signoff/x", side); err != nil {
				t.Fatalf("the registered base does not check out: %v", err)
			}
			if b, err := os.ReadFile(filepath.Join(work, "secret.txt")); err != nil || string(b) != "not for the remote\n" {
				t.Errorf("checked-out base: %q %v", b, err)
			}
		})
	}
}
