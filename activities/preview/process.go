package preview

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/signoff/signoff/activities/procstat"
)

// pidRecord is what a pid file holds: enough to recognise the same process
// later (the start time survives exec, a recycled PID gets a new one).
type pidRecord struct {
	PID        int       `json:"pid"`
	StartTicks uint64    `json:"start_ticks"`
	Cmdline    string    `json:"cmdline"`
	Job        string    `json:"job"`
	Step       string    `json:"step"`
	Dir        string    `json:"dir"`
	Started    time.Time `json:"started"`
}

// proc is a process we started in its own process group (pgid == pid).
type proc struct {
	cmd     *exec.Cmd
	pidFile string
	done    chan struct{} // closed once the leader has been reaped
	err     error         // the leader's exit error, valid after done
}

// spawn starts cmd as leader of a new process group, with the credential
// cred (nil: this process's own), and records it in a pid file under
// pidDir so Sweep can find it after a crash.
func spawn(cmd *exec.Cmd, cred *syscall.Credential, pidDir, job, step string) (*proc, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("preview: start %s: %w", step, err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	rec := pidRecord{
		PID:     cmd.Process.Pid,
		Cmdline: strings.Join(cmd.Args, " "),
		Job:     job,
		Step:    step,
		Dir:     cmd.Dir,
		Started: time.Now().UTC(),
	}
	ticks, err := startTicks(rec.PID)
	if err == nil {
		rec.StartTicks = ticks
	}
	p.pidFile = filepath.Join(pidDir, fmt.Sprintf("%s-%s-%d.json", job, step, rec.PID))
	if err := writePidFile(p.pidFile, rec); err != nil {
		procstat.KillGroup(rec.PID, 5*time.Second)
		<-p.done
		return nil, err
	}
	return p, nil
}

// stop ends the whole group (SIGTERM, then SIGKILL after grace) and removes
// the pid file. It is safe to call more than once.
func (p *proc) stop(grace time.Duration) {
	// Even when the leader has exited, children may still hold the group.
	procstat.KillGroup(p.cmd.Process.Pid, grace)
	<-p.done
	os.Remove(p.pidFile)
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
