// Command signoff is the Signoff CLI: contracts, the verdict policy, the workflow runtime and
// the prepared runs.
package main

import (
	"fmt"
	"os"

	"github.com/signoff/signoff/cmd/signoff/internal/cmd/root"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
)

func main() {
	io := iostreams.System()
	err := root.NewCmdRoot(io).Execute()
	if err != nil {
		var ee *iostreams.ExitError
		if !asExit(err, &ee) || !ee.Silent {
			fmt.Fprintln(io.ErrOut, "signoff:", err)
		}
	}
	os.Exit(exitCode(err))
}
