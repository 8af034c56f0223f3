//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package embedded

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// dirLock is an exclusive flock on <db>.lock. The kernel drops it when the
// process dies, so a crash never leaves a stale lock behind.
type dirLock struct{ f *os.File }

func lockDataDir(path string) (*dirLock, error) {
	// Go opens files close-on-exec, so child processes (coding CLIs, browsers)
	// never inherit the lock.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("temporal: open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder := ""
			if b, rerr := os.ReadFile(path); rerr == nil {
				if pid, perr := strconv.Atoi(string(bytes.TrimSpace(b))); perr == nil {
					holder = fmt.Sprintf(" (held by pid %d)", pid)
				}
			}
			return nil, fmt.Errorf("%w: %s%s; stop it or use another data dir", ErrDataDirLocked, path, holder)
		}
		return nil, fmt.Errorf("temporal: lock %s: %w", path, err)
	}
	// The pid is only a hint for the error message above; the flock is the lock.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &dirLock{f: f}, nil
}

func (l *dirLock) release() error {
	if l == nil || l.f == nil {
		return nil
	}
	// Closing the descriptor drops the flock.
	err := l.f.Close()
	l.f = nil
	return err
}
