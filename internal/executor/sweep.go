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
	"github.com/signoff/signoff/internal/sandbox"
)

const cliPidFile = "cli.pid"

// cliPid lets a restarted worker find a CLI a crashed one left running: its bwrap, and the
// sandbox's pid 1, which outlives bwrap when the worker died before pid 1 bound its life to
// bwrap's and no reaper empties its cgroup (a worker without cgroups).
type cliPid struct {
	PID            int    `json:"pid"`
	StartTicks     uint64 `json:"start_ticks"`
	Init           int    `json:"init,omitempty"`
	InitStartTicks uint64 `json:"init_start_ticks,omitempty"`
}

func writeCLIPid(job string, proc *sandbox.Process) error {
	rec := cliPid{PID: proc.Pid(), Init: proc.InitPid()}
	if st, err := procstat.Read(rec.PID); err == nil {
		rec.StartTicks = st.StartTicks
	}
	if rec.Init > 1 {
		if st, err := procstat.Read(rec.Init); err == nil {
			rec.InitStartTicks = st.StartTicks
		}
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(job, cliPidFile), data, 0o600)
}

// Sweep ends what a crashed worker left: the process group of every CLI recorded in a job
// directory and its sandbox's pid 1 (each by its recorded PID, checked against the process
// start time, never by name), then the job directories themselves. Call it when the worker
// starts, before any Run.
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
				// Killing pid 1 ends its sandbox, whatever ran inside.
				procstat.KillSame(rec.Init, rec.InitStartTicks)
			}
		}
		if err := os.RemoveAll(job); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
