package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// measure counts each inode once (a hardlinked shared dependency is not paid twice), does
// not follow a link out of the folders, skips a folder that is gone, and stops once over.
func TestMeasureCountsWhatTheFoldersHold(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = 1
	}
	write := func(p string) {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "a"))
	if err := os.Link(filepath.Join(dir, "a"), filepath.Join(dir, "a-again")); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(outside, "big"))
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	u, err := measure([]string{dir, filepath.Join(dir, "missing")}, 1<<40, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	// the folder, a (once), the link itself
	if u.files != 3 || u.bytes < 1<<20 || u.bytes >= 2<<20 {
		t.Fatalf("usage %+v, want 3 inodes and one MiB of data", u)
	}
	if u, err := measure([]string{dir}, 1<<19, 1<<20); err != nil || u.bytes <= 1<<19 {
		t.Fatalf("over the byte bound: %+v %v", u, err)
	}
	if u, err := measure([]string{dir}, 1<<40, 1); err != nil || u.files != 2 {
		t.Fatalf("over the file bound: %+v %v, want to stop at the second inode", u, err)
	}
}
