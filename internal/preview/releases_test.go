package preview

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff/signoff/contracts"
)

func tgz(t *testing.T, entries []tar.Header, bodies map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, h := range entries {
		body := bodies[h.Name]
		h.Size = int64(len(body))
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			if _, err := tw.Write([]byte(body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// A release tarball is a registry's answer, not trusted: only regular files and folders under
// its one top folder land, inside the release's folder.
func TestUntarPackageKeepsInside(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pkg")
	outside := filepath.Join(filepath.Dir(dir), "escaped")
	data := tgz(t, []tar.Header{
		{Name: "package/bin/tool.cjs", Typeflag: tar.TypeReg, Mode: 0o755},
		{Name: "package/lib/a.js", Typeflag: tar.TypeReg, Mode: 0o644},
		{Name: "package/../escaped", Typeflag: tar.TypeReg, Mode: 0o644},
		{Name: "/abs", Typeflag: tar.TypeReg, Mode: 0o644},
		{Name: "package/link", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"},
		{Name: "package/hard", Typeflag: tar.TypeLink, Linkname: "package/lib/a.js"},
	}, map[string]string{"package/bin/tool.cjs": "#!/usr/bin/env node\n", "package/lib/a.js": "x", "package/../escaped": "no", "/abs": "no"})
	if err := untarPackage(data, dir); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "bin", "tool.cjs")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("bin: %v %v", fi, err)
	}
	for _, p := range []string{outside, filepath.Join(dir, "link"), filepath.Join(dir, "hard"), filepath.Join(dir, "abs")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}
	many := make([]tar.Header, 0, maxReleaseFiles+1)
	for i := range maxReleaseFiles + 1 {
		many = append(many, tar.Header{Name: "package/f" + strings.Repeat("x", i%7) + "/" + string(rune('a'+i%26)) + hex.EncodeToString([]byte{byte(i >> 8), byte(i)}), Typeflag: tar.TypeReg, Mode: 0o644})
	}
	if err := untarPackage(tgz(t, many, nil), filepath.Join(t.TempDir(), "many")); err == nil || !strings.Contains(err.Error(), "files") {
		t.Errorf("%d files: %v", len(many), err)
	}
}

func TestHashMatches(t *testing.T) {
	data := []byte("release")
	sum := sha512.Sum512(data)
	if !hashMatches("sha512."+hex.EncodeToString(sum[:]), data) {
		t.Error("its own sha512 does not match")
	}
	if hashMatches("sha512."+hex.EncodeToString(sum[:]), []byte("other")) || hashMatches("md5.00", data) || hashMatches("sha512", data) {
		t.Error("a wrong hash matches")
	}
}

// TestReleasesFromTheRegistry fetches the releases real repositories declare (pnpm 9 under a
// pnpm 12 pin, Yarn 4 and Yarn 3 where Yarn 1 is pinned), runs each, and refuses a declared hash
// the registry's release does not have, also once the release is kept.
func TestReleasesFromTheRegistry(t *testing.T) {
	if testing.Short() {
		t.Skip("downloads package manager releases from the npm registry; skipped in -short")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatal(err)
	}
	r := &Releases{Dir: filepath.Join(t.TempDir(), "releases"), NPM: npm}
	ctx := context.Background()
	for _, rel := range []contracts.Release{{Name: "pnpm", Version: "9.15.9"}, {Name: "yarn", Version: "4.9.2"}, {Name: "yarn", Version: "1.22.19"}} {
		bin, err := r.Bin(ctx, rel)
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		out, err := exec.Command(bin, "--version").Output()
		if err != nil || strings.TrimSpace(string(out)) != rel.Version {
			t.Errorf("%s: %s --version says %q (%v)", rel, bin, out, err)
		}
		if root := InstallRoot(bin); !strings.HasPrefix(root, r.Dir) || filepath.Base(filepath.Dir(root)) != "releases" {
			t.Errorf("%s: install root %s, want its own folder under %s", rel, root, r.Dir)
		}
	}
	wrong := contracts.Release{Name: "pnpm", Version: "9.15.9", Hash: "sha512." + strings.Repeat("0", 128)}
	var re *ReleaseError
	if _, err := r.Bin(ctx, wrong); !errors.As(err, &re) || !strings.Contains(err.Error(), "does not match the hash") {
		t.Errorf("a kept release with another declared hash: %v", err)
	}
	if _, err := (&Releases{Dir: filepath.Join(t.TempDir(), "fresh"), NPM: npm}).Bin(ctx, wrong); !errors.As(err, &re) {
		t.Errorf("a fetched release with another declared hash: %v", err)
	}
	if _, err := r.Bin(ctx, contracts.Release{Name: "bun", Version: "1.0.0"}); !errors.As(err, &re) {
		t.Errorf("bun at another release: %v", err)
	}
}
