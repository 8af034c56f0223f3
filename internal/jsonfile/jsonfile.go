// Package jsonfile updates small JSON state files shared between processes (the dev server
// and a CLI command): read, change and write back under an exclusive lock, atomically.
package jsonfile

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Update locks path, decodes it into a T (zero when the file does not exist), calls fn, and
// writes the value back when fn reports a change. A corrupt file is refused and left as is.
func Update[T any](path string, fn func(v *T) (changed bool, err error)) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	lk, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lk.Close()
	if err := syscall.Flock(int(lk.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock %s: %w", path, err)
	}
	defer syscall.Flock(int(lk.Fd()), syscall.LOCK_UN) //nolint:errcheck
	var v T
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &v); err != nil {
			return fmt.Errorf("%s is corrupt: %w", path, err)
		}
	} else if !os.IsNotExist(err) {
		return err
	}
	changed, err := fn(&v)
	if err != nil || !changed {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
