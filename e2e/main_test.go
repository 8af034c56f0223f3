package e2e_test

import (
	"os"
	"testing"

	"github.com/signoff/signoff/e2e/signoffproc"
)

// TestMain removes what the package's tests leave outside their own temp folders: the CLI
// that signoffproc builds once per test binary.
func TestMain(m *testing.M) {
	code := m.Run()
	signoffproc.RemoveBinary()
	os.Exit(code)
}
