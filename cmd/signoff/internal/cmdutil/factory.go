package cmdutil

import (
	"context"
	"os"

	"go.temporal.io/sdk/client"

	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/workers"
	"github.com/signoff/signoff/workflows"
)

// Factory is what every command is built from, as in cli/cli: the streams, the data dir
// (the root's persistent --data-dir), the environment and how to reach Temporal. Each
// command that talks to Temporal dials through NewClient when it runs and closes its own
// client. Tests build one with Test streams and a Dial override.
type Factory struct {
	IO *iostreams.IO
	// DataDir is bound to the root's persistent --data-dir (default $SIGNOFF_DATA_DIR or
	// .signoff).
	DataDir string
	// Getenv reads the environment; tests replace it.
	Getenv func(string) string
	// Conn says how to reach Temporal; commands that talk to it register its flags.
	Conn *Conn
	// Dial, when set, replaces dialling Conn (tests).
	Dial func(ctx context.Context) (client.Client, error)
}

// New returns the factory of the signoff process.
func New(io *iostreams.IO) *Factory {
	return &Factory{IO: io, DataDir: DefaultDataDir(), Getenv: os.Getenv, Conn: &Conn{}}
}

// NewClient dials Temporal for one command, which closes the client. A failure to reach it
// is a command failure (exit 1), not bad input.
func (f *Factory) NewClient(ctx context.Context) (client.Client, error) {
	if f.Dial != nil {
		return f.Dial(ctx)
	}
	c, err := f.Conn.Dial(ctx)
	if err != nil {
		return nil, iostreams.Failed(err)
	}
	return c, nil
}

// Trust reads what the deployment's verify worker published into the data dir: its public
// key and digest.
func (f *Factory) Trust() (workflows.Trust, error) { return workers.ReadTrust(f.DataDir) }
