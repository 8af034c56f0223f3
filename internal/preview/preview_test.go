package preview

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/fixtures/fixturerepo"
	"github.com/signoff/signoff/internal/hostiletest"
	"github.com/signoff/signoff/internal/sandbox/sandboxtest"
)

func TestPrepareServesBuiltSHAAndStopKillsGroup(t *testing.T) {
	root := testRoot(t)
	repo, base := tinyRepo(t, root)
	l := newTinyLauncher(t, root, nil)

	job, err := l.Prepare(context.Background(), repo, base, Options{})
	if err != nil {
		t.Fatalf("prepare: %v (job %+v)", err, job)
	}
	t.Cleanup(func() { l.Stop(job) })
	if job.SHA != base || job.RequestedSHA != base {
		t.Fatalf("job SHA %s / requested %s, want %s", job.SHA, job.RequestedSHA, base)
	}
	if code, sha := servedSHA(t, job.URL); code != 200 || sha != base {
		t.Fatalf("/__verification = %d %q, want 200 %s", code, sha, base)
	}
	if job.RuntimeSHA != base {
		t.Errorf("RuntimeSHA = %q, want %s", job.RuntimeSHA, base)
	}
	if !strings.HasPrefix(job.URL, "http://127.0.0.1:") {
		t.Errorf("URL %q is not loopback", job.URL)
	}
	if !job.Build.Passed || len(job.Build.DirtyFiles) != 0 {
		t.Errorf("build %+v", job.Build)
	}
	for name, want := range map[string]string{"checkout": StatusPassed, "deps": StatusPassed, "build": StatusPassed, "lint": StatusSkipped, "test": StatusSkipped} {
		if got := stepByName(job, name).Status; got != want {
			t.Errorf("step %s = %q, want %q", name, got, want)
		}
	}
	if d := stepByName(job, "deps").Detail; !strings.Contains(d, "hardlinked") {
		t.Errorf("deps detail %q: the shared install should have been hardlinked", d)
	}
	if _, err := os.Stat(stepByName(job, "build").Log); err != nil {
		t.Errorf("build log: %v", err)
	}
	var who struct {
		Child int    `json:"child"`
		Built string `json:"built"`
	}
	getJSON(t, job.URL+"/whoami", &who)
	if who.Built != "built from one" || who.Child == 0 {
		t.Fatalf("whoami = %+v", who)
	}
	if len(pidFiles(t, l)) != 1 {
		t.Errorf("pid files while running: %v, want just the server's", pidFiles(t, l))
	}
	// The child's pid is the sandbox's own; the host sees the app and its child by where
	// they run.
	inside := procsUnder(job.Dir)
	if len(inside) < 2 {
		t.Fatalf("host processes in the work tree: %v, want the server and its child", inside)
	}

	if err := l.Stop(job); err != nil {
		t.Fatal(err)
	}
	for _, pid := range append(inside, job.PID) {
		if processAlive(pid) {
			t.Errorf("after Stop: %d (of %v, sandbox %d) still runs", pid, inside, job.PID)
		}
	}
	if files := pidFiles(t, l); len(files) != 0 {
		t.Errorf("pid files left: %v", files)
	}
	if _, err := os.Stat(filepath.Dir(job.Dir)); !os.IsNotExist(err) {
		t.Errorf("fresh job dir not removed: %v", err)
	}
	if _, err := os.Stat(stepByName(job, "build").Log); err != nil {
		t.Errorf("logs must survive Stop: %v", err)
	}
	if err := l.Stop(job); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestPreviewIsIsolated(t *testing.T) {
	requireIsolation(t)
	root := testRoot(t)
	repo, base := tinyRepo(t, root)

	keyDir := filepath.Join(root, "keys")
	if err := os.Mkdir(keyDir, 0o700); err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(keyDir, "verifier.key")
	const secret = "VERIFIER-KEY-c0ffee"
	if err := os.WriteFile(keyFile, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SIGNOFF_TEST_SECRET", secret)
	t.Setenv("SIGNOFF_VERIFIER_KEY_FILE", keyFile)

	l := newTinyLauncher(t, root, func(c *Config) { c.SecretPaths = []string{keyDir, keyFile} })
	job, err := l.Prepare(context.Background(), repo, base, Options{Release: "signoff-c1-2", Environment: "preview-c1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Stop(job) })

	var who struct {
		UID    int   `json:"uid"`
		Groups []int `json:"groups"`
	}
	getJSON(t, job.URL+"/whoami", &who)
	if want := uidOf(t, DefaultUser); who.UID != want || who.UID == 0 {
		t.Errorf("app runs as uid %d, want %d", who.UID, want)
	}
	if slices.Contains(who.Groups, 0) {
		t.Errorf("app keeps group 0: %v", who.Groups)
	}

	var read struct {
		Content string `json:"content"`
		Error   string `json:"error"`
	}
	code := getJSON(t, job.URL+"/read?path="+keyFile, &read)
	// The sandbox does not mount the key's folder at all.
	if code == 200 || strings.Contains(read.Content, secret) || read.Error != "ENOENT" {
		t.Errorf("reading the key file: %d %+v, want ENOENT", code, read)
	}

	// The shared node_modules is hardlinked: writing it would poison every
	// later attempt.
	var write struct {
		Error string `json:"error"`
	}
	if code := getJSON(t, job.URL+"/write?path=node_modules/marker.json", &write); code == 200 {
		t.Errorf("app could write the shared node_modules")
	}
	if data, _ := os.ReadFile(filepath.Join(l.cfg.SharedDeps, "node_modules", "marker.json")); string(data) != `{"shared":true}` {
		t.Errorf("shared marker changed: %q", data)
	}

	var env map[string]string
	getJSON(t, job.URL+"/env", &env)
	allowed := map[string]bool{"PATH": true, "HOME": true, "NODE_ENV": true, "PORT": true, "SIGNOFF_COMMIT_SHA": true, "NEXT_TELEMETRY_DISABLED": true,
		"SENTRY_RELEASE": true, "SENTRY_ENVIRONMENT": true}
	// The app reports this attempt's release to its error tracker: the Sentry gate asks by it.
	if env["SENTRY_RELEASE"] != "signoff-c1-2" || env["SENTRY_ENVIRONMENT"] != "preview-c1" {
		t.Errorf("SENTRY_RELEASE=%q SENTRY_ENVIRONMENT=%q", env["SENTRY_RELEASE"], env["SENTRY_ENVIRONMENT"])
	}
	for _, kv := range os.Environ() {
		// Shells set PWD and SHLVL themselves; a leak is our value arriving.
		k, v, _ := strings.Cut(kv, "=")
		if got, ok := env[k]; ok && got == v && !allowed[k] {
			t.Errorf("worker variable %s reached the app", k)
		}
	}
	for k, v := range env {
		if strings.Contains(v, secret) || strings.Contains(v, keyDir) {
			t.Errorf("app env %s=%q carries the secret or key path", k, v)
		}
	}
	if env["HOME"] == os.Getenv("HOME") || !strings.HasPrefix(env["HOME"], l.cfg.JobsRoot) {
		t.Errorf("HOME = %q, want a job-local directory", env["HOME"])
	}
	if env["NEXT_TELEMETRY_DISABLED"] != "1" || env["NODE_ENV"] != "production" {
		t.Errorf("env NEXT_TELEMETRY_DISABLED=%q NODE_ENV=%q", env["NEXT_TELEMETRY_DISABLED"], env["NODE_ENV"])
	}
}

func TestNewRefusesReadableSecret(t *testing.T) {
	requireIsolation(t)
	root := testRoot(t)
	open := filepath.Join(root, "open")
	writeFiles(t, open, map[string]string{"key": "k"})
	if err := os.Chmod(open, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := New(Config{JobsRoot: filepath.Join(root, "jobs"), RunAs: DefaultUser, SecretPaths: []string{filepath.Join(open, "key")}, Sandbox: sandboxtest.Runner(t)})
	var ie *InputError
	if !errors.As(err, &ie) {
		t.Fatalf("New with a world-readable key: err = %v, want *InputError", err)
	}
	if err := os.Chmod(open, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{JobsRoot: filepath.Join(root, "jobs"), RunAs: DefaultUser, SecretPaths: []string{filepath.Join(open, "key")}, Sandbox: sandboxtest.Runner(t)}); err != nil {
		t.Fatalf("New with the key in a 0700 dir: %v", err)
	}
}

func TestRepoScriptsDecideTheBuild(t *testing.T) {
	root := testRoot(t)
	repo, _ := tinyRepo(t, root)
	l := newTinyLauncher(t, root, nil)
	cases := []struct {
		name, step string
		files      map[string]string
	}{
		{"lint fails", "lint", map[string]string{"package.json": strings.Replace(tinyApp["package.json"], `"build"`, `"lint": "node -e \"process.exit(3)\"", "build"`, 1)}},
		{"test fails", "test", map[string]string{"package.json": strings.Replace(tinyApp["package.json"], `"build"`, `"test": "node -e \"process.exit(4)\"", "build"`, 1)}},
		{"build fails", "build", map[string]string{"build.js": "console.error('Error: DATABASE_URL is not set'); process.exit(2)\n"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sha := commit(t, repo, tc.files, tc.name)
			job, err := l.Prepare(context.Background(), repo, sha, Options{})
			var bf *BuildFailedError
			if !errors.As(err, &bf) || bf.Step != tc.step {
				t.Fatalf("err = %v, want BuildFailedError at %s", err, tc.step)
			}
			if job == nil || job.Build.Passed || job.URL != "" || stepByName(job, tc.step).ExitCode == 0 {
				t.Fatalf("job = %+v", job)
			}
			// The requester reads why and what to do, not only a log path on the server.
			if st := stepByName(job, tc.step); st.Next == "" || st.Next != bf.Next || !strings.Contains(err.Error(), bf.Next) {
				t.Errorf("step %+v, error %v: want the next step in both", st, err)
			}
			if tc.step == "build" && (bf.Cause != "Error: DATABASE_URL is not set" || !strings.Contains(bf.Next, "environment variable")) {
				t.Errorf("build: cause %q, next %q", bf.Cause, bf.Next)
			}
			if files := pidFiles(t, l); len(files) != 0 {
				t.Errorf("processes recorded after a failed build: %v", files)
			}
			if _, err := os.Stat(filepath.Dir(job.Dir)); !os.IsNotExist(err) {
				t.Errorf("failed job dir kept: %v", err)
			}
			// Put the passing files back for the next case.
			for name := range tc.files {
				writeFiles(t, repo, map[string]string{name: tinyApp[name]})
			}
			commit(t, repo, nil, "restore after "+tc.name)
		})
	}
}

func TestSlotReuse(t *testing.T) {
	root := testRoot(t)
	repo, base := tinyRepo(t, root)
	writeFiles(t, repo, map[string]string{"extra.txt": "only in base\n"})
	withExtra := commit(t, repo, nil, "extra file")
	if err := os.Remove(filepath.Join(repo, "extra.txt")); err != nil {
		t.Fatal(err)
	}
	next := commit(t, repo, map[string]string{"version.txt": "two\n"}, "v2")
	l := newTinyLauncher(t, root, nil)

	first, err := l.Prepare(context.Background(), repo, withExtra, Options{Slot: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Prepare(context.Background(), repo, base, Options{Slot: "a"}); !errors.Is(err, ErrSlotBusy) {
		t.Errorf("second prepare on a busy slot: %v, want ErrSlotBusy", err)
	}
	l.Stop(first)
	if _, err := os.Stat(first.Dir); err != nil {
		t.Fatalf("slot work tree removed on Stop: %v", err)
	}

	second, err := l.Prepare(context.Background(), repo, next, Options{Slot: "a"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Stop(second)
	if code, sha := servedSHA(t, second.URL); code != 200 || sha != next {
		t.Fatalf("/__verification = %d %q, want %s", code, sha, next)
	}
	if d := stepByName(second, "deps").Detail; !strings.Contains(d, "kept") {
		t.Errorf("deps detail %q, want node_modules kept", d)
	}
	if _, err := os.Stat(filepath.Join(second.Dir, "extra.txt")); !os.IsNotExist(err) {
		t.Errorf("file from the previous commit survived in the slot: %v", err)
	}
	var who struct {
		Built string `json:"built"`
	}
	getJSON(t, second.URL+"/whoami", &who)
	if who.Built != "built from two" {
		t.Errorf("built = %q", who.Built)
	}
}

func TestChangedPackageFilesGetOwnInstall(t *testing.T) {
	root := testRoot(t)
	repo, _ := tinyRepo(t, root)
	sha := commit(t, repo, map[string]string{"package.json": strings.Replace(tinyApp["package.json"], `"private": true,`, `"private": true, "description": "changed",`, 1)}, "change package.json")
	l := newTinyLauncher(t, root, nil)
	job, err := l.Prepare(context.Background(), repo, sha, Options{})
	if err != nil {
		t.Fatalf("%v (log %s)", err, stepByName(job, "deps").Log)
	}
	defer l.Stop(job)
	deps := stepByName(job, "deps")
	if !strings.Contains(deps.Detail, "npm ci") || deps.Status != StatusPassed {
		t.Errorf("deps = %+v, want a real npm ci", deps)
	}
	if _, err := os.Stat(filepath.Join(job.Dir, "node_modules", "marker.json")); !os.IsNotExist(err) {
		t.Errorf("shared node_modules used despite a different package.json: %v", err)
	}
}

func TestSweepKillsLeftovers(t *testing.T) {
	root := testRoot(t)
	repo, base := tinyRepo(t, root)
	crashed := newTinyLauncher(t, root, nil)
	job, err := crashed.Prepare(context.Background(), repo, base, Options{})
	if err != nil {
		t.Fatal(err)
	}
	inside := procsUnder(job.Dir)
	if len(inside) < 2 {
		t.Fatalf("host processes in the work tree: %v, want the server and its child", inside)
	}

	// A pid file for a live process that is not ours (this test, with a
	// wrong start time): Sweep must leave it alone.
	foreign := pidRecord{PID: os.Getpid(), StartTicks: 1, Job: "job-000000000000", Step: "start"}
	if err := writePidFile(filepath.Join(crashed.pidDir(), "foreign.json"), foreign); err != nil {
		t.Fatal(err)
	}

	// Every record names its sandbox's pid 1 too.
	for _, f := range pidFiles(t, crashed) {
		var rec pidRecord
		if b, err := os.ReadFile(f); err != nil || json.Unmarshal(b, &rec) != nil {
			t.Fatalf("pid file %s: %v", f, err)
		}
		if filepath.Base(f) != "foreign.json" && (rec.Init <= 1 || rec.InitStartTicks == 0) {
			t.Errorf("pid file %s does not name the sandbox's pid 1: %+v", f, rec)
		}
	}
	// A sandbox's pid 1 that outlived its bwrap (a worker without cgroups killed before pid 1
	// bound its life to bwrap's): a process of this test stands in for it, its bwrap gone.
	orphan, ticks := hostiletest.OrphanedInit(t)
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	orphaned := pidRecord{PID: gone.Process.Pid, StartTicks: 1, Init: orphan.Process.Pid, InitStartTicks: ticks, Job: "job-000000000001", Step: "build"}
	if err := writePidFile(filepath.Join(crashed.pidDir(), "orphaned.json"), orphaned); err != nil {
		t.Fatal(err)
	}
	// And one whose pid 1 is now another process (this test, by a wrong start time).
	reused := pidRecord{PID: gone.Process.Pid, StartTicks: 1, Init: os.Getpid(), InitStartTicks: 1, Job: "job-000000000002", Step: "build"}
	if err := writePidFile(filepath.Join(crashed.pidDir(), "reused.json"), reused); err != nil {
		t.Fatal(err)
	}

	// The worker "crashed": a new process knows only the jobs root.
	rep, err := Sweep(crashed.cfg.JobsRoot)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(rep.Killed, job.PID) {
		t.Errorf("Sweep killed %v, want %d", rep.Killed, job.PID)
	}
	if !slices.Contains(rep.Mismatched, os.Getpid()) {
		t.Errorf("Sweep mismatched %v, want this test's pid", rep.Mismatched)
	}
	if !slices.Contains(rep.KilledInits, orphan.Process.Pid) || slices.Contains(rep.KilledInits, os.Getpid()) {
		t.Errorf("Sweep killed the pid 1s %v, want %d and not this test's", rep.KilledInits, orphan.Process.Pid)
	}
	hostiletest.WaitKilled(t, orphan)
	waitGone(t, job.PID)
	for _, pid := range inside {
		waitGone(t, pid)
	}
	if !processAlive(os.Getpid()) {
		t.Fatal("impossible: test process gone")
	}
	if len(rep.RemovedDirs) != 1 || rep.RemovedDirs[0] != filepath.Dir(job.Dir) {
		t.Errorf("removed %v, want %s", rep.RemovedDirs, filepath.Dir(job.Dir))
	}
	if files := pidFiles(t, crashed); len(files) != 0 {
		t.Errorf("pid files left: %v", files)
	}
	// A Stop from the old launcher after the sweep must not fail or kill
	// anything else.
	if err := crashed.Stop(job); err != nil {
		t.Fatal(err)
	}
}

func TestBadInputLeavesNothing(t *testing.T) {
	root := testRoot(t)
	repo, base := tinyRepo(t, root)
	l := newTinyLauncher(t, root, nil)
	for name, call := range map[string]func() error{
		"short sha": func() error { _, err := l.Prepare(context.Background(), repo, base[:12], Options{}); return err },
		"upper sha": func() error {
			_, err := l.Prepare(context.Background(), repo, strings.ToUpper(base), Options{})
			return err
		},
		"bad slot":   func() error { _, err := l.Prepare(context.Background(), repo, base, Options{Slot: "../x"}); return err },
		"not a repo": func() error { _, err := l.Prepare(context.Background(), root, base, Options{}); return err },
		"unknown commit": func() error {
			_, err := l.Prepare(context.Background(), repo, strings.Repeat("a", 40), Options{})
			return err
		},
	} {
		var ie *InputError
		if err := call(); !errors.As(err, &ie) {
			t.Errorf("%s: err = %v, want *InputError", name, err)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(l.cfg.JobsRoot, jobsDir)); len(entries) != 0 {
		t.Errorf("job dirs left after bad input: %v", entries)
	}
	if _, err := New(Config{JobsRoot: "relative"}); err == nil {
		t.Error("New accepted a relative jobs root")
	}
}

// An app in a folder of the repository is built from that folder of the commit, and still
// serves the commit's own SHA: the verifier can check it against the contract's commit.
func TestPrepareBuildsAnAppFolder(t *testing.T) {
	root := testRoot(t)
	src := filepath.Join(root, "mono-src")
	files := map[string]string{"README.md": "monorepo\n", "package.json": `{"name":"not-the-app"}`}
	for name, content := range tinyApp {
		files["apps/web/"+name] = content
	}
	writeFiles(t, src, files)
	repo := filepath.Join(root, "mono-repo")
	sha, err := fixturerepo.Materialize(src, repo)
	if err != nil {
		t.Fatal(err)
	}
	l := newTinyLauncher(t, root, nil)

	job, err := l.Prepare(context.Background(), repo, sha, Options{AppDir: "apps/web"})
	if err != nil {
		t.Fatalf("prepare: %v (job %+v)", err, job)
	}
	t.Cleanup(func() { l.Stop(job) })
	if code, served := servedSHA(t, job.URL); code != 200 || served != sha || job.SHA != sha {
		t.Fatalf("/__verification = %d %q, job SHA %s; want the commit %s", code, served, job.SHA, sha)
	}
	var who struct {
		Built string `json:"built"`
	}
	getJSON(t, job.URL+"/whoami", &who)
	if who.Built != "built from one" || !job.Build.Passed || len(job.Build.DirtyFiles) != 0 {
		t.Fatalf("whoami %+v, build %+v", who, job.Build)
	}
	if _, err := os.Stat(filepath.Join(job.Dir, "README.md")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("files outside the app folder were checked out: %v", err)
	}
	if d := stepByName(job, "deps").Detail; !strings.Contains(d, "hardlinked") {
		t.Errorf("deps detail %q: the app folder's package files match the shared install", d)
	}

	for _, bad := range []string{"../etc", "apps/../..", "/srv", ".git", "apps/missing"} {
		j, err := l.Prepare(context.Background(), repo, sha, Options{AppDir: bad})
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Errorf("AppDir %q: %v, want an input error", bad, err)
		}
		if j != nil && err == nil {
			l.Stop(j)
		}
	}
}

// TestPreexistingChecksGoOn: a lint failure the base commit already has does not stop the
// base check (it is recorded with its count and cause, for the quote to name), nor an
// attempt that fails no worse; an attempt that fails worse, or a contract that records
// nothing, stops at lint as before.
func TestPreexistingChecksGoOn(t *testing.T) {
	root := testRoot(t)
	repo, _ := tinyRepo(t, root)
	l := newTinyLauncher(t, root, nil)
	lint := func(errors int) map[string]string {
		script := fmt.Sprintf(`for (let i = 0; i < %d; i++) console.log('  %%d:5  error  Unexpected any  @typescript-eslint/no-explicit-any', i + 1); console.log('\n✖ %d problems (%d errors, 0 warnings)'); process.exit(1)`, errors, errors, errors)
		return map[string]string{
			"lint.js":      script + "\n",
			"package.json": strings.Replace(tinyApp["package.json"], `"build"`, `"lint": "node lint.js", "build"`, 1),
		}
	}
	base := commit(t, repo, lint(2), "base: lint fails with 2 errors")
	worse := commit(t, repo, lint(3), "worse: 3 errors")
	recorded := []contracts.PreexistingFailure{{Step: "lint", Errors: 2}}
	for _, tc := range []struct {
		name string
		sha  string
		opts Options
		// errors is the lint step's count; wantNext is in the refusal, "" when it builds.
		errors   int
		wantNext string
	}{
		{"the base check records it", base, Options{BaseCheck: true}, 2, ""},
		{"an attempt no worse", base, Options{Preexisting: recorded}, 2, ""},
		{"an attempt worse", worse, Options{Preexisting: recorded}, 3, "lint fails worse than on the base commit (3 errors where the base had 2)"},
		{"a contract that records nothing", base, Options{}, 2, "lint fails at this commit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job, err := l.Prepare(context.Background(), repo, tc.sha, tc.opts)
			st := stepByName(job, "lint")
			if st.Errors != tc.errors {
				t.Errorf("lint counted %d errors, want %d", st.Errors, tc.errors)
			}
			if tc.wantNext != "" {
				var bf *BuildFailedError
				if !errors.As(err, &bf) || bf.Step != "lint" || !strings.Contains(bf.Next, tc.wantNext) || st.Preexisting {
					t.Fatalf("err = %v (step %+v), want a lint failure saying %q", err, st, tc.wantNext)
				}
				return
			}
			if err != nil {
				t.Fatalf("prepare: %v", err)
			}
			defer l.Stop(job)
			res := job.Result()
			if !res.Passed || !st.Preexisting || st.Cause != fmt.Sprintf("✖ %d problems (%d errors, 0 warnings)", tc.errors, tc.errors) {
				t.Fatalf("build %+v, lint %+v: want it passed past a recorded lint failure", res, st)
			}
			if got := res.Preexisting(); len(got) != 1 || got[0].Step != "lint" || got[0].Errors != tc.errors {
				t.Errorf("recorded %+v", got)
			}
			if job.URL == "" {
				t.Error("no app started")
			}
		})
	}
}
