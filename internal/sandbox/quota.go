package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Disk quota: no filesystem quota is assumed (the data dir's filesystem rarely has project
// quotas, and a loop-mounted image would break the hardlinks previews take from shared
// dependencies), so the sandbox measures its Writable folders while the command runs and
// kills it once they hold more than Limits.Disk bytes or Limits.Files inodes.
const (
	DefaultDisk  int64 = 8 << 30
	DefaultFiles       = 400_000

	// quotaFloor is the shortest pause between two measurements; quotaShare makes the pause
	// at least that many times the last measurement, so measuring takes at most about 1/20
	// of a core however big the folders grow.
	quotaFloor = 2 * time.Second
	quotaShare = 20
	// quotaFirst is the pause before the first measurement: a job that fills its folders at
	// once is caught early, and measuring a folder that holds little is cheap.
	quotaFirst = 250 * time.Millisecond
)

// ErrDiskLimit is the cause of a kill by Limits.Disk or Limits.Files.
var ErrDiskLimit = errors.New("sandbox: disk limit reached")

// usage is what a set of folders holds: blocks in use (each inode once, so hardlinks to shared
// dependencies count once) and inodes.
type usage struct {
	bytes int64
	files int
}

// measure walks dirs without following links or crossing into other mounts, and stops as
// soon as the usage is over either bound.
func measure(dirs []string, maxBytes int64, maxFiles int) (usage, error) {
	var u usage
	seen := map[[2]uint64]bool{}
	errOver := errors.New("over")
	for _, root := range dirs {
		rootInfo, err := os.Lstat(root)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return u, err
		}
		rootDev := rootInfo.Sys().(*syscall.Stat_t).Dev
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if vanished(err) {
					return nil
				}
				return err
			}
			fi, err := d.Info()
			if err != nil {
				if vanished(err) {
					return nil
				}
				return err
			}
			st := fi.Sys().(*syscall.Stat_t)
			if d.IsDir() && st.Dev != rootDev {
				return fs.SkipDir // another mount (a ReadOnly bind's host side is not under it)
			}
			key := [2]uint64{uint64(st.Dev), st.Ino}
			if seen[key] {
				return nil
			}
			seen[key] = true
			u.files++
			u.bytes += st.Blocks * 512
			if u.bytes > maxBytes || u.files > maxFiles {
				return errOver
			}
			return nil
		})
		if errors.Is(err, errOver) {
			return u, nil
		}
		if err != nil {
			return u, err
		}
	}
	return u, nil
}

// vanished is an error of a walk that raced the command: an entry removed, or a folder
// replaced by a file or a link (as package managers do), since it was listed. It is not usage.
func vanished(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// watchDisk measures dirs until stop closes, and calls over (once) with why the sandbox must
// end: a bound crossed, or folders that cannot be measured. The second fails closed: folders
// nested past PATH_MAX (or, for a worker that is not root, made unreadable) would otherwise
// hide whatever they hold from every later measurement.
func watchDisk(dirs []string, l Limits, stop <-chan struct{}, over func(error)) {
	pause := quotaFirst
	for {
		select {
		case <-stop:
			return
		case <-time.After(pause):
		}
		start := time.Now()
		u, err := measure(dirs, l.Disk, l.Files)
		if err != nil {
			over(fmt.Errorf("%w: its folders could not be measured: %v", ErrDiskLimit, shortPathError(err)))
			return
		}
		if u.bytes > l.Disk || u.files > l.Files {
			over(diskError(u, l))
			return
		}
		pause = max(quotaFloor, quotaShare*time.Since(start))
	}
}

// diskError says which bound a kill by the disk quota crossed.
func diskError(u usage, l Limits) error {
	if u.files > l.Files {
		return fmt.Errorf("%w: its folders held more than %d files", ErrDiskLimit, l.Files)
	}
	return fmt.Errorf("%w: its folders held more than %d MiB", ErrDiskLimit, l.Disk>>20)
}

// shortPathError keeps the start of a path in a measuring error: a path nested past PATH_MAX
// would otherwise put kilobytes of it into a step's cause.
func shortPathError(err error) error {
	var pe *fs.PathError
	if !errors.As(err, &pe) || len(pe.Path) <= 120 {
		return err
	}
	return fmt.Errorf("%s %s… (%d characters): %w", pe.Op, pe.Path[:120], len(pe.Path), pe.Err)
}
