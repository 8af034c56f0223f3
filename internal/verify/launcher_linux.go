//go:build linux

package verify

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

// init becomes the browser launcher when launcherEnv is set, before anything else of the
// program runs. It never returns then.
func init() {
	v, ok := os.LookupEnv(launcherEnv)
	if !ok {
		return
	}
	if v == usernsProbeValue {
		os.Exit(0)
	}
	err := launch(v, os.Args[1:])
	fmt.Fprintf(os.Stderr, "signoff browser launcher: %v\n", err)
	os.Exit(1)
}

// prSetNoNewPrivs is PR_SET_NO_NEW_PRIVS from linux/prctl.h.
const prSetNoNewPrivs = 38

// launch execs Chromium as the spec says, or runs the sandbox probe. It returns only on error.
func launch(rawSpec string, args []string) error {
	var spec launchSpec
	if err := json.Unmarshal([]byte(rawSpec), &spec); err != nil {
		return fmt.Errorf("spec: %w", err)
	}
	var home string
	if !spec.Probe {
		if spec.Chromium == "" {
			return errors.New("spec names no Chromium")
		}
		if a := sandboxOffSwitch(args); spec.Sandbox && a != "" {
			return fmt.Errorf("refusing %s: the sandbox is required", a)
		}
		dir, err := userDataDir(args)
		if err != nil {
			return err
		}
		home = dir
	}
	// no_new_privs and the credentials are per thread until exec: stay on this one.
	runtime.LockOSThread()
	if spec.Switch {
		if home != "" {
			if err := giveDir(home, spec.UID, spec.GID); err != nil {
				return err
			}
		}
		if err := dropTo(spec.UID, spec.GID); err != nil {
			return err
		}
	}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0); errno != 0 {
		return fmt.Errorf("set no_new_privs: %w", errno)
	}
	if spec.Probe {
		return probeNamespaces()
	}
	argv := append([]string{spec.Chromium}, mergeFeatures(args)...)
	if err := syscall.Exec(spec.Chromium, argv, browserEnv(home)); err != nil {
		return fmt.Errorf("exec %s: %w", spec.Chromium, err)
	}
	return nil
}

// giveDir hands the profile directory Playwright just created (empty, 0700, owned by this
// process's user) to the browser user. It is opened without following links, and refused if
// it is anything else, so the chown cannot be pointed elsewhere.
func giveDir(dir string, uid, gid uint32) error {
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open profile directory %s: %w", dir, err)
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return fmt.Errorf("stat profile directory %s: %w", dir, err)
	}
	if st.Uid != uint32(os.Geteuid()) || st.Mode&0o077 != 0 {
		return fmt.Errorf("profile directory %s is not private to this user (uid %d, mode %o)", dir, st.Uid, st.Mode&0o777)
	}
	if err := syscall.Fchown(fd, int(uid), int(gid)); err != nil {
		return fmt.Errorf("give profile directory %s to uid %d: %w", dir, uid, err)
	}
	return nil
}

// dropTo becomes uid/gid for good: no supplementary groups, real, effective and saved ids all
// changed (which also clears every capability), and checked afterwards.
func dropTo(uid, gid uint32) error {
	if uid == 0 || gid == 0 {
		return errors.New("refusing to run the browser as root")
	}
	if err := syscall.Setgroups([]int{}); err != nil {
		return fmt.Errorf("clear groups: %w", err)
	}
	if err := syscall.Setresgid(int(gid), int(gid), int(gid)); err != nil {
		return fmt.Errorf("set gid %d: %w", gid, err)
	}
	if err := syscall.Setresuid(int(uid), int(uid), int(uid)); err != nil {
		return fmt.Errorf("set uid %d: %w", uid, err)
	}
	if os.Getuid() != int(uid) || os.Geteuid() != int(uid) || os.Getgid() != int(gid) || os.Getegid() != int(gid) {
		return fmt.Errorf("still uid %d gid %d after switching to %d:%d", os.Geteuid(), os.Getegid(), uid, gid)
	}
	if err := syscall.Setuid(0); err == nil {
		return errors.New("could regain root after switching users")
	}
	return nil
}

// probeNamespaces starts this executable in new user, PID and network namespaces, the ones
// Chromium's namespace sandbox creates for its renderers; it exits at once (usernsProbeValue).
func probeNamespaces() error {
	cmd := exec.Command("/proc/self/exe")
	cmd.Env = []string{launcherEnv + "=" + usernsProbeValue}
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("this user cannot create the namespaces Chromium's sandbox needs: %w %s", err, out)
	}
	os.Exit(0)
	return nil
}
