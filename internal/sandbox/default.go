package sandbox

import (
	"fmt"
	"sync"
)

// FlagUnsandboxed is the operator's explicit opt-out of the sandbox; its use is recorded in
// every build record the execute queue makes, and proof pages show it.
const FlagUnsandboxed = "unsandboxed"

// Default is the one sandbox every process runs repository code and coding CLIs in.
// Without namespaces it refuses, naming the setup task, unless the operator opted out.
func Default(unsandboxed bool) (*Runner, error) {
	if unsandboxed {
		return New(Config{Off: true})
	}
	sb, err := New(Config{})
	if err != nil {
		return nil, fmt.Errorf("repository code runs only inside a sandbox, and none can be made here: %w "+
			"(or pass --%s to run it without one; every proof then says so)", err, FlagUnsandboxed)
	}
	return sb, nil
}

// Lazy makes one sandbox the first time repository code needs it: making one probes it
// with a real run, and a queue that runs no repository code (static previews, the prepared
// executor) must not need namespaces at all.
type Lazy struct {
	Unsandboxed bool
	once        sync.Once
	sb          *Runner
	err         error
}

// Get returns the sandbox, making it on the first call.
func (l *Lazy) Get() (*Runner, error) {
	l.once.Do(func() { l.sb, l.err = Default(l.Unsandboxed) })
	return l.sb, l.err
}
