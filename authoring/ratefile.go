package authoring

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"
	"unicode/utf8"
)

// rateFileVersion is the only layout FileRates reads and writes.
const rateFileVersion = 1

// FileRates is a RateStore kept in a JSON file, so that processes started one per request
// (signoff contract new) share one window. Every Take holds an exclusive flock on the sibling
// file Path+".lock" while it reads, changes and rewrites Path, so two processes cannot both
// take the last slot; the lock is on a sibling because the data file is replaced by rename on
// every write. Files are private to the user (0600, parent directory created 0700).
//
// All users of one file must use the same window: a Take prunes every stamp outside its own
// window.
type FileRates struct {
	Path string
}

// rateFile is the on-disk layout: requester -> request times, oldest first. Requesters are
// JSON keys, never part of a path.
type rateFile struct {
	Version    int                    `json:"version"`
	Requesters map[string][]time.Time `json:"requesters"`
}

// Take implements RateStore.
func (f FileRates) Take(requester string, now time.Time, limit int, window time.Duration) ([]time.Time, bool, error) {
	if limit <= 0 {
		return nil, true, nil
	}
	if f.Path == "" {
		return nil, false, errors.New("rate file: no path configured")
	}
	// encoding/json would replace invalid UTF-8 in a key, so such a requester could never
	// find its own stamps again and would escape the limit.
	if !utf8.ValidString(requester) {
		return nil, false, fmt.Errorf("rate file %s: requester %q is not valid UTF-8", f.Path, requester)
	}
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o700); err != nil {
		return nil, false, fmt.Errorf("rate file: %w", err)
	}
	unlock, err := lockFile(f.Path + ".lock")
	if err != nil {
		return nil, false, err
	}
	defer unlock()

	state, err := f.read()
	if err != nil {
		return nil, false, err
	}
	changed := false
	for r, stamps := range state.Requesters {
		live := within(stamps, now, window)
		if len(live) != len(stamps) {
			changed = true
		}
		if len(live) == 0 {
			delete(state.Requesters, r)
		} else {
			state.Requesters[r] = live
		}
	}
	recent := state.Requesters[requester]
	ok := len(recent) < limit
	if ok {
		// Another process's clock may be a little behind ours: keep the oldest first.
		recent = append(recent, now.UTC())
		slices.SortFunc(recent, time.Time.Compare)
		state.Requesters[requester] = recent
		changed = true
	}
	if changed {
		if err := f.write(state); err != nil {
			return nil, false, err
		}
	}
	return recent, ok, nil
}

// lockFile takes an exclusive flock on path, waiting for other holders. The kernel drops the
// lock if the process dies, so a crash never leaves the file locked.
func lockFile(path string) (unlock func(), err error) {
	lk, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("rate file lock: %w", err)
	}
	for {
		err = syscall.Flock(int(lk.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		_ = lk.Close()
		return nil, fmt.Errorf("rate file lock %s: %w", path, err)
	}
	// Closing the descriptor releases the lock.
	return func() { _ = lk.Close() }, nil
}

// read loads the file; a missing file is empty. Anything else it cannot understand is refused
// (and left as it is) rather than silently reset, which would lift everyone's limit.
func (f FileRates) read() (*rateFile, error) {
	state := &rateFile{Version: rateFileVersion, Requesters: map[string][]time.Time{}}
	b, err := os.ReadFile(f.Path)
	if errors.Is(err, os.ErrNotExist) {
		return state, nil
	}
	if err != nil {
		return nil, fmt.Errorf("rate file: %w", err)
	}
	corrupt := func(why string) error {
		return fmt.Errorf("rate file %s is corrupt (%s); delete it to reset the request counts", f.Path, why)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, corrupt("empty")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var got rateFile
	if err := dec.Decode(&got); err != nil {
		return nil, corrupt(err.Error())
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, corrupt("data after the JSON object")
	}
	if got.Version != rateFileVersion {
		return nil, corrupt(fmt.Sprintf("version %d, want %d", got.Version, rateFileVersion))
	}
	for r, stamps := range got.Requesters {
		state.Requesters[r] = stamps
	}
	return state, nil
}

// write replaces the file atomically: a reader sees the old or the new content, never part.
func (f FileRates) write(state *rateFile) error {
	b, err := json.Marshal(state)
	if err != nil {
		return fmt.Errorf("rate file: %w", err)
	}
	dir := filepath.Dir(f.Path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(f.Path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("rate file: %w", err)
	}
	renamed := false
	defer func() {
		if !renamed {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return fmt.Errorf("rate file: %w", err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("rate file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("rate file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("rate file: %w", err)
	}
	if err := os.Rename(tmp.Name(), f.Path); err != nil {
		return fmt.Errorf("rate file: %w", err)
	}
	renamed = true
	return nil
}
