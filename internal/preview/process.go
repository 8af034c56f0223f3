package preview

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/signoff/signoff/internal/procstat"
	"github.com/signoff/signoff/internal/sandbox"
)

// pidRecord is what a pid file holds: enough to recognise the same process
// later (the start time survives exec, a recycled PID gets a new one).
type pidRecord struct {
	PID        int    `json:"pid"`
	StartTicks uint64 `json:"start_ticks"`
	// Init is the sandbox's pid 1, which can outlive bwrap (sandbox.Process.InitPid).
	Init           int       `json:"init,omitempty"`
	InitStartTicks uint64    `json:"init_start_ticks,omitempty"`
	Cmdline        string    `json:"cmdline"`
	Job            string    `json:"job"`
	Step           string    `json:"step"`
	Dir            string    `json:"dir"`
	Started        time.Time `json:"started"`
}

// proc is repository code we started, in a sandbox of its own; the sandbox's bwrap process
// leads its own process group, which is what the pid file records.
type proc struct {
	sp      *sandbox.Process
	pidFile string
	done    chan struct{} // closed once the sandbox has been reaped
	err     error         // the command's exit error, valid after done
	unhook  func()        // closes the port forward, if any
}

// spawn starts spec in a sandbox and records its bwrap process in a pid file under pidDir,
// so Sweep can find it after a crash. The process lives until stop, whatever ctx a caller
// holds: steps and the app bound it themselves.
func spawn(sb *sandbox.Runner, spec sandbox.Spec, pidDir, job, step string) (*proc, error) {
	sp, err := sb.Start(context.Background(), spec)
	if err != nil {
		return nil, fmt.Errorf("preview: start %s: %w", step, err)
	}
	p := &proc{sp: sp, done: make(chan struct{}), unhook: func() {}}
	go func() {
		p.err = sp.Wait()
		close(p.done)
	}()
	rec := pidRecord{
		PID:     sp.Pid(),
		Cmdline: strings.Join(spec.Argv, " "),
		Job:     job,
		Step:    step,
		Dir:     spec.Dir,
		Started: time.Now().UTC(),
	}
	if ticks, err := startTicks(rec.PID); err == nil {
		rec.StartTicks = ticks
	}
	if rec.Init = sp.InitPid(); rec.Init > 1 {
		if ticks, err := startTicks(rec.Init); err == nil {
			rec.InitStartTicks = ticks
		}
	}
	p.pidFile = filepath.Join(pidDir, fmt.Sprintf("%s-%s-%d.json", job, step, rec.PID))
	if err := writePidFile(p.pidFile, rec); err != nil {
		sp.Kill()
		<-p.done
		return nil, err
	}
	return p, nil
}

// stop ends the sandbox and everything in it, closes the forward and removes the pid file.
// It is safe to call more than once.
func (p *proc) stop() {
	p.sp.Kill()
	<-p.done
	p.unhook()
	os.Remove(p.pidFile)
}

// exitCode is the command's exit status once it has ended, else -1.
func (p *proc) exitCode() int {
	if !p.exited() {
		return -1
	}
	return p.sp.ExitCode()
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func writePidFile(path string, rec pidRecord) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("preview: encode pid file: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("preview: write pid file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("preview: write pid file: %w", err)
	}
	return nil
}

// processAlive reports whether pid runs (and is not a zombie).
func processAlive(pid int) bool { return procstat.Alive(pid) }

func readStat(pid int) (procstat.Stat, error) { return procstat.Read(pid) }

func startTicks(pid int) (uint64, error) {
	st, err := readStat(pid)
	if err != nil {
		return 0, err
	}
	return st.StartTicks, nil
}
