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
