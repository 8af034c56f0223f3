package preview

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/signoff/signoff/contracts"
)

// A repository that declares its package manager's release (package.json's packageManager:
// "pnpm@9.15.9", "yarn@4.9.2+sha512.<hex>") is installed by that release, as corepack would:
// a pnpm 9 lockfile under pnpm 12, or a Yarn Berry repository under Yarn 1, fails for reasons
// the team never had. Releases fetches each from the npm registry once, checks the declared
// hash, and keeps it by version; the sandbox binds it read-only like the pinned ones.

// releasePackage is the npm package a release comes from and its entry point.
type releasePackage struct{ pkg, bin string }

// releasePackageFor: Yarn 2 and later are published as @yarnpkg/cli-dist (the "yarn" package
// is Yarn 1). bun is native and runs only at its pinned release.
func releasePackageFor(r contracts.Release) (releasePackage, bool) {
	switch r.Name {
	case contracts.PackageManagerPNPM:
		return releasePackage{"pnpm", "bin/pnpm.cjs"}, true
	case contracts.PackageManagerNPM:
		return releasePackage{"npm", "bin/npm-cli.js"}, true
	case contracts.PackageManagerYarn:
		if contracts.YarnBerry(r.Version) {
			return releasePackage{"@yarnpkg/cli-dist", "bin/yarn.js"}, true
		}
		return releasePackage{"yarn", "bin/yarn.js"}, true
	}
	return releasePackage{}, false
}

// Limits of a release tarball: the largest (npm's own) is about 10 MB packed, 30 MB unpacked.
const (
	maxReleaseTarball = 100 << 20
	maxReleaseFiles   = 20000
	maxReleaseBytes   = 400 << 20
	releaseFetchLimit = 5 * time.Minute
)

// Releases fetches and keeps package manager releases under Dir, one folder per release
// (<name>-<version>/node_modules/<package>), so InstallRoot of its entry point is that folder.
type Releases struct {
	// Dir holds the releases; made 0755 so the preview user can read them.
	Dir string
	// NPM is the host's npm, which fetches a release's tarball (npm pack: a download, no
	// scripts) from the registry the host's npm configuration names.
	NPM string

	mu sync.Mutex
}

// ReleaseError is a declared release that could not be fetched or did not match its hash:
// the repository's declaration, not Signoff, decides what to do.
type ReleaseError struct {
	Release contracts.Release
	Reason  string
}

func (e *ReleaseError) Error() string {
	return fmt.Sprintf("package manager %s@%s: %s", e.Release.Name, e.Release.Version, e.Reason)
}

// Bin returns the entry point of a release, fetching it the first time.
func (r *Releases) Bin(ctx context.Context, rel contracts.Release) (string, error) {
	src, ok := releasePackageFor(rel)
	if !ok {
		return "", &ReleaseError{Release: rel, Reason: "Signoff runs this package manager only at its pinned release"}
	}
	folder := filepath.Join(r.Dir, rel.Name+"-"+rel.Version)
	if contracts.YarnBerry(rel.Version) && rel.Name == contracts.PackageManagerYarn {
		folder = filepath.Join(r.Dir, "yarn-berry-"+rel.Version)
	}
	bin := filepath.Join(folder, "node_modules", filepath.FromSlash(src.pkg), filepath.FromSlash(src.bin))
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := os.Stat(bin); err == nil {
		return bin, r.checkKept(folder, rel)
	}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return "", fmt.Errorf("preview: releases folder: %w", err)
	}
	tmp, err := os.MkdirTemp(r.Dir, ".fetch-")
	if err != nil {
		return "", fmt.Errorf("preview: releases folder: %w", err)
	}
	defer os.RemoveAll(tmp)
	tgz, err := r.pack(ctx, tmp, src.pkg+"@"+rel.Version)
	if err != nil {
		return "", &ReleaseError{Release: rel, Reason: err.Error()}
	}
	data, err := readLimited(tgz, maxReleaseTarball)
	if err != nil {
		return "", &ReleaseError{Release: rel, Reason: err.Error()}
	}
	stage := filepath.Join(tmp, "stage")
	pkgDir := filepath.Join(stage, "node_modules", filepath.FromSlash(src.pkg))
	if err := untarPackage(data, pkgDir); err != nil {
		return "", &ReleaseError{Release: rel, Reason: "unpack: " + err.Error()}
	}
	if rel.Hash != "" {
		entry, _ := os.ReadFile(filepath.Join(pkgDir, filepath.FromSlash(src.bin)))
		if !hashMatches(rel.Hash, data) && !hashMatches(rel.Hash, entry) {
			return "", &ReleaseError{Release: rel, Reason: "the registry's release does not match the hash package.json declares (" + rel.Hash[:strings.IndexByte(rel.Hash, '.')] + ")"}
		}
	}
	if err := os.Chmod(filepath.Join(pkgDir, filepath.FromSlash(src.bin)), 0o755); err != nil {
		return "", &ReleaseError{Release: rel, Reason: "the package has no " + src.bin}
	}
	// The hash that was checked stays beside the release: a later contract declaring another
	// hash for the same version is checked against it, not waved through by the cache.
	if err := os.WriteFile(filepath.Join(stage, "release.json"), mustJSON(map[string]string{"sha512": sumHex(sha512.New(), data)}), 0o644); err != nil {
		return "", err
	}
	if err := os.Chmod(stage, 0o755); err != nil {
		return "", err
	}
	if err := os.Rename(stage, folder); err != nil && !errors.Is(err, os.ErrExist) {
		if _, statErr := os.Stat(bin); statErr != nil {
			return "", fmt.Errorf("preview: keep release: %w", err)
		}
	}
	return bin, nil
}

// checkKept checks a declared hash against a release fetched earlier.
func (r *Releases) checkKept(folder string, rel contracts.Release) error {
	if rel.Hash == "" || !strings.HasPrefix(rel.Hash, "sha512.") {
		return nil // other algorithms are checked at the fetch only; sha512 is what is kept
	}
	var kept map[string]string
	b, err := os.ReadFile(filepath.Join(folder, "release.json"))
	if err == nil {
		_ = json.Unmarshal(b, &kept)
	}
	src, _ := releasePackageFor(rel)
	entry, _ := os.ReadFile(filepath.Join(folder, "node_modules", filepath.FromSlash(src.pkg), filepath.FromSlash(src.bin)))
	if kept["sha512"] == strings.TrimPrefix(rel.Hash, "sha512.") || hashMatches(rel.Hash, entry) {
		return nil
	}
	return &ReleaseError{Release: rel, Reason: "the registry's release does not match the hash package.json declares (sha512)"}
}

// pack downloads spec's tarball into dir and returns its path.
func (r *Releases) pack(ctx context.Context, dir, spec string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, releaseFetchLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.NPM, "pack", spec, "--pack-destination", dir, "--json", "--ignore-scripts", "--silent")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("npm pack %s: %v: %s", spec, err, lastLine(errb.String()))
	}
	var packed []struct {
		Filename string `json:"filename"`
	}
	if err := json.Unmarshal(out.Bytes(), &packed); err != nil || len(packed) != 1 || packed[0].Filename == "" {
		return "", fmt.Errorf("npm pack %s: unexpected output %q", spec, lastLine(out.String()))
	}
	// npm names scoped tarballs "yarnpkg-cli-dist-4.9.2.tgz"; only the base name is used.
	return filepath.Join(dir, filepath.Base(packed[0].Filename)), nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}

func readLimited(p string, max int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("the tarball is larger than %d MB", max>>20)
	}
	return b, nil
}

// untarPackage unpacks an npm tarball's package/ folder into dir: regular files and folders
// only, every path inside dir, within the file and byte limits.
func untarPackage(tgz []byte, dir string) error {
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	files, total := 0, int64(0)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		name := path.Clean(strings.TrimPrefix(h.Name, "./"))
		first, rest, _ := strings.Cut(name, "/")
		if first == "" || rest == "" || strings.HasPrefix(rest, "../") || rest == ".." || path.IsAbs(name) {
			continue // npm packs under one top folder ("package"); anything else is left out
		}
		target := filepath.Join(dir, filepath.FromSlash(rest))
		if !strings.HasPrefix(target, dir+string(filepath.Separator)) {
			return fmt.Errorf("%q leaves the package", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if files++; files > maxReleaseFiles {
				return fmt.Errorf("more than %d files", maxReleaseFiles)
			}
			if total += h.Size; total > maxReleaseBytes {
				return fmt.Errorf("more than %d MB unpacked", maxReleaseBytes>>20)
			}
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			mode := os.FileMode(0o644)
			if h.Mode&0o111 != 0 {
				mode = 0o755
			}
			f, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, io.LimitReader(tr, h.Size))
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		default:
			// Links and devices are not part of a release Signoff runs.
		}
	}
	return nil
}

// hashMatches checks "<algorithm>.<hex>" against data.
func hashMatches(declared string, data []byte) bool {
	algo, want, ok := strings.Cut(declared, ".")
	if !ok || data == nil {
		return false
	}
	var h hash.Hash
	switch algo {
	case "sha1":
		h = sha1.New()
	case "sha224":
		h = sha256.New224()
	case "sha256":
		h = sha256.New()
	case "sha512":
		h = sha512.New()
	default:
		return false
	}
	return sumHex(h, data) == want
}

func sumHex(h hash.Hash, data []byte) string {
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
