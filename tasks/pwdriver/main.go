// Command pwdriver finishes the Playwright driver's setup (tasks/browser.yml): it runs
// playwright-go's own install over the unpacked driver, which finds it up to date, downloads
// nothing, and patches the driver's bundle the way playwright-go does the first time it starts
// it. Done here once, the driver folder can be read-only afterwards: the multi-host rig's
// hosts see the repository read-only, and a fresh clone has never started the driver.
//
//	go run ./tasks/pwdriver DRIVER_DIR
package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/mxschmitt/playwright-go"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: pwdriver DRIVER_DIR")
		os.Exit(2)
	}
	dir := os.Args[1]
	// Install downloads a driver it does not find; this one is unpacked by the setup task.
	if _, err := os.Stat(filepath.Join(dir, "package", "cli.js")); err != nil {
		fmt.Fprintf(os.Stderr, "pwdriver: no unpacked driver in %s: %v\n", dir, err)
		os.Exit(1)
	}
	err := playwright.Install(&playwright.RunOptions{
		DriverDirectory:     dir,
		SkipInstallBrowsers: true,
		Stdout:              io.Discard,
		Stderr:              os.Stderr,
		Logger:              slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "pwdriver: %s: %v\n", dir, err)
		os.Exit(1)
	}
}
