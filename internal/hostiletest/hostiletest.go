// Package hostiletest holds what the hostile suites of the executor and the preview share:
// stand-ins for the host's loopback services that count who reached them, and a look at the
// host's process table for anything a sandboxed job left running.
package hostiletest

import (
	"net"
	"os"
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
