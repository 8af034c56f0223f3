package multihost_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/signoff/signoff/e2e/signoffproc"
)

// The rig stands in for several machines on one: each "host" is a process in a network
// namespace and a mount namespace of its own, made by unshare(1), wired to the others through
// a bridge that lives in a further namespace of the rig's (the hub). The test's own network is
// never touched. In its mount namespace a host gets a private /tmp and /dev/shm, sees the
// other hosts' folders as empty read-only mounts, and sees the rig's binaries and the
// repository (fixtures, Chromium's driver: the machine image every host starts from)
// read-only: it can write nowhere another host reads.

// rigSubnet is the hosts' network; it exists only inside the rig's namespaces.
const rigSubnet = "10.77.0."

// hostLimit catches a host that hangs while starting or a run that never ends; it is never
// what a passing test waits for.
const hostLimit = 10 * time.Minute

type rig struct {
	t     testing.TB
	repo  string   // the repository as this test names it (it may go through a symlink)
	real  string   // the same folder with every symlink resolved
	root  string   // the rig's folder: one sub-folder per host, bin/ for the binaries, mnt/
	names []string // every host's name, fixed when the rig is made, so each hides the others
	bin   string   // the signoff CLI
	hub   *exec.Cmd
	hubIn io.WriteCloser

	mu        sync.Mutex
	hosts     []*host
	closeOnce sync.Once
}

// host is one process in its namespaces.
type host struct {
	name, ip, dir string
	cmd           *exec.Cmd
	exited        chan struct{}
	ready         chan struct{}
	log           string
	mu            sync.Mutex
	out           strings.Builder
}

// newRig makes the hub and the hosts' folders. The folder is under /var/tmp, not /tmp: every
// host mounts its own /tmp.
func newRig(t testing.TB, names ...string) *rig {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("the multi-host rig makes network and mount namespaces: run the tests as root (the test task does)")
	}
	for _, tool := range []string{"unshare", "nsenter", "ip", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the multi-host rig needs %s: %v", tool, err)
		}
	}
	root, err := os.MkdirTemp("/var/tmp", "signoff-rig-")
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, repo: signoffproc.RepoRoot(), root: root, names: names}
	t.Cleanup(r.close)
	if r.real, err = filepath.EvalSymlinks(r.repo); err != nil {
		t.Fatal(err)
	}
	// Hosts run repository code and Chromium as unprivileged users under their own folders.
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	// mnt is where each host holds the repository while it mounts its private folders.
	for _, n := range append([]string{"bin", "mnt"}, names...) {
		if err := os.Mkdir(filepath.Join(root, n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r.bin = filepath.Join(root, "bin", "signoff")
	build := exec.Command("go", "build", "-o", r.bin, "./cmd/signoff")
	build.Dir = r.repo
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the CLI: %v\n%s", err, out)
	}
	// The hub: a network namespace holding only the bridge (and a mount namespace, so it
	// is told apart from this process as every host is). Its shell waits on stdin, so
	// closing that ends it.
	r.hub = exec.Command("unshare", "--net", "--mount", "--", "/bin/sh", "-c", "read _")
	if r.hubIn, err = r.hub.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := r.hub.Start(); err != nil {
		t.Fatalf("start the hub namespace: %v", err)
	}
	started.Store(r.hub.Process.Pid, true)
	r.inNet(r.hub.Process.Pid, "ip", "link", "add", "br0", "type", "bridge")
	r.inNet(r.hub.Process.Pid, "ip", "link", "set", "br0", "up")
	return r
}

// inNet runs a command in the network namespace of pid, which must be one of the rig's own:
// never the namespace this test runs in, whose network belongs to the machine.
func (r *rig) inNet(pid int, argv ...string) {
	r.t.Helper()
	if err := awaitOwnNamespaces(pid); err != nil {
		r.t.Fatal(err)
	}
	cmd := exec.Command("nsenter", append([]string{"-t", strconv.Itoa(pid), "-n", "--"}, argv...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		r.t.Fatalf("in namespace of %d: %s: %v\n%s", pid, strings.Join(argv, " "), err, out)
	}
}

// hostScript runs first in a host's namespaces: it waits until the network is wired, makes
// the mounts private to the host, and becomes the host's program, in the repository.
//
// The repository may be anywhere, under /tmp too, which the host's own /tmp hides: so it is
// first held on the rig's mnt/ (never hidden), then moved back to its real path, made anew in
// the host's tmpfs if that hid it, and bound read-only there. When the test names it through
// a symlink the host no longer sees (one under /tmp), that path is made and bound too, so every
// path the test hands a host names the same read-only tree. The working directory is entered
// last, so it is the read-only mount and not the folder beneath it.
const hostScript = `set -e
read _
mount --bind "$RIG_REPO_REAL" "$RIG_HOLD"
mount -t tmpfs -o mode=1777 rig-tmp /tmp
mount -t tmpfs -o mode=1777 rig-shm /dev/shm
for d in $RIG_HIDE; do mount -t tmpfs -o ro,mode=0755,size=4k rig-hidden "$d"; done
mount --bind "$RIG_BIN" "$RIG_BIN"
mount -o remount,bind,ro "$RIG_BIN"
mkdir -p "$RIG_REPO_REAL"
mount --move "$RIG_HOLD" "$RIG_REPO_REAL"
mount -o remount,bind,ro "$RIG_REPO_REAL"
if [ "$(cd "$RIG_REPO" 2>/dev/null && pwd -P)" != "$RIG_REPO_REAL" ]; then
	mkdir -p "$RIG_REPO"
	mount --bind "$RIG_REPO_REAL" "$RIG_REPO"
	mount -o remount,bind,ro "$RIG_REPO"
fi
cd "$RIG_REPO"
unset RIG_HIDE RIG_BIN RIG_REPO RIG_REPO_REAL RIG_HOLD OLDPWD
exec "$@"
`

// mountEnv is what hostScript mounts for host name: the others' folders to hide, the rig's
// binaries and the repository (as the test names it and its real path), and where to hold it.
func (r *rig) mountEnv(name string) []string {
	var hide []string
	for _, n := range r.names {
		if n != name {
			hide = append(hide, filepath.Join(r.root, n))
		}
	}
	return []string{"RIG_HIDE=" + strings.Join(hide, " "), "RIG_BIN=" + filepath.Dir(r.bin), "RIG_REPO=" + r.repo,
		"RIG_REPO_REAL=" + r.real, "RIG_HOLD=" + filepath.Join(r.root, "mnt")}
}

// start runs argv as host name at address rigSubnet+octet, with env added to a minimal
// environment, in the repository as working directory. readyLine is the text of the line
// that says the host is up ("" to not wait).
func (r *rig) start(name string, octet int, env []string, readyLine string, argv ...string) *host {
	r.t.Helper()
	h := &host{name: name, ip: rigSubnet + strconv.Itoa(octet), dir: filepath.Join(r.root, name),
		exited: make(chan struct{}), ready: make(chan struct{})}
	tmp := filepath.Join(h.dir, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		r.t.Fatal(err)
	}
	// Like /tmp: previews and the browser make their own folders here, as their own users.
	if err := os.Chmod(tmp, 0o1777); err != nil {
		r.t.Fatal(err)
	}
	h.log = filepath.Join(r.root, name+".log")
	args := append([]string{"--net", "--mount", "--propagation", "private", "--", "/bin/sh", "-c", hostScript, "sh"}, argv...)
	h.cmd = exec.Command("unshare", args...)
	h.cmd.Dir = r.repo
	h.cmd.Env = append(append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + h.dir, "TMPDIR=" + tmp, "LANG=C.UTF-8"},
		r.mountEnv(name)...), env...)
	stdin, err := h.cmd.StdinPipe()
	if err != nil {
		r.t.Fatal(err)
	}
	pr, pw := io.Pipe()
	h.cmd.Stdout, h.cmd.Stderr = pw, pw
	logFile, err := os.Create(h.log)
	if err != nil {
		r.t.Fatal(err)
	}
	if err := h.cmd.Start(); err != nil {
		r.t.Fatalf("start host %s: %v", name, err)
	}
	started.Store(h.cmd.Process.Pid, true)
	r.mu.Lock()
	r.hosts = append(r.hosts, h)
	r.mu.Unlock()
	go func() {
		_ = h.cmd.Wait()
		_ = pw.Close()
		close(h.exited)
	}()
	go func() {
		defer logFile.Close()
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		readySeen := readyLine == ""
		if readySeen {
			close(h.ready)
		}
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logFile, line)
			h.mu.Lock()
			h.out.WriteString(line + "\n")
			h.mu.Unlock()
			if !readySeen && strings.Contains(line, readyLine) {
				readySeen = true
				close(h.ready)
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()

	pid := h.cmd.Process.Pid
	// The veth's far end goes into pid's network namespace: only once it is the host's own.
	if err := awaitOwnNamespaces(pid); err != nil {
		r.t.Fatal(err)
	}
	veth := "v" + name
	if len(veth) > 15 {
		veth = veth[:15]
	}
	r.inNet(r.hub.Process.Pid, "ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", strconv.Itoa(pid))
	r.inNet(r.hub.Process.Pid, "ip", "link", "set", veth, "master", "br0", "up")
	r.inNet(pid, "ip", "addr", "add", h.ip+"/24", "dev", "eth0")
	r.inNet(pid, "ip", "link", "set", "eth0", "up")
	r.inNet(pid, "ip", "link", "set", "lo", "up")
	if _, err := io.WriteString(stdin, "go\n"); err != nil {
		r.t.Fatalf("host %s: %v", name, err)
	}
	_ = stdin.Close()
	if readyLine != "" {
		r.waitReady(h)
	}
	return h
}

// waitReady waits for the host's ready line; the host exiting first fails the test with
// the end of its output.
func (r *rig) waitReady(h *host) {
	r.t.Helper()
	select {
	case <-h.ready:
	case <-h.exited:
		r.t.Fatalf("host %s exited while starting:\n%s", h.name, h.tail(4000))
	case <-time.After(hostLimit):
		r.t.Fatalf("host %s did not come up within %s:\n%s", h.name, hostLimit, h.tail(4000))
	}
}

// wait waits for the host's program to end and returns its exit code.
func (r *rig) wait(h *host) int {
	r.t.Helper()
	select {
	case <-h.exited:
	case <-time.After(hostLimit):
		r.t.Fatalf("host %s still running after %s:\n%s", h.name, hostLimit, h.tail(4000))
	}
	return h.cmd.ProcessState.ExitCode()
}

func (h *host) output() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.out.String()
}

func (h *host) tail(n int) string {
	s := h.output()
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return s
}

// kill ends a host at once (SIGKILL), with every process it started: a crashed machine.
func (r *rig) kill(h *host) {
	r.t.Helper()
	pids := descendants(h.cmd.Process.Pid)
	_ = h.cmd.Process.Kill()
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	<-h.exited
	reapOrphans()
}

// stop ends a host as an operator would (SIGTERM), then whatever it left (SIGKILL).
func (r *rig) stop(h *host) {
	select {
	case <-h.exited:
	default:
		_ = h.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-h.exited:
		case <-time.After(30 * time.Second):
			_ = h.cmd.Process.Kill()
			<-h.exited
		}
	}
}

// close stops every host and removes the rig (kept when the test failed); once only, so a
// benchmark can end one rig before it makes the next.
func (r *rig) close() { r.closeOnce.Do(r.shutdown) }

func (r *rig) shutdown() {
	r.mu.Lock()
	hosts := r.hosts
	r.mu.Unlock()
	for i := len(hosts) - 1; i >= 0; i-- {
		r.stop(hosts[i])
	}
	// Whatever a host left running was reparented to this process (a child subreaper, see
	// TestMain): end it by PID, and say so, since a worker must not leave processes behind.
	if left := reapOrphans(); len(left) > 0 {
		r.t.Errorf("processes outlived their host: %v", left)
	}
	if r.hub != nil && r.hub.Process != nil {
		_ = r.hubIn.Close()
		_ = r.hub.Wait()
	}
	if r.t.Failed() {
		r.t.Logf("rig kept for inspection: %s", r.root)
		for _, h := range hosts {
			r.t.Logf("--- %s (%s) ---\n%s", h.name, h.ip, h.tail(3000))
		}
		return
	}
	_ = os.RemoveAll(r.root)
}

// descendants lists the processes below pid, read from /proc.
func descendants(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp, _, ok := statOf(p); ok {
			children[pp] = append(children[pp], p)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// statOf reads a process's parent and state from /proc/<pid>/stat.
func statOf(pid int) (ppid int, state string, ok bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, "", false
	}
	// The command name may hold spaces and parentheses; the fields after its last ")" don't.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, "", false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, "", false
	}
	pp, err := strconv.Atoi(f[1])
	return pp, f[0], err == nil
}

// reapOrphans reaps the processes reparented to this one (a subreaper) that it did not start
// through exec.Cmd. Dead ones (zombies: init would have reaped them on a real machine) are
// only reaped. Live ones get orphanGrace to end on their own, as a process whose parent just
// died does; those still running then are killed and returned, with their names.
func reapOrphans() []string {
	var left []string
	deadline := time.Now().Add(orphanGrace)
	for {
		live := orphans()
		if len(live) == 0 {
			return left
		}
		if time.Now().After(deadline) {
			for _, p := range live {
				comm, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/comm")
				left = append(left, fmt.Sprintf("%d (%s)", p, strings.TrimSpace(string(comm))))
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
			orphans() // reap what the kill made zombies
			return left
		}
		time.Sleep(100 * time.Millisecond) // polling /proc for processes that are exiting
	}
}

// orphanGrace is how long a process whose host ended may take to exit by itself.
const orphanGrace = 30 * time.Second

// orphans reaps the zombies among this process's unknown children and lists the live ones.
func orphans() []int {
	var live []int
	me := os.Getpid()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		pp, state, ok := statOf(p)
		if !ok || pp != me || startedHere(p) {
			continue
		}
		if state == "Z" {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(p, &ws, syscall.WNOHANG, nil)
			continue
		}
		live = append(live, p)
	}
	return live
}

// started holds the PIDs exec.Cmd started (hosts, the hub, tools), which their own Wait reaps.
var started sync.Map

func startedHere(pid int) bool {
	_, ok := started.Load(pid)
	return ok
}

// subreaper makes this process the one orphans of its hosts are reparented to, so the rig can
// find and end them; PR_SET_CHILD_SUBREAPER is 36.
func subreaper() error {
	runtime.LockOSThread() // prctl is per process here, but keep the call on one thread anyway
	defer runtime.UnlockOSThread()
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, 36, 1, 0); errno != 0 {
		return errno
	}
	return nil
}

// awaitOwnNamespaces waits until pid runs in network and mount namespaces other than this
// process's: unshare(1) is started before it makes them, so for a moment its PID still
// stands in the test's own.
func awaitOwnNamespaces(pid int) error {
	deadline := time.Now().Add(time.Minute) // catches a hang only
	for {
		other := true
		for _, ns := range []string{"net", "mnt"} {
			mine, err1 := os.Readlink("/proc/self/ns/" + ns)
			theirs, err2 := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/" + ns)
			if err1 != nil || err2 != nil {
				return fmt.Errorf("namespaces of %d: %v %v", pid, err1, err2)
			}
			other = other && mine != theirs
		}
		if other {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("process %d never left this test's namespaces", pid)
		}
		time.Sleep(10 * time.Millisecond) // polling /proc while unshare(1) makes the namespaces
	}
}

// awaitFile waits for path to exist; it returns its content. A host exiting first is an error.
func awaitFile(ctx context.Context, path string, h *host) ([]byte, error) {
	tick := time.NewTicker(100 * time.Millisecond) // polling a file another process writes
	defer tick.Stop()
	for {
		if data, err := os.ReadFile(path); err == nil {
			return data, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%s never appeared: %w", path, ctx.Err())
		case <-h.exited:
			return nil, errors.New("host " + h.name + " exited before writing " + path)
		case <-tick.C:
		}
	}
}
