package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// testBin is a copy of this test binary in a world-readable directory: the go
// build cache's directories are 0700 root, which the sandbox's uid cannot bind.
var testBin string

func TestMain(m *testing.M) {
	if spec := os.Getenv(workerEnv); spec != "" {
		os.Exit(runWorker(spec))
	}
	if name := os.Getenv(probeEnv); name != "" {
		os.Exit(runProbe(name))
	}
	code := func() int {
		dir, err := copyTestBinary()
		if err != nil {
			os.Stderr.WriteString("sandbox test: " + err.Error() + "\n")
			return 1
		}
		defer os.RemoveAll(dir)
		return m.Run()
	}()
	os.Exit(code)
}

func copyTestBinary() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "sandbox-bin-")
	if err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", err
	}
	b, err := os.ReadFile(self)
	if err != nil {
		return "", err
	}
	testBin = filepath.Join(dir, "probe")
	return dir, os.WriteFile(testBin, b, 0o755)
}

var (
	runnerOnce sync.Once
	runner     *Runner
	runnerErr  error
)

// newRunner is the shared Runner; a machine without the tools fails with the setup
// hint, except under -short.
func newRunner(t *testing.T) *Runner {
	t.Helper()
	runnerOnce.Do(func() { runner, runnerErr = New(Config{}) })
	if runnerErr != nil {
		if testing.Short() {
			t.Skip(runnerErr)
		}
		t.Fatal(runnerErr)
	}
	return runner
}

// sandboxUser is the unprivileged account probes run as: signoff-preview (made by
// `go tool task fixture:setup`), else nobody; a non-root test runs as itself.
func sandboxUser(t *testing.T) (uint32, uint32) {
	t.Helper()
	if os.Geteuid() != 0 {
		return uint32(os.Geteuid()), uint32(os.Getegid())
	}
	for _, name := range []string{"signoff-preview", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return uint32(uid), uint32(gid)
	}
	t.Fatal("no unprivileged user: run `go tool task fixture:setup` (creates signoff-preview)")
	return 0, 0
}

// jobDir is a directory owned by the sandbox's uid, reachable by it (t.TempDir's
// parent is 0700 root).
func jobDir(t *testing.T, uid, gid uint32) string {
	t.Helper()
	d, err := os.MkdirTemp("", "sandbox-job-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if err := os.Chown(d, int(uid), int(gid)); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

func token(t *testing.T) string {
	return strings.ReplaceAll(t.Name(), "/", "-") + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
}

// probeSpec runs the named probe with args, as the sandbox user, NetNone, with the
// test binary's directory bound read-only.
func probeSpec(t *testing.T, probe string, args ...string) Spec {
	uid, gid := sandboxUser(t)
	return Spec{
		Argv:     append([]string{testBin}, args...),
		Dir:      "/tmp",
		Env:      []string{probeEnv + "=" + probe, "PATH=/usr/bin", "SANDBOX_TOKEN=" + token(t)},
		ReadOnly: []string{filepath.Dir(testBin)},
		UID:      uid, GID: gid,
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// run runs s to the end and returns its stdout; stderr goes to the test log.
func run(t *testing.T, s Spec) (string, *Process, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	s.Stdout, s.Stderr = &stdout, &stderr
	p, err := newRunner(t).Start(testCtx(t), s)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	err = p.Wait()
	if stderr.Len() > 0 {
		t.Logf("stderr: %s", stderr.String())
	}
	return stdout.String(), p, err
}

// live is a started probe talking over pipes: lines from its stdout, and stdin to
// close when the test is done with it.
type live struct {
	p     *Process
	lines *bufio.Scanner
	stdin *os.File
}

func startLive(t *testing.T, ctx context.Context, s Spec) *live {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	s.Stdin, s.Stdout, s.Stderr = inR, outW, os.Stderr
	p, err := newRunner(t).Start(ctx, s)
	inR.Close()
	outW.Close()
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { p.Kill(); _ = p.Wait(); inW.Close(); outR.Close() })
	return &live{p: p, lines: bufio.NewScanner(outR), stdin: inW}
}

// expect reads the next stdout line and fails unless it starts with prefix.
func (l *live) expect(t *testing.T, prefix string) string {
	t.Helper()
	if !l.lines.Scan() {
		t.Fatalf("probe ended before %q: %v", prefix, l.lines.Err())
	}
	line := l.lines.Text()
	if !strings.HasPrefix(line, prefix) {
		t.Fatalf("probe said %q, want %q...", line, prefix)
	}
	return line
}

// hostPidsWith scans host /proc for processes whose cmdline or environ holds tok.
func hostPidsWith(t *testing.T, tok string) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		for _, f := range []string{"cmdline", "environ"} {
			b, err := os.ReadFile(filepath.Join("/proc", e.Name(), f))
			if err == nil && bytes.Contains(b, []byte(tok)) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

func envValue(env []string, key string) string {
	for _, kv := range env {
		if k, v, _ := strings.Cut(kv, "="); k == key {
			return v
		}
	}
	return ""
}

// lineFor returns the probe's report line for subject ("addr ok", "op:path fail: ...").
func lineFor(t *testing.T, out, subject string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, subject+" ") {
			return l
		}
	}
	t.Fatalf("no report for %s in:\n%s", subject, out)
	return ""
}

func hostListener(t *testing.T, addr string) (net.Listener, *int64) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var accepted int64
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			accepted++
			mu.Unlock()
			c.Close()
		}
	}()
	return ln, &accepted
}

func port(ln net.Listener) string { return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port) }

// hostIPv4 is a non-loopback address of this host, or "" if it has none.
func hostIPv4() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			return n.IP.String()
		}
	}
	return ""
}
