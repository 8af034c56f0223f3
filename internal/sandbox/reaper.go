package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// A worker killed outright (SIGKILL, the OOM killer) takes bwrap with it (Pdeathsig), and
// bwrap's pid 1 dies with bwrap (--die-with-parent), but only once pid 1 has got that far:
// bwrap asks for it after the block fd is released, as pid 1's last step of setup. A worker
// killed in between left pid 1 and the command running with no owner, its wall limit gone
// with the worker: a build that ran to the end beside the restarted worker's own, in the
// same folder. The reaper closes that gap. It is a shell started before bwrap, with its
// stdin the read end of a pipe only the worker holds; whenever the worker's end closes
// (teardown, or the worker's death), it kills whatever is in the sandbox's cgroup, which
// pid 1 joins before it is released.

// reaperScript waits for end of file on stdin, then empties the cgroup directories it is
// given: by cgroup.kill where the kernel has it (v2), else by SIGKILL to every member until
// none is left (v1; pids.max bounds how many a fork loop can make).
const reaperScript = `while read -r _; do :; done
for d do
	if [ -e "$d/cgroup.kill" ]; then echo 1 > "$d/cgroup.kill"; continue; fi
	n=0
	while [ $n -lt 1000 ]; do
		pids=$(cat "$d/cgroup.procs") || break
		[ -z "$pids" ] && break
		kill -9 $pids
		n=$((n+1))
	done
done`

// reaper is a started reaper: closing life sets it off.
type reaper struct {
	cmd  *exec.Cmd
	life *os.File
}

// startReaper starts the reaper of a sandbox's cgroup, before anything is put in it.
func startReaper(dirs []string) (*reaper, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: reaper pipe: %w", err)
	}
	defer r.Close()
	cmd := exec.Command("/bin/sh", append([]string{"-c", reaperScript, "signoff-sandbox-reaper"}, dirs...)...)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.Dir = "/"
	cmd.Stdin = r
	// Its own process group: a signal to the worker's group (Ctrl-C) must not set it off
	// before the worker has had its say.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, fmt.Errorf("sandbox: starting the reaper: %w", err)
	}
	return &reaper{cmd: cmd, life: w}, nil
}

// stop sets the reaper off and waits for it: whatever is still in the cgroup is killed.
func (r *reaper) stop() {
	r.life.Close()
	_ = r.cmd.Wait()
}
