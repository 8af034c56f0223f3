package preview

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/signoff/signoff/fixtures/fixturerepo"
	"github.com/signoff/signoff/internal/sandbox/sandboxtest"
)

// tinyApp is a Node app with no dependencies, shaped like a Next app to the
// launcher (npm scripts build and start, -H/-p flags), so the launcher's own
// behaviour is tested in well under a second per preview.
var tinyApp = map[string]string{
	".gitignore": "node_modules\ndist\n",
	"package.json": `{
  "name": "tiny",
  "version": "1.0.0",
  "private": true,
  "scripts": { "build": "node build.js", "start": "node server.js" }
}
`,
	"package-lock.json": `{
  "name": "tiny",
  "version": "1.0.0",
  "lockfileVersion": 3,
  "requires": true,
  "packages": { "": { "name": "tiny", "version": "1.0.0" } }
}
`,
	"build.js": `const fs = require("fs");
fs.mkdirSync("dist", { recursive: true });
fs.writeFileSync("dist/built.txt", "built from " + fs.readFileSync("version.txt", "utf8").trim());
`,
	"version.txt": "one\n",
	"server.js": `const http = require("http");
const fs = require("fs");
const { spawn } = require("child_process");
const args = process.argv.slice(2);
let host = "", port = 0;
for (let i = 0; i < args.length; i++) {
  if (args[i] === "-p") port = Number(args[++i]);
  if (args[i] === "-H") host = args[++i];
}
// A stubborn child in the same process group: Stop must still end it.
const child = spawn(process.execPath, ["-e", "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)"], { stdio: "ignore" });
http.createServer((req, res) => {
  const url = new URL(req.url, "http://x");
  const json = (code, v) => { res.writeHead(code, { "content-type": "application/json" }); res.end(JSON.stringify(v)); };
  const sha = process.env.SIGNOFF_COMMIT_SHA;
  switch (url.pathname) {
    case "/__verification": return sha ? json(200, { commit_sha: sha }) : json(404, { error: "no sha" });
    case "/env": return json(200, process.env);
    case "/db":
      // What a page that reads a table at render sees (psql stands in for a driver).
      try { return json(200, { rows: require("child_process").execFileSync(process.env.PSQL, [process.env.DATABASE_URL, "-Atc", "select string_agg(name, ',' order by name) from items"], { encoding: "utf8" }).trim() }); }
      catch (e) { return json(500, { error: String(e.stderr || e) }); }
    case "/whoami": return json(200, { uid: process.getuid(), groups: process.getgroups(), child: child.pid, built: fs.readFileSync("dist/built.txt", "utf8") });
    case "/read":
      try { return json(200, { content: fs.readFileSync(url.searchParams.get("path"), "utf8") }); }
      catch (e) { return json(403, { error: e.code }); }
    case "/write":
      try { fs.appendFileSync(url.searchParams.get("path"), "x"); return json(200, { written: true }); }
      catch (e) { return json(403, { error: e.code }); }
  }
  json(404, { error: "not found" });
}).listen(port, host);
`,
}

// testRoot makes a directory the preview user can traverse (t.TempDir's
// parents are 0700).
func testRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "preview-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	return dir
}

// previewUser is the user to run repo code as: DefaultUser when the tests
// run as root (the setup must have created it), else none.
func previewUser(t testing.TB) string {
	t.Helper()
	if os.Geteuid() != 0 {
		return ""
	}
	if _, err := user.Lookup(DefaultUser); err != nil {
		t.Fatalf("user %s is missing: run `go tool task fixture:setup` (%v)", DefaultUser, err)
	}
	return DefaultUser
}

func requireIsolation(t testing.TB) {
	t.Helper()
	if previewUser(t) == "" {
		t.Skip("isolation checks need root (to switch to " + DefaultUser + ")")
	}
}

func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// tinyRepo materializes tinyApp as a git repository and returns its path
// and base SHA.
func tinyRepo(t testing.TB, root string) (string, string) {
	t.Helper()
	src := filepath.Join(root, "tiny-src")
	writeFiles(t, src, tinyApp)
	repo := filepath.Join(root, "tiny-repo")
	sha, err := fixturerepo.Materialize(src, repo)
	if err != nil {
		t.Fatal(err)
	}
	return repo, sha
}

// commit writes files into repo and commits them.
func commit(t testing.TB, repo string, files map[string]string, msg string) string {
	t.Helper()
	writeFiles(t, repo, files)
	sha, err := fixturerepo.CommitAll(repo, msg)
	if err != nil {
		t.Fatal(err)
	}
	return sha
}

// tinyShared is a shared install matching tinyApp's package files.
func tinyShared(t testing.TB, root string) string {
	t.Helper()
	dir := filepath.Join(root, "shared")
	writeFiles(t, dir, map[string]string{
		"package.json":             tinyApp["package.json"],
		"package-lock.json":        tinyApp["package-lock.json"],
		"node_modules/marker.json": `{"shared":true}`,
	})
	return dir
}

func newTinyLauncher(t testing.TB, root string, mutate func(*Config)) *Launcher {
	t.Helper()
	cfg := Config{
		Sandbox:      sandboxtest.Runner(t),
		JobsRoot:     filepath.Join(root, "jobs"),
		SharedDeps:   tinyShared(t, root),
		RunAs:        previewUser(t),
		StepTimeout:  2 * time.Minute,
		StartTimeout: 30 * time.Second,
		StopGrace:    300 * time.Millisecond,
	}
	if mutate != nil {
		mutate(&cfg)
	}
	l, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// getJSON fetches url and decodes a JSON object, returning the status.
func getJSON(t testing.TB, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if v != nil {
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("GET %s: %v in %q", url, err, body)
		}
	}
	return resp.StatusCode
}

func servedSHA(t testing.TB, base string) (int, string) {
	t.Helper()
	var v struct {
		CommitSHA string `json:"commit_sha"`
	}
	code := getJSON(t, base+"/__verification", &v)
	return code, v.CommitSHA
}

// waitGone polls until pid is no longer a live process.
func waitGone(t testing.TB, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for processAlive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still alive", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func stepByName(job *Job, name string) Step {
	for _, s := range job.Build.Steps {
		if s.Name == name {
			return s
		}
	}
	return Step{}
}

func pidFiles(t testing.TB, l *Launcher) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(l.pidDir(), "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func uidOf(t testing.TB, name string) int {
	t.Helper()
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(u.Uid)
	if err != nil {
		t.Fatal(fmt.Errorf("uid %q: %w", u.Uid, err))
	}
	return n
}

// procsUnder lists host processes whose working directory is dir or below it.
func procsUnder(dir string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err == nil && (cwd == dir || strings.HasPrefix(cwd, dir+"/")) && processAlive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}
