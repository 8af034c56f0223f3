package e2e_test

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMain removes what the package's tests leave outside their own temp folders: the CLI
// that signoffBinary builds once (a quarter of a gigabyte per run otherwise).
func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		_ = os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}
