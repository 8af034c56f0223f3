// Package procstat reads a process's state, process group and start time from
// /proc/<pid>/stat. Signoff stops only processes it started, by PID, and checks the start
// time first so a recycled PID is never killed.
package procstat

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Stat is what Signoff needs of /proc/<pid>/stat.
type Stat struct {
	State      string // R, S, D, Z, X, ...
	Pgrp       int
	StartTicks uint64 // start time in clock ticks since boot
}

// Read parses /proc/<pid>/stat. The command name (field 2) may hold spaces and parentheses,
// so fields are counted after its last ')'.
func Read(pid int) (Stat, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Stat{}, err
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return Stat{}, errors.New("procstat: malformed stat")
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); field n is f[n-3].
	if len(f) < 20 {
		return Stat{}, errors.New("procstat: short stat")
	}
	pgrp, err := strconv.Atoi(f[2])
	if err != nil {
		return Stat{}, fmt.Errorf("procstat: pgrp: %w", err)
	}
	ticks, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return Stat{}, fmt.Errorf("procstat: starttime: %w", err)
	}
	return Stat{State: f[0], Pgrp: pgrp, StartTicks: ticks}, nil
}

// Alive reports whether pid runs and is not a zombie.
func Alive(pid int) bool {
	st, err := Read(pid)
	return err == nil && st.State != "Z" && st.State != "X"
}

// KillSame sends SIGKILL to pid if it is still the process that started at startTicks and
// runs (a recycled PID, or one whose start time was never learnt, is left alone), and reports
// whether it did.
func KillSame(pid int, startTicks uint64) bool {
	if pid <= 1 || startTicks == 0 {
		return false
	}
	st, err := Read(pid)
	if err != nil || st.State == "Z" || st.State == "X" || st.StartTicks != startTicks {
		return false
	}
	return syscall.Kill(pid, syscall.SIGKILL) == nil
}

// GroupAlive reports whether any non-zombie process is in group pgid. Zombies count as gone:
// they run nothing, and in a container whose init does not reap, orphans may stay zombies.
func GroupAlive(pgid int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return syscall.Kill(-pgid, 0) == nil // without /proc; this also counts zombies
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := Read(pid); err == nil && st.Pgrp == pgid && st.State != "Z" && st.State != "X" {
			return true
		}
	}
	return false
}

// KillGroup sends SIGTERM to process group pgid, waits up to grace for every live member to
// go, then sends SIGKILL and waits again (up to 5 s).
func KillGroup(pgid int, grace time.Duration) {
	if pgid <= 1 {
		return // never signal "all processes" or init
	}
	if !GroupAlive(pgid) {
		return
	}
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	if waitGroupGone(pgid, grace) {
		return
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	waitGroupGone(pgid, 5*time.Second)
}

func waitGroupGone(pgid int, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for GroupAlive(pgid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond) // polling the process table
	}
	return true
}
