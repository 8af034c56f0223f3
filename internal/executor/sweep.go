//go:build unix

package executor

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/signoff/signoff/internal/procstat"
)

const cliPidFile = "cli.pid"

// cliPid lets a restarted worker find a CLI a crashed one left running.
type cliPid struct {
	PID        int    `json:"pid"`
	StartTicks uint64 `json:"start_ticks"`
}

func writeCLIPid(job string, pid int) error {
	rec := cliPid{PID: pid}
	if st, err := procstat.Read(pid); err == nil {
		rec.StartTicks = st.StartTicks
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(job, cliPidFile), data, 0o600)
}

// Sweep ends what a crashed worker left: the process group of every CLI recorded in a job
// directory (by its recorded PID, checked against the process start time, never by name),
// then the job directories themselves. Call it when the worker starts, before any Run.
func (c *Command) Sweep() error {
	entries, err := os.ReadDir(c.JobsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	grace := c.KillGrace
	if grace <= 0 {
		grace = DefaultKillGrace
	}
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "cmd-") {
			continue
		}
		job := filepath.Join(c.JobsDir, e.Name())
		if data, err := os.ReadFile(filepath.Join(job, cliPidFile)); err == nil {
			var rec cliPid
			if json.Unmarshal(data, &rec) == nil && rec.PID > 1 {
				st, err := procstat.Read(rec.PID)
				leaderIsOurs := err == nil && st.StartTicks == rec.StartTicks
				leaderGone := err != nil
				if leaderIsOurs || leaderGone {
					procstat.KillGroup(rec.PID, grace)
				}
			}
		}
		if err := os.RemoveAll(job); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
