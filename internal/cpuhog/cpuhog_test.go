package cpuhog

import (
	"os"
	"path/filepath"
	"testing"
)

func TestBusyReadsLoadPerCPU(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		file string
		cpus int
		want bool
	}{
		{"0.50 0.40 0.30 1/200 999\n", 2, false}, // quiet: the hog runs
		{"3.99 1 1 1/200 999\n", 2, false},       // under two per CPU
		{"4.00 1 1 1/200 999\n", 2, true},        // two per CPU
		{"13.59 11 9 6/496 25494\n", 2, true},    // the suite at three packages at once, as measured
		{"13.59 11 9 6/496 25494\n", 8, false},   // the same load on eight CPUs
		{"garbage", 2, false},
		{"NaN 1 1", 2, false},
		{"", 2, false},
		{"9 1 1", 0, false},
	} {
		p := filepath.Join(dir, "loadavg")
		if err := os.WriteFile(p, []byte(tc.file), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, got := busy(p, tc.cpus); got != tc.want {
			t.Errorf("busy(%q, %d) = %v, want %v", tc.file, tc.cpus, got, tc.want)
		}
	}
	if _, got := busy(filepath.Join(dir, "missing"), 2); got {
		t.Error("no loadavg file counts as busy")
	}
}
