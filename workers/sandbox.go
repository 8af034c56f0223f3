package workers

import (
	"fmt"
	"sync"

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

// LazySandbox makes one sandbox the first time repository code needs it: making one probes it
// with a real run, and a queue that runs no repository code (static previews, the prepared
// executor) must not need namespaces at all.
type LazySandbox struct {
	Unsandboxed bool
	once        sync.Once
	sb          *sandbox.Runner
	err         error
}

// Get returns the sandbox, making it on the first call.
func (l *LazySandbox) Get() (*sandbox.Runner, error) {
	l.once.Do(func() { l.sb, l.err = NewSandbox(l.Unsandboxed) })
	return l.sb, l.err
}

// sandbox is cfg's sandbox, or a default one when the caller set none.
func (c Config) sandbox() (*sandbox.Runner, error) {
	if c.Sandbox != nil {
		return c.Sandbox.Get()
	}
	return NewSandbox(false)
}
