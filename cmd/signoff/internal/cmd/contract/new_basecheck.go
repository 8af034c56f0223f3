// How `contract new` and `contract check` hand their flags to basecheck.Choice, which decides
// where the base check runs.

package contract

import (
	"fmt"

	"github.com/signoff/signoff/authoring/basecheck"
	"github.com/signoff/signoff/authoring/survey"
	"github.com/signoff/signoff/internal/verify"
)

// newChoice is the base check of `contract new` in mode: the queues of the server at
// opts.Conn, or this process.
func newChoice(opts *NewOptions, mode, dataDir string, src *survey.Source) *basecheck.Choice {
	return &basecheck.Choice{Mode: basecheck.Mode(mode), Address: opts.Conn.Address, Dial: opts.Conn.In(dataDir).Dial,
		DataDir: dataDir, Source: src, Progress: opts.IO.ErrOut, Artifacts: opts.Artifacts,
		Local: localChecker(basecheck.LocalOptions{DataDir: dataDir, Source: src, SharedDeps: opts.SharedDeps, RunAs: opts.RunAs, Unsandboxed: opts.Unsandboxed,
			Browser: opts.Settings.Browser, PackageManagersDir: opts.Settings.PackageManagersDir}, "or pass --no-check")}
}

// artifactsUsage documents --artifacts for contract new and check.
const artifactsUsage = "with --temporal-address, the artifact store the workers share when they run on other hosts (s3://...): the base commit is put there for the execute worker that builds it"

// localChecker builds the checker of this process. When the browser setup is missing, the
// error names the setup task and, where the command has one, the way around (skip: "or pass
// --no-check"; `contract check` has none, the check being all it does).
func localChecker(o basecheck.LocalOptions, skip string) func() (*basecheck.Local, error) {
	return func() (*basecheck.Local, error) {
		l, err := basecheck.NewLocal(o)
		if skip != "" && verify.IsSetupError(err) {
			return nil, fmt.Errorf("%w (%s)", err, skip)
		}
		return l, err
	}
}
