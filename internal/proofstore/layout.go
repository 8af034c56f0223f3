package proofstore

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
)

// BaseDir is the folder under a contract's proof folder that holds the base commit's
// screenshots (the base check), named like an attempt's: shot-<criterion>-<w>x<h>.png.
const BaseDir = "base"

// TryDir is one verification's folder: <contract>/attempt-<n>/try-<m>.
type TryDir struct {
	Attempt int    `json:"attempt"`
	Try     int    `json:"try"`
	Rel     string `json:"rel"`  // relative to the contract folder, slash-separated
	Path    string `json:"path"` // on disk
}

var (
	attemptDirRe = regexp.MustCompile(`^attempt-([1-9][0-9]{0,3})$`)
	tryDirRe     = regexp.MustCompile(`^try-([1-9][0-9]{0,3})$`)
)

// ParseTryDir reports the attempt and try numbers of a path ending in attempt-<n>/try-<m>.
func ParseTryDir(dir string) (attempt, try int, ok bool) {
	dir = filepath.Clean(dir)
	tm := tryDirRe.FindStringSubmatch(filepath.Base(dir))
	am := attemptDirRe.FindStringSubmatch(filepath.Base(filepath.Dir(dir)))
	if tm == nil || am == nil {
		return 0, 0, false
	}
	a, _ := strconv.Atoi(am[1])
	t, _ := strconv.Atoi(tm[1])
	return a, t, true
}

// TryDirs lists a contract folder's verifications that hold a bundle.json, by attempt then
// try. Symlinked folders are skipped: a proof folder is plain directories.
func TryDirs(contractDir string) ([]TryDir, error) {
	attempts, err := os.ReadDir(contractDir)
	if err != nil {
		return nil, fmt.Errorf("proof store: %w", err)
	}
	var out []TryDir
	for _, a := range attempts {
		am := attemptDirRe.FindStringSubmatch(a.Name())
		if am == nil || !a.IsDir() {
			continue
		}
		tries, err := os.ReadDir(filepath.Join(contractDir, a.Name()))
		if err != nil {
			return nil, fmt.Errorf("proof store: %w", err)
		}
		for _, t := range tries {
			tm := tryDirRe.FindStringSubmatch(t.Name())
			if tm == nil || !t.IsDir() {
				continue
			}
			p := filepath.Join(contractDir, a.Name(), t.Name())
			if st, err := os.Stat(filepath.Join(p, BundleFile)); err != nil || !st.Mode().IsRegular() {
				continue
			}
			an, _ := strconv.Atoi(am[1])
			tn, _ := strconv.Atoi(tm[1])
			out = append(out, TryDir{Attempt: an, Try: tn, Rel: a.Name() + "/" + t.Name(), Path: p})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Attempt != out[j].Attempt {
			return out[i].Attempt < out[j].Attempt
		}
		return out[i].Try < out[j].Try
	})
	return out, nil
}
