// Package hostiletest holds what the hostile suites of the executor and the preview share:
// stand-ins for the host's loopback services that count who reached them, a look at the
// host's process table for anything a sandboxed job left running, and a stand-in for a
// sandbox's orphaned pid 1 that their sweeps must kill.
package hostiletest

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signoff/signoff/internal/procstat"
)

// Service listens on 127.0.0.1 as one of the host's services would (the Temporal frontend,
// the Web UI, the chat endpoint, the Stripe double, another preview) and counts the
// connections that reach it.
func Service(t testing.TB) (port int, reached func() int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var hits atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			hits.Add(1)
			c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port, hits.Load
}

// Running lists host processes that still run and whose command line holds mark, as
// "pid cmdline".
func Running(mark string) []string {
	var left []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(cmdline), mark) || !procstat.Alive(pid) {
			continue
		}
		left = append(left, strconv.Itoa(pid)+" "+strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return left
}

// WaitGone waits until no process carrying mark runs, and returns those still running when
// limit passes (which only catches a hang: teardown is the kernel's, after a kill returns).
func WaitGone(mark string, limit time.Duration) []string {
	deadline := time.Now().Add(limit)
	for {
		left := Running(mark)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Reachable makes a folder the sandbox's unprivileged user can traverse (t.TempDir's parents
// are 0700), holding dump, a folder it may write its reports into; both go at cleanup.
func Reachable(t testing.TB, prefix string) (dir, dump string) {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	dump = filepath.Join(dir, "dump")
	if err := os.Mkdir(dump, 0o777); err != nil {
		t.Fatal(err)
	}
	// Past the umask.
	if err := os.Chmod(dump, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir, dump
}

// OrphanedInit starts a process that stands in for a sandbox's pid 1 left running with its
// bwrap gone (what a sweep must kill), and returns it with its start time in clock ticks
// since boot, as a pid record holds it. It is killed at cleanup if still running.
func OrphanedInit(t testing.TB) (*exec.Cmd, uint64) {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	st, err := procstat.Read(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	return cmd, st.StartTicks
}

// WaitKilled fails t unless the stand-in from OrphanedInit ends by a signal. A sweep sends its
// kill before it returns; the one-minute limit only catches a stand-in left running.
func WaitKilled(t testing.TB, cmd *exec.Cmd) {
	t.Helper()
	ended := make(chan error, 1)
	go func() { ended <- cmd.Wait() }()
	select {
	case err := <-ended:
		if err == nil {
			t.Error("the orphaned pid 1's stand-in exited cleanly: the sweep did not kill it")
		}
	case <-time.After(time.Minute):
		t.Error("the orphaned pid 1's stand-in still runs after the sweep")
	}
}
