//go:build !linux

package verify

import (
	"fmt"
	"os"
)

// init refuses to act as the browser launcher: dropping to the browser user and checking for
// Chromium's namespace sandbox are written for Linux only. Local then fails with a SetupError.
func init() {
	if _, ok := os.LookupEnv(launcherEnv); ok {
		fmt.Fprintln(os.Stderr, "signoff browser launcher: only supported on linux")
		os.Exit(1)
	}
}
