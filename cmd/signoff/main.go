// Command signoff is the Signoff CLI: contracts, the verdict policy, the workflow runtime and
// the prepared runs.
package main

import (
	"os"

	"github.com/signoff/signoff/cmd/signoff/internal/cmd/root"
	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
)

func main() {
	f := cmdutil.New(iostreams.System())
	os.Exit(cmdutil.Execute(root.NewCmdRoot(f), f.IO))
}
