package hostload

import (
	"os"
	"path/filepath"
	"testing"
)

func TestOneMinute(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		file string
		load float64
		ok   bool
	}{
		{"0.50 0.40 0.30 1/200 999\n", 0.5, true},
		{"13.59 11 9 6/496 25494\n", 13.59, true},
		{"garbage", 0, false},
		{"NaN 1 1", 0, false},
		{"", 0, false},
	} {
		p := filepath.Join(dir, "loadavg")
		if err := os.WriteFile(p, []byte(tc.file), 0o600); err != nil {
			t.Fatal(err)
		}
		if load, ok := OneMinute(p); load != tc.load || ok != tc.ok {
			t.Errorf("OneMinute(%q) = %v, %v, want %v, %v", tc.file, load, ok, tc.load, tc.ok)
		}
	}
	if _, ok := OneMinute(filepath.Join(dir, "missing")); ok {
		t.Error("a missing file reads as a load")
	}
}
