//go:build linux

package verify

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/signoff/signoff/contracts"
)

// proc is what the host's /proc says about one process.
type proc struct {
	pid     int
	ppid    int
	exe     string
	cmdline []string
	status  map[string]string
	environ []string
	userNS  string
	pidNS   string
	netNS   string
}

func (p proc) isChromium(exe string) bool { return p.exe == exe }

// processType is Chromium's --type= of the process; "" is the browser process itself.
func (p proc) processType() string {
	for _, a := range p.cmdline {
		if v, ok := strings.CutPrefix(a, "--type="); ok {
			return v
		}
	}
	return ""
}

func readProc(pid int) (proc, error) {
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	p := proc{pid: pid, status: map[string]string{}}
	raw, err := os.ReadFile(filepath.Join(dir, "status"))
	if err != nil {
		return p, err
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			p.status[k] = strings.TrimSpace(v)
		}
	}
	p.ppid, _ = strconv.Atoi(p.status["PPid"])
	if raw, err = os.ReadFile(filepath.Join(dir, "cmdline")); err != nil {
		return p, err
	}
	// Chromium's child processes rewrite their title: one string, arguments joined by spaces.
	p.cmdline = strings.Fields(strings.ReplaceAll(string(raw), "\x00", " "))
	p.exe, _ = os.Readlink(filepath.Join(dir, "exe")) // unreadable for kernel threads
	if raw, err = os.ReadFile(filepath.Join(dir, "environ")); err != nil {
		return p, err
	}
	if len(raw) > 0 {
		p.environ = strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
	}
	for _, ns := range []struct {
		name string
		dst  *string
	}{{"user", &p.userNS}, {"pid", &p.pidNS}, {"net", &p.netNS}} {
		if *ns.dst, err = os.Readlink(filepath.Join(dir, "ns", ns.name)); err != nil {
			return p, err
		}
	}
	return p, nil
}

// chromiumProcesses returns every Chromium process descended from this test process (through
// the Playwright drivers it started): the browsers, their zygotes, renderers and utilities.
func chromiumProcesses(t *testing.T, exe string) []proc {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	all := map[int]proc{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, err := readProc(pid); err == nil {
			all[pid] = p
		} // else it exited while we looked
	}
	self := os.Getpid()
	descends := func(p proc) bool {
		for seen := 0; p.ppid > 1 && seen < 64; seen++ {
			if p.ppid == self {
				return true
			}
			if p = all[p.ppid]; p.pid == 0 {
				return false
			}
		}
		return false
	}
	var out []proc
	for _, p := range all {
		if p.isChromium(exe) && descends(p) {
			out = append(out, p)
		}
	}
	return out
}

// confinedSetup starts a fresh driver with secrets in the worker's environment, as a real
// verify worker has them, and opens src on it.
func confinedSetup(t *testing.T, src Local) (*BrowserSession, map[string]string) {
	t.Helper()
	needBrowser(t)
	secrets := map[string]string{}
	for _, k := range []string{"SIGNOFF_TEST_SECRET", "STRIPE_SECRET_KEY", "TEMPORAL_API_KEY"} {
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		secrets[k] = "secret-" + hex.EncodeToString(b)
		t.Setenv(k, secrets[k])
	}
	d, err := StartDriver(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Stop() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sess, err := src.Open(ctx, d.Playwright())
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = sess.Close() })
	return sess, secrets
}

// renderJS loads a loopback page whose script must run, so a renderer exists and works.
func renderJS(t *testing.T, sess *BrowserSession) {
	t.Helper()
	srv := site(t, testSHA, map[string]string{"/": page("", `<p id="p">static</p><script>p.textContent = "js ran " + (6 * 7)</script>`)}, nil)
	pg, err := sess.Browser.NewPage()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pg.Goto(srv.URL + "/"); err != nil {
		t.Fatal(err)
	}
	if txt, err := pg.Locator("#p").TextContent(); err != nil || txt != "js ran 42" {
		t.Fatalf("page text %q (%v): the page's JavaScript did not run", txt, err)
	}
}

// wantUser is the uid and gid every Chromium process must have: the browser user when the test
// runs as root, else the test's own.
func wantUser(t *testing.T) (uid, gid string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return strconv.Itoa(os.Geteuid()), strconv.Itoa(os.Getegid())
	}
	u, err := user.Lookup(DefaultBrowserUser)
	if err != nil {
		t.Fatalf("browser user: %v (run `%s`)", err, SetupTask)
	}
	return u.Uid, u.Gid
}

// checkConfined asserts, from the host's /proc, what a renderer exploit would inherit: every
// Chromium process this test started runs as the unprivileged user with no capabilities and
// none of the worker's secrets; with the sandbox on, each renderer is also in user, PID and
// network namespaces of its own and under seccomp-bpf.
func checkConfined(t *testing.T, secrets map[string]string, sandboxed bool) {
	t.Helper()
	exe := DefaultConfig().Chromium
	procs := chromiumProcesses(t, exe)
	uid, gid := wantUser(t)
	hostNS, err := os.Readlink("/proc/self/ns/user")
	if err != nil {
		t.Fatal(err)
	}
	browsers, renderers := map[int]proc{}, 0
	for _, p := range procs {
		if p.processType() == "" {
			browsers[p.pid] = p
		}
	}
	if len(browsers) == 0 {
		t.Fatalf("no Chromium browser process under this test (%d chromium processes)", len(procs))
	}
	for _, p := range procs {
		typ := p.processType()
		if f := strings.Fields(p.status["Uid"]); len(f) != 4 || f[0] != uid || f[1] != uid || f[2] != uid || f[3] != uid {
			t.Errorf("pid %d (%s): Uid %q, want %s for real, effective, saved and fs", p.pid, typ, p.status["Uid"], uid)
		}
		if f := strings.Fields(p.status["Gid"]); len(f) != 4 || f[0] != gid || f[1] != gid {
			t.Errorf("pid %d (%s): Gid %q, want %s", p.pid, typ, p.status["Gid"], gid)
		}
		if p.status["Groups"] != "" {
			t.Errorf("pid %d (%s): supplementary groups %q", p.pid, typ, p.status["Groups"])
		}
		for _, c := range []string{"CapPrm", "CapEff", "CapAmb"} {
			if p.userNS == hostNS && strings.Trim(p.status[c], "0") != "" {
				t.Errorf("pid %d (%s): %s %s in the host's user namespace", p.pid, typ, c, p.status[c])
			}
		}
		if p.status["NoNewPrivs"] != "1" {
			t.Errorf("pid %d (%s): NoNewPrivs %q", p.pid, typ, p.status["NoNewPrivs"])
		}
		env := strings.Join(p.environ, "\n")
		for k, v := range secrets {
			if strings.Contains(env, v) || strings.Contains(env, k+"=") {
				t.Errorf("pid %d (%s): environment holds the worker's %s", p.pid, typ, k)
			}
		}
		if typ == "" {
			for _, kv := range p.environ {
				k, _, _ := strings.Cut(kv, "=")
				switch k {
				case "PATH", "HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "LANG":
				default:
					t.Errorf("browser pid %d: unexpected environment variable %s", p.pid, k)
				}
			}
		}
		if typ != "renderer" {
			continue
		}
		renderers++
		br := browserOf(p, browsers)
		if !sandboxed {
			continue
		}
		if p.userNS == br.userNS || p.pidNS == br.pidNS || p.netNS == br.netNS {
			t.Errorf("renderer %d shares namespaces with browser %d: user %s/%s pid %s/%s net %s/%s",
				p.pid, br.pid, p.userNS, br.userNS, p.pidNS, br.pidNS, p.netNS, br.netNS)
		}
		if p.status["Seccomp"] != "2" {
			t.Errorf("renderer %d: Seccomp %q, want 2 (seccomp-bpf)", p.pid, p.status["Seccomp"])
		}
	}
	if renderers == 0 {
		t.Fatalf("no renderer among %d chromium processes", len(procs))
	}
	t.Logf("%d chromium processes (%d browsers, %d renderers) as uid %s", len(procs), len(browsers), renderers, uid)
}

// browserOf is the browser process p belongs to (p itself for a browser).
func browserOf(p proc, browsers map[int]proc) proc {
	for {
		if b, ok := browsers[p.pid]; ok {
			return b
		}
		if p.ppid <= 1 {
			return proc{}
		}
		next, err := readProc(p.ppid)
		if err != nil {
			return proc{}
		}
		p = next
	}
}

func TestLocalChromiumIsConfined(t *testing.T) {
	sess, secrets := confinedSetup(t, DefaultConfig().local())
	if sess.Info.Sandbox != SandboxChromium {
		t.Errorf("session sandbox %q, want %q", sess.Info.Sandbox, SandboxChromium)
	}
	renderJS(t, sess)
	checkConfined(t, secrets, true)
}

// The operator's opt-out: where the namespaces are missing the browser still runs as the
// browser user with a clean environment, and says it ran without the sandbox.
func TestNoSandboxOnlyByOptOut(t *testing.T) {
	needBrowser(t)
	probe := sandboxProbe
	t.Cleanup(func() { sandboxProbe = probe })
	sandboxProbe = func(context.Context, launchPlan) error { return errors.New("user namespaces disabled (test)") }

	_, err := DefaultConfig().local().Open(context.Background(), testDriver.Playwright())
	if !IsSetupError(err) || !strings.Contains(err.Error(), EnvAllowNoBrowserSandbox) {
		t.Fatalf("without the sandbox and without the opt-out: %v, want a SetupError naming %s", err, EnvAllowNoBrowserSandbox)
	}

	src := DefaultConfig().local()
	src.AllowNoSandbox = true
	sess, secrets := confinedSetup(t, src)
	if sess.Info.Sandbox != SandboxNone {
		t.Errorf("session sandbox %q, want %q", sess.Info.Sandbox, SandboxNone)
	}
	renderJS(t, sess)
	checkConfined(t, secrets, false)
}

// The launcher, not only Playwright's option, keeps the sandbox on: an argument turning it off
// makes the launch fail.
func TestLauncherRefusesSandboxOff(t *testing.T) {
	needBrowser(t)
	src := DefaultConfig().local()
	src.Args = append(append([]string{}, LaunchArgs...), "--no-sandbox")
	sess, err := src.Open(context.Background(), testDriver.Playwright())
	if err == nil {
		_ = sess.Close()
		t.Fatal("Chromium launched with --no-sandbox while the sandbox is required")
	}
	if !strings.Contains(err.Error(), "refusing --no-sandbox") {
		t.Errorf("error %v does not say the launcher refused", err)
	}
}

func TestMissingBrowserUserIsSetupError(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only a root worker switches users")
	}
	needBrowser(t)
	src := DefaultConfig().local()
	src.User = "signoff-no-such-user"
	_, err := src.Open(context.Background(), testDriver.Playwright())
	if !IsSetupError(err) || !strings.Contains(err.Error(), "signoff-no-such-user") {
		t.Fatalf("open as a missing user: %v, want a SetupError naming the user", err)
	}
}

// Evidence records how the browser was confined, and the schema accepts it.
func TestEvidenceRecordsSandbox(t *testing.T) {
	v := testVerifier(t)
	srv := site(t, testSHA, map[string]string{"/": page("", "<p>hi</p>")}, nil)
	ev := verify(t, v, request(t, srv.URL, crit("loads", "/", contracts.Assertion{Kind: contracts.KindLoads})))
	wantStatus(t, ev, "loads", contracts.StatusPass)
	if ev.Browser.Sandbox != SandboxChromium {
		t.Errorf("evidence browser %+v, want sandbox %q", ev.Browser, SandboxChromium)
	}
	want := []byte(`"sandbox":"` + SandboxChromium + `"`)
	if b, err := json.Marshal(ev.Browser); err != nil || !bytes.Contains(b, want) {
		t.Errorf("evidence browser JSON %s (%v) has no %s", b, err, want)
	}
}
