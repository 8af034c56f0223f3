package workers

import (
	"fmt"

	"github.com/signoff/signoff/internal/sandbox"
)

// FlagUnsandboxed is the operator's explicit opt-out of the sandbox; its use is recorded in
// every build record the execute queue makes, and proof pages show it.
const FlagUnsandboxed = "unsandboxed"

// NewSandbox is the one sandbox every process runs repository code and coding CLIs in.
// Without namespaces it refuses, naming the setup task, unless the operator opted out.
func NewSandbox(unsandboxed bool) (*sandbox.Runner, error) {
	if unsandboxed {
		return sandbox.New(sandbox.Config{Off: true})
	}
	sb, err := sandbox.New(sandbox.Config{})
	if err != nil {
		return nil, fmt.Errorf("repository code runs only inside a sandbox, and none can be made here: %w "+
			"(or pass --%s to run it without one; every proof then says so)", err, FlagUnsandboxed)
	}
	return sb, nil
}
