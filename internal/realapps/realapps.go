// Package realapps makes the real Next.js apps the real-app tests run Signoff on: generated
// at test time by the registry's own tools (create-next-app, npm, pnpm, bun), never edited
// for Signoff, with no /__verification route and the lockfile their tool wrote. The tools run
// only inside the sandbox, as the preview user, with egress; each generated tree is cached
// under the module's .cache/realapps, keyed by its recipe, so only a first run downloads.
//
// It is test support: nothing in the product imports it.
package realapps

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing/fstest"
	"time"

	"github.com/signoff/signoff/internal/sandbox"
	"github.com/signoff/signoff/internal/unprivileged"
)

// CreateNextApp is the create-next-app the recipes generate with (npm registry).
const CreateNextApp = "create-next-app@16.4.3"

// Recipe is one real app: the command that makes it inside the sandbox, then edits.
type Recipe struct {
	Name string
	// PM is the package manager the lockfile names, and so the one the preview must run.
	PM string
	// Create runs in the generation folder (the app lands in ./app); Lock runs in ./app,
	// after Edit, and writes the lockfile without installing.
	Create, Lock []string
	// Edit changes the generated tree before its lockfile is written (a config switch a user
	// would set), or nil; Edits says what it does and is part of the cache key. Editing first
	// means the lockfile is the tool's own answer to the tree that is kept.
	Edit  func(dir string) error
	Edits string
}

// Key names the recipe's cached tree.
func (r Recipe) Key() string {
	edits := r.Edits
	if !GoogleFontsReachable() {
		edits += "\x01without Google Fonts"
	}
	h := sha256.Sum256([]byte(strings.Join(r.Create, "\x00") + "\x01" + strings.Join(r.Lock, "\x00") + "\x01edited before lock\x01" + edits))
	return r.Name + "-" + hex.EncodeToString(h[:6])
}

// Recipes: today's create-next-app as it comes with npm (cacheComponents on: a
// /__verification route with a dynamic export, as an app would once have needed, no longer
// builds there), with cacheComponents taken out of its config, and with pnpm and bun.
var Recipes = []Recipe{
	{
		Name:   "cna-npm",
		PM:     "npm",
		Create: createNextAppArgs("npm"),
		Lock:   []string{"npm", "install", "--package-lock-only", "--ignore-scripts"},
		Edit: func(dir string) error {
			if data, err := os.ReadFile(filepath.Join(dir, "next.config.ts")); err != nil || !bytes.Contains(data, []byte("cacheComponents: true")) {
				return fmt.Errorf("%s no longer turns cacheComponents on by default (%v): the recipes need another look", CreateNextApp, err)
			}
			return nil
		},
	},
	{
		Name:   "cna-npm-no-cache-components",
		PM:     "npm",
		Create: createNextAppArgs("npm"),
		Lock:   []string{"npm", "install", "--package-lock-only", "--ignore-scripts"},
		Edits:  "without cacheComponents",
		Edit: func(dir string) error {
			// partialPrefetching needs cacheComponents: both go.
			config := filepath.Join(dir, "next.config.ts")
			if err := ReplaceInFile(config, "  cacheComponents: true,\n", ""); err != nil {
				return err
			}
			return ReplaceInFile(config, "  partialPrefetching: true,\n", "")
		},
	},
	{
		Name:   "cna-pnpm",
		PM:     "pnpm",
		Create: createNextAppArgs("pnpm"),
		Lock:   []string{"pnpm", "install", "--lockfile-only", "--ignore-scripts"},
		// create-next-app pins "packageManager": "pnpm@12.23.0". With it, pnpm 12.23.0 writes
		// its own binaries for every platform into the lockfile as config dependencies, so the
		// lock step fails wherever the registry lacks one of them (@pnpm/exe.linux-loong64
		// answers 404 on the npm registry), and the lockfile it does write is refused under
		// --frozen-lockfile (ERR_PNPM_FROZEN_LOCKFILE_WITH_OUTDATED_LOCKFILE, outside Signoff
		// as well). The one edit to this app: that field goes, before the lock step.
		Edits: "without packageManager",
		Edit:  dropPackageManagerField,
	},
	{
		Name:   "cna-bun",
		PM:     "bun",
		Create: createNextAppArgs("bun"),
		Lock:   []string{"bun", "install", "--lockfile-only", "--ignore-scripts"},
	},
}

// DeclaredRelease is create-next-app's output for pm with package.json's packageManager set
// to rel, as a team that pins its package manager has it, and the lockfile written by that
// release (bin, its entry point, bound read-only from root by the Maker's ToolRoots). A Yarn
// Berry app links node_modules (.yarnrc.yml nodeLinker), as most Next.js teams on Berry do.
func DeclaredRelease(name, pm, rel, bin string) Recipe {
	r := Recipe{Name: name, PM: pm, Create: createNextAppArgs(pm), Edits: "packageManager " + rel}
	r.Edit = func(dir string) error {
		if err := setPackageManagerField(dir, rel); err != nil {
			return err
		}
		if pm == "pnpm" {
			// create-next-app writes a pnpm-workspace.yaml of pnpm 10's build settings and no
			// packages, which pnpm 9 refuses; a team on pnpm 9 has none.
			if err := os.Remove(filepath.Join(dir, "pnpm-workspace.yaml")); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
		if pm == "yarn" {
			// Berry is strict about what a package imports without declaring it (Next.js's
			// ESLint config does); node_modules keeps the app as create-next-app made it.
			return os.WriteFile(filepath.Join(dir, ".yarnrc.yml"), []byte("nodeLinker: node-modules\n"), 0o644)
		}
		return nil
	}
	switch pm {
	case "yarn":
		// CI=1 makes Berry's installs immutable by default: this one writes the lockfile.
		r.Lock = []string{"env", "YARN_ENABLE_IMMUTABLE_INSTALLS=false", "YARN_ENABLE_TELEMETRY=0"}
		if ca := npmCAFile(); ca != "" {
			r.Lock = append(r.Lock, "YARN_HTTPS_CA_FILE_PATH="+ca) // Berry does not read npm's cafile
		}
		r.Lock = append(r.Lock, bin, "install", "--mode=update-lockfile")
	case "pnpm":
		r.Lock = []string{bin, "install", "--lockfile-only", "--ignore-scripts", "--no-frozen-lockfile"}
	}
	return r
}

// WithDependencies is create-next-app's npm app without cacheComponents (Recipes[1]) with
// more dependencies in package.json, as a team adds them (npm's lockfile resolves them):
// the app a page that reads a database is written in.
func WithDependencies(name string, deps, devDeps map[string]string) Recipe {
	r := Recipes[1]
	r.Name = name
	r.Edits += fmt.Sprintf(", dependencies %v, devDependencies %v", deps, devDeps)
	base := r.Edit
	r.Edit = func(dir string) error {
		if err := base(dir); err != nil {
			return err
		}
		return editPackageJSON(dir, func(pkg map[string]any) error {
			for field, add := range map[string]map[string]string{"dependencies": deps, "devDependencies": devDeps} {
				m, _ := pkg[field].(map[string]any)
				if m == nil {
					m = map[string]any{}
				}
				for k, v := range add {
					m[k] = v
				}
				pkg[field] = m
			}
			return nil
		})
	}
	return r
}

// npmCAFile is the CA bundle the host's npm configuration names, "" when none.
var npmCAFile = sync.OnceValue(func() string {
	out, err := exec.Command("npm", "config", "get", "cafile").Output()
	if p := strings.TrimSpace(string(out)); err == nil && filepath.IsAbs(p) {
		return p
	}
	return ""
})

func setPackageManagerField(dir, rel string) error {
	return editPackageJSON(dir, func(pkg map[string]any) error { pkg["packageManager"] = rel; return nil })
}

func createNextAppArgs(pm string) []string {
	return []string{"npx", "--yes", CreateNextApp, "app", "--ts", "--app", "--eslint", "--no-tailwind", "--no-src-dir",
		"--import-alias", "@/*", "--use-" + pm, "--skip-install", "--disable-git", "--yes"}
}

func dropPackageManagerField(dir string) error {
	return editPackageJSON(dir, func(pkg map[string]any) error {
		if _, ok := pkg["packageManager"]; !ok {
			return errors.New("create-next-app no longer writes packageManager: this edit can go")
		}
		delete(pkg, "packageManager")
		return nil
	})
}

// editPackageJSON rewrites the app's package.json after edit changes it.
func editPackageJSON(dir string, edit func(pkg map[string]any) error) error {
	path := filepath.Join(dir, "package.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var pkg map[string]any
	if err := json.Unmarshal(data, &pkg); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := edit(pkg); err != nil {
		return err
	}
	out, err := json.MarshalIndent(pkg, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(out, '\n'), 0o644)
}

// GoogleFontsReachable says whether builds here can fetch Google Fonts, which
// create-next-app's layout loads through next/font/google at build time. Where they cannot
// (a machine that reaches only package registries), that build fails whatever Signoff does.
var GoogleFontsReachable = sync.OnceValue(func() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err := net.DefaultResolver.LookupHost(ctx, "fonts.googleapis.com")
	return err == nil
})

// withoutGoogleFonts takes next/font/google out of the generated layout: the one edit made
// where Google Fonts cannot be reached, and only then (Make logs it).
func withoutGoogleFonts(app string) error {
	layout := filepath.Join(app, "app", "layout.tsx")
	for _, r := range [][2]string{
		{`import { Geist, Geist_Mono } from "next/font/google";`, `// next/font/google taken out by the test: fonts.googleapis.com cannot be reached here.`},
		{"const geistSans = Geist({\n  variable: \"--font-geist-sans\",\n  subsets: [\"latin\"],\n});", `const geistSans = { variable: "" };`},
		{"const geistMono = Geist_Mono({\n  variable: \"--font-geist-mono\",\n  subsets: [\"latin\"],\n});", `const geistMono = { variable: "" };`},
	} {
		if err := ReplaceInFile(layout, r[0], r[1]); err != nil {
			return err
		}
	}
	return nil
}

// ReplaceInFile replaces the first old in path with new, and fails when old is not there.
func ReplaceInFile(path, old, new string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !bytes.Contains(data, []byte(old)) {
		return fmt.Errorf("%s has no %q to replace:\n%s", path, old, data)
	}
	return os.WriteFile(path, bytes.Replace(data, []byte(old), []byte(new), 1), 0o644)
}

// Maker generates recipes' trees in a sandbox and caches them.
type Maker struct {
	Sandbox *sandbox.Runner
	// Cred is the user the registry tools run as (the preview user).
	Cred *syscall.Credential
	// Cache is the shared folder of generated trees (see CacheDir).
	Cache string
	// Tools are the package managers' binaries besides npm (name to path), and ToolRoots
	// the folders to bind read-only for them to run (preview.FindPackageManagers and
	// preview.InstallRoot give both).
	Tools     map[string]string
	ToolRoots []string
	// Logf hears each step and its time.
	Logf func(format string, args ...any)
}

// CacheDir is the cache under the module root that the preview user can traverse, as a
// real path (the sandbox binds real paths; .cache may be a link to a shared one).
func CacheDir(moduleRoot string) (string, error) {
	dir := filepath.Join(moduleRoot, ".cache", "realapps")
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o711); err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(dir)
}

// Make returns the generated app's tree, generating it once.
func (m *Maker) Make(ctx context.Context, r Recipe) (string, error) {
	done := filepath.Join(m.Cache, r.Key())
	if _, err := os.Stat(filepath.Join(done, "app", "package.json")); err == nil {
		m.logf("%s: generated tree cached at %s", r.Name, done)
		return filepath.Join(done, "app"), nil
	}
	npmCache := filepath.Join(m.Cache, "npm")
	gen, err := os.MkdirTemp(m.Cache, "gen-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(gen)
	for _, d := range []string{npmCache, gen, filepath.Join(gen, "home")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", err
		}
		if err := os.Chown(d, int(m.Cred.Uid), int(m.Cred.Gid)); err != nil {
			return "", err
		}
	}
	path, roots := "/usr/local/bin:/usr/bin:/bin", m.ToolRoots
	for _, bin := range m.Tools {
		path = filepath.Dir(bin) + ":" + path
	}
	env := []string{
		"PATH=" + path, "HOME=" + filepath.Join(gen, "home"),
		"npm_config_cache=" + npmCache, "npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false",
		"NEXT_TELEMETRY_DISABLED=1", "CI=1",
	}
	run := func(dir string, argv []string) error {
		var out bytes.Buffer
		ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
		defer cancel()
		begin := time.Now()
		p, err := m.Sandbox.Start(ctx, sandbox.Spec{
			Argv: argv, Dir: dir, Env: env, Writable: []string{gen, npmCache}, ReadOnly: roots, Net: sandbox.NetEgress,
			UID: m.Cred.Uid, GID: m.Cred.Gid, Stdout: &out, Stderr: &out,
		})
		if err != nil {
			return err
		}
		if err := p.Wait(); err != nil {
			return fmt.Errorf("%s: %s: %w\n%s", r.Name, strings.Join(argv, " "), err, out.String())
		}
		m.logf("%s: %s (%s)", r.Name, strings.Join(argv, " "), time.Since(begin).Round(100*time.Millisecond))
		return nil
	}
	if err := run(gen, r.Create); err != nil {
		return "", err
	}
	app := filepath.Join(gen, "app")
	if r.Edit != nil {
		if err := r.Edit(app); err != nil {
			return "", fmt.Errorf("%s: %w", r.Name, err)
		}
	}
	if len(r.Lock) > 0 {
		if err := run(app, r.Lock); err != nil {
			return "", err
		}
	}
	if !GoogleFontsReachable() {
		if err := withoutGoogleFonts(app); err != nil {
			return "", err
		}
		m.logf("%s: fonts.googleapis.com does not resolve here: took next/font/google out of app/layout.tsx", r.Name)
	}
	// Generated trees hold no symlinks, but a node_modules would: none is kept.
	if err := os.RemoveAll(filepath.Join(app, "node_modules")); err != nil {
		return "", err
	}
	if err := os.RemoveAll(filepath.Join(gen, "home")); err != nil {
		return "", err
	}
	if err := os.Rename(gen, done); err != nil {
		// Another test (another package runs beside this one) made the same tree first: its
		// copy stands.
		if _, serr := os.Stat(filepath.Join(done, "app", "package.json")); serr == nil {
			m.logf("%s: made at the same time by another test; using its tree", r.Name)
			return filepath.Join(done, "app"), os.RemoveAll(gen)
		}
		return "", err
	}
	return filepath.Join(done, "app"), nil
}

func (m *Maker) logf(format string, args ...any) {
	if m.Logf != nil {
		m.Logf(format, args...)
	}
}

// NewMaker is a test's Maker: the registry tools run as user (the preview user) in a sandbox
// runner of their own, and trees are cached under the module's .cache/realapps.
func NewMaker(moduleRoot, user string, tools map[string]string, toolRoots []string, logf func(format string, args ...any)) (*Maker, error) {
	cred, err := unprivileged.Lookup(user)
	if err != nil {
		return nil, fmt.Errorf("%w: run `go tool task fixture:setup`", err)
	}
	sb, err := sandbox.New(sandbox.Config{})
	if err != nil {
		return nil, err
	}
	cache, err := CacheDir(moduleRoot)
	if err != nil {
		return nil, err
	}
	return &Maker{Sandbox: sb, Cred: cred, Cache: cache, Tools: tools, ToolRoots: toolRoots, Logf: logf}, nil
}

// Files reads a generated tree into files a test adds its own to before it makes the
// repository (fixturerepo.MaterializeFS).
func Files(tree string) (fstest.MapFS, error) {
	app := fstest.MapFS{}
	err := fs.WalkDir(os.DirFS(tree), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(filepath.Join(tree, p))
		app[p] = &fstest.MapFile{Data: b, Mode: 0o644}
		return err
	})
	return app, err
}
