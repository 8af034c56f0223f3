package cmdutil

import (
	"context"
	"os"

	"go.temporal.io/sdk/client"

	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/internal/settings"
	"github.com/signoff/signoff/workers"
	"github.com/signoff/signoff/workflows/contractapi"
)

// Factory is what every command is built from, as in cli/cli: the streams, the data dir
// (the root's persistent --data-dir), the configuration and how to reach Temporal. Each
// command that talks to Temporal dials through NewClient when it runs and closes its own
// client. Tests build one with Test streams and a Dial override.
type Factory struct {
	IO *iostreams.IO
	// DataDir is bound to the root's persistent --data-dir (default the settings'
	// SIGNOFF_DATA_DIR, else .signoff).
	DataDir string
	// Conn says how to reach Temporal; commands that talk to it register its flags.
	Conn *Conn
	// Dial, when set, replaces dialling Conn (tests).
	Dial func(ctx context.Context) (client.Client, error)

	settings    settings.Settings
	settingsErr error
}

// New returns the factory of the signoff process: the environment is read here, once.
func New(io *iostreams.IO) *Factory {
	s, err := settings.Load(os.Getenv)
	return &Factory{IO: io, DataDir: s.DataDir, Conn: &Conn{APIKey: s.TemporalAPIKey}, settings: s, settingsErr: err}
}

// Settings is the process's configuration, read when the factory was made. A variable that
// does not parse is bad input (exit 2) for the command that asks; the settings returned
// beside the error hold the defaults in its place, for flag defaults.
func (f *Factory) Settings() (settings.Settings, error) {
	if f.settingsErr != nil {
		return f.settings, iostreams.BadInput(f.settingsErr)
	}
	return f.settings, nil
}

// NewClient dials Temporal for one command, which closes the client. A failure to reach it
// is a command failure (exit 1), not bad input.
func (f *Factory) NewClient(ctx context.Context) (client.Client, error) {
	if f.Dial != nil {
		return f.Dial(ctx)
	}
	c, err := f.Conn.In(f.DataDir).Dial(ctx)
	if err != nil {
		return nil, iostreams.Failed(err)
	}
	return c, nil
}

// ContractTimeouts are the timeouts the configuration sets for every contract this process
// starts (`contract start`, chat, replay); the rest keep the workflow's defaults.
func ContractTimeouts(s settings.Settings) contractapi.Timeouts {
	return contractapi.Timeouts{Heartbeat: s.HeartbeatTimeout}
}

// Trust reads what the deployment's verify worker published into the data dir: its public
// key and digest.
func (f *Factory) Trust() (contractapi.Trust, error) { return workers.ReadTrust(f.DataDir) }
