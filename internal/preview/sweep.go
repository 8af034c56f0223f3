package preview

import (
	"github.com/signoff/signoff/internal/procstat"

	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// SweepReport says what Sweep cleaned up.
type SweepReport struct {
	Killed      []int    // leaders whose process group was killed
	KilledInits []int    // sandboxes' pid 1s that were still running: killed, and their sandbox with them
	Gone        []int    // recorded PIDs that had already exited
	Mismatched  []int    // PIDs now used by a different process: left alone
	RemovedDirs []string // fresh-job directories deleted
}

// Sweep cleans up after a crashed worker: it kills every process group
// recorded in a pid file under jobsRoot whose leader is still the same
// process (same start time), and every sandbox pid 1 recorded with it that
// still runs (same test), and deletes the per-job directories. Slots are
// kept, since their build cache is what makes them fast. Call it when a
// worker starts, before it prepares anything: it treats everything it finds
// as stale.
func Sweep(jobsRoot string) (SweepReport, error) {
	var rep SweepReport
	if !filepath.IsAbs(jobsRoot) {
		return rep, &InputError{Field: "jobs root", Reason: "must be an absolute path"}
	}
	pidDir := filepath.Join(jobsRoot, pidsDir)
	entries, err := os.ReadDir(pidDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return rep, fmt.Errorf("preview: sweep: %w", err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		path := filepath.Join(pidDir, e.Name())
		data, err := os.ReadFile(path)
		if err != nil {
			return rep, fmt.Errorf("preview: sweep: %w", err)
		}
		var rec pidRecord
		if err := json.Unmarshal(data, &rec); err != nil || rec.PID <= 1 {
			os.Remove(path) // unreadable record: nothing safe to kill
			continue
		}
		st, err := readStat(rec.PID)
		switch {
		case err != nil || st.State == "Z":
			rep.Gone = append(rep.Gone, rec.PID)
		case rec.StartTicks == 0 || st.StartTicks != rec.StartTicks || st.Pgrp != rec.PID:
			// The PID was recycled (or we never learnt the start time):
			// this is not our process.
			rep.Mismatched = append(rep.Mismatched, rec.PID)
		default:
			procstat.KillGroup(rec.PID, 2*time.Second)
			rep.Killed = append(rep.Killed, rec.PID)
		}
		// A sandbox's pid 1 dies with bwrap once it has bound its life to it; one that had
		// not when the worker died runs on without bwrap. Killing pid 1 ends its sandbox.
		if procstat.KillSame(rec.Init, rec.InitStartTicks) {
			rep.KilledInits = append(rep.KilledInits, rec.Init)
		}
		os.Remove(path)
	}
	// The databases of jobs that are gone: their servers were killed above.
	if err := os.RemoveAll(filepath.Join(jobsRoot, pgDir)); err != nil {
		return rep, fmt.Errorf("preview: sweep: %w", err)
	}
	jobs, err := os.ReadDir(filepath.Join(jobsRoot, jobsDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return rep, fmt.Errorf("preview: sweep: %w", err)
	}
	for _, e := range jobs {
		dir := filepath.Join(jobsRoot, jobsDir, e.Name())
		if err := os.RemoveAll(dir); err != nil {
			return rep, fmt.Errorf("preview: sweep: remove %s: %w", dir, err)
		}
		rep.RemovedDirs = append(rep.RemovedDirs, dir)
	}
	return rep, nil
}
