package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// workerEnv carries a Spec, as JSON, to a copy of this test binary that plays a worker: it
// starts the sandbox, says so, and waits to be killed.
const workerEnv = "SANDBOX_WORKER_SPEC"

// runWorker is TestMain's branch for that worker. It stops bwrap's child just before its
// release, so that the moment the child has no owner but its cgroup lasts until the test
// lets it go on.
func runWorker(spec string) int {
	var s Spec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		fmt.Println("worker:", err)
		return 1
	}
	r, err := New(Config{})
	if err != nil {
		fmt.Println("worker:", err)
		return 1
	}
	holdRelease = func(child int) {
		_ = syscall.Kill(child, syscall.SIGSTOP)
		fmt.Printf("child %d\n", child)
	}
	s.Stdout, s.Stderr = os.Stderr, os.Stderr
	if _, err := r.Start(context.Background(), s); err != nil {
		fmt.Println("worker:", err)
		return 1
	}
	fmt.Println("started")
	select {}
}

// A worker killed outright at the worst moment, its sandbox's pid 1 set up but not yet
// bound to bwrap's life, leaves nothing running: the sandbox's cgroup is emptied when the
// worker dies. Before the reaper, pid 1 went on to run the command with no owner.
func TestSandboxDiesWithItsWorker(t *testing.T) {
	if r := newRunner(t); r.cg == nil {
		t.Skipf("no cgroups here (%v): a sandbox's life then rests on bwrap's --die-with-parent alone", r.cgErr)
	}
	s := probeSpec(t, "daemon")
	s.Argv = []string{"/usr/bin/sleep", "1000"}
	tok := envValue(s.Env, "SANDBOX_TOKEN")
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	worker := exec.Command(testBin)
	worker.Env = append(os.Environ(), workerEnv+"="+string(b))
	out, err := worker.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	worker.Stderr = os.Stderr
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = worker.Process.Kill(); _ = worker.Wait() })
	lines := bufio.NewScanner(out)
	next := func() string {
		if !lines.Scan() {
			t.Fatalf("the worker ended: %v", lines.Err())
		}
		return lines.Text()
	}
	f, ok := strings.CutPrefix(next(), "child ")
	if !ok {
		t.Fatalf("the worker did not start a sandbox: %q", f)
	}
	child, err := strconv.Atoi(f)
	if err != nil {
		t.Fatal(err)
	}
	// The child is stopped, so its pid is still its own: a pidfd holds on to it.
	fd, err := unix.PidfdOpen(child, 0)
	if err != nil {
		t.Fatalf("pidfd of the sandbox's pid 1: %v", err)
	}
	t.Cleanup(func() { _ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0); unix.Close(fd) })
	if l := next(); l != "started" {
		t.Fatalf("the worker's Start: %q", l)
	}

	_ = worker.Process.Signal(syscall.SIGKILL)
	_ = worker.Wait()
	// Let pid 1 go on, as the scheduler might have: bwrap, its parent, is gone.
	if err := unix.PidfdSendSignal(fd, unix.SIGCONT, nil, 0); err != nil && !errors.Is(err, unix.ESRCH) {
		t.Fatal(err)
	}
	// The deadline only catches the failure, which is pid 1 living on.
	ended := make(chan error, 1)
	go func() { ended <- waitPidfd(fd) }()
	select {
	case err := <-ended:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatalf("the sandbox's pid 1 outlived the worker that started it: still running after %v (its command: %v)", time.Minute, hostPidsWith(t, tok))
	}
	if left := hostPidsWith(t, tok); len(left) > 0 {
		t.Fatalf("processes %v of the sandbox outlived the worker", left)
	}
}
