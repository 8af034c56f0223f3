//go:build unix

// Package unprivileged resolves the user that repository code and coding CLIs run as
// (signoff-preview), and tells whether that user can reach a path. Running them as a user
// without the worker's rights keeps the data dir's keys, payment state and remotes out of
// their reach even when they read by absolute path.
package unprivileged

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// Lookup resolves name to a credential with no supplementary groups. It refuses root, and
// a switch this process cannot make (only root may change to another user).
func Lookup(name string) (*syscall.Credential, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, err
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %s: uid %q: %w", name, u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %s: gid %q: %w", name, u.Gid, err)
	}
	if uid == 0 {
		return nil, fmt.Errorf("%s is root", name)
	}
	if euid := os.Geteuid(); euid != 0 && uint64(euid) != uid {
		return nil, fmt.Errorf("switching to %s needs root", name)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}

// Traversable reports whether c can reach path: search permission on it (if a directory)
// and on every parent, by mode bits (ACLs are not considered).
func Traversable(path string, c *syscall.Credential) bool {
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil || (fi.IsDir() && !permits(fi, c, 1)) {
			return false
		}
		if p == filepath.Dir(p) {
			return true
		}
	}
}

// Readable reports whether c could read path by its mode bits.
func Readable(path string, c *syscall.Credential) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	return Traversable(filepath.Dir(path), c) && permits(fi, c, 4)
}

func permits(fi os.FileInfo, c *syscall.Credential, bit os.FileMode) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return true // unknown: assume the worst
	}
	perm := fi.Mode().Perm()
	switch {
	case st.Uid == c.Uid:
		return perm&(bit<<6) != 0
	case st.Gid == c.Gid:
		return perm&(bit<<3) != 0
	default:
		return perm&bit != 0
	}
}
