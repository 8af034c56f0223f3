package preview

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/signoff/signoff/internal/hostiletest"
)

// probeJS is repository code that behaves as hostile code would, at build time (build.js)
// and at preview time (a route handler): it tries the host's loopback services, key files
// and a data dir, the worker's processes and another job's folder, and reports each
// success as a breach.
const probeJS = `const fs = require("fs");
const net = require("net");
module.exports = async function probe() {
  const cfg = JSON.parse(fs.readFileSync(__dirname + "/probe.json", "utf8"));
  const breaches = [];
  const tryConnect = (host, port) => new Promise((resolve) => {
    const s = net.connect({ host, port });
    const done = (ok) => { s.destroy(); resolve(ok); };
    s.setTimeout(3000, () => done(false));
    s.on("connect", () => done(true));
    s.on("error", () => done(false));
  });
  for (const port of cfg.ports) {
    for (const host of ["127.0.0.1", "10.0.2.2"]) {
      if (await tryConnect(host, port)) breaches.push("connected to " + host + ":" + port);
    }
  }
  for (const p of cfg.paths) {
    try { fs.readFileSync(p); breaches.push("read " + p); } catch (e) {}
    try { fs.readdirSync(p); breaches.push("listed " + p); } catch (e) {}
  }
  try { fs.writeFileSync(cfg.other + "/planted", "x"); breaches.push("wrote " + cfg.other); } catch (e) {}
  for (const pid of fs.readdirSync("/proc").filter((n) => /^[0-9]+$/.test(n))) {
    let cmd = "";
    try { cmd = fs.readFileSync("/proc/" + pid + "/cmdline", "utf8"); } catch (e) { continue; }
    if (cmd.includes(cfg.workerMark)) breaches.push("saw the worker: " + cmd.split("\0").join(" "));
  }
  return breaches;
};
`

var hostileApp = map[string]string{
	"probe.js": probeJS,
	"build.js": `const fs = require("fs");
const { spawn } = require("child_process");
fs.mkdirSync("dist", { recursive: true });
fs.writeFileSync("dist/built.txt", "built from " + fs.readFileSync("version.txt", "utf8").trim());
// A daemon that detaches from the build and would outlive it.
spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", "build-daemon-" + process.env.HOME], { detached: true, stdio: "ignore" }).unref();
require("./probe.js")().then((b) => fs.writeFileSync("dist/build-breaches.json", JSON.stringify(b)));
`,
	"server.js": strings.Replace(tinyApp["server.js"], `    case "/env":`, `    case "/probe": return require("./probe.js")().then((b) => json(200, b));
    case "/env":`, 1),
}

// TestRepositoryCodeIsContained runs the hostile probe as a build script and as a route
// handler of the running preview. Nothing it tries gets through, and the daemon the build
// detached is gone before the app starts.
func TestRepositoryCodeIsContained(t *testing.T) {
	requireIsolation(t)
	root := testRoot(t)
	var ports []int
	counters := map[string]func() int64{}
	for _, name := range []string{"temporal-frontend", "web-ui", "chat-endpoint", "stripe-double", "other-preview"} {
		port, reached := hostiletest.Service(t)
		ports = append(ports, port)
		counters[name] = reached
	}
	keys := filepath.Join(root, "keys")
	writeFiles(t, keys, map[string]string{"control.key": "PRIVATE"})
	if err := os.Chmod(keys, 0o700); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(root, "open-data")
	writeFiles(t, open, map[string]string{"index.json": "{}"})
	other := filepath.Join(root, "jobs", "jobs", "job-0123456789ab", "src")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, err := json.Marshal(map[string]any{
		"ports": ports, "other": other, "workerMark": filepath.Base(os.Args[0]),
		"paths": []string{filepath.Join(keys, "control.key"), keys, filepath.Join(open, "index.json"), open,
			"/proc/" + strconv.Itoa(os.Getpid()) + "/environ", "/root", "/etc/shadow"},
	})
	if err != nil {
		t.Fatal(err)
	}
	repo, _ := tinyRepo(t, root)
	files := map[string]string{"probe.json": string(cfg)}
	for k, v := range hostileApp {
		files[k] = v
	}
	sha := commit(t, repo, files, "hostile")

	l := newTinyLauncher(t, root, func(c *Config) { c.SecretPaths = []string{keys} })
	job, err := l.Prepare(context.Background(), repo, sha, Options{})
	if err != nil {
		t.Fatalf("prepare: %v (%+v)", err, job)
	}
	t.Cleanup(func() { l.Stop(job) })

	built, err := os.ReadFile(filepath.Join(job.Dir, "dist", "build-breaches.json"))
	if err != nil {
		t.Fatalf("the build's probe left no report: %v", err)
	}
	var atBuild, atRun []string
	if err := json.Unmarshal(built, &atBuild); err != nil {
		t.Fatal(err)
	}
	getJSON(t, job.URL+"/probe", &atRun)
	if len(atBuild) > 0 || len(atRun) > 0 {
		t.Errorf("repository code got through:\nat build: %v\nat run: %v", atBuild, atRun)
	}
	for name, reached := range counters {
		if n := reached(); n > 0 {
			t.Errorf("the %s stand-in was reached %d times", name, n)
		}
	}
	if entries, _ := os.ReadDir(other); len(entries) > 0 {
		t.Errorf("another job's folder was written: %v", entries)
	}
	if daemons := hostiletest.Running("build-daemon-"); len(daemons) > 0 {
		t.Errorf("the build's detached daemon outlived the build: %v", daemons)
	}
}
