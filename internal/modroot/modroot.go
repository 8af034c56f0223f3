// Package modroot finds the module's root (the folder holding go.mod) above the working
// directory, where a checkout keeps what setup installed (.cache, .bin).
package modroot

import (
	"errors"
	"os"
	"path/filepath"
)

// FromWD returns the nearest folder at or above the working directory that holds go.mod.
func FromWD() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
