package verify

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"

	"github.com/mxschmitt/playwright-go"
)

// Driver is a running Playwright driver: one node process that every verification of a worker
// shares. Starting one costs about 1.5-2 s, so a worker keeps it for its lifetime.
type Driver struct {
	pw       *playwright.Playwright
	stopOnce sync.Once
	stopErr  error
}

// StartDriver checks the provisioned driver and starts it. It never downloads anything: a
// missing driver is a SetupError. playwright.Install is called with SkipInstallBrowsers only for
// its offline work (version check and mx's pageError bundle patch). The setup task applies that
// patch once (tasks/pwdriver), so a driver directory made read-only after setup still works.
func StartDriver(cfg Config) (*Driver, error) {
	cfg = cfg.withDefaults()
	if err := cfg.CheckSetup(false); err != nil {
		return nil, err
	}
	opts := &playwright.RunOptions{
		DriverDirectory:     cfg.DriverDir,
		SkipInstallBrowsers: true,
		Verbose:             false,
		Stdout:              io.Discard,
		Stderr:              os.Stderr,
		// Setting a logger keeps playwright-go from redirecting the global log package.
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if err := playwright.Install(opts); err != nil {
		return nil, &SetupError{Missing: "a working Playwright driver " + DriverVersion + " in " + cfg.DriverDir, Err: err}
	}
	pw, err := playwright.Run(opts)
	if err != nil {
		return nil, fmt.Errorf("start playwright driver: %w", err)
	}
	return &Driver{pw: pw}, nil
}

// Playwright exposes the running instance (for BrowserSource implementations).
func (d *Driver) Playwright() *playwright.Playwright { return d.pw }

// Stop ends the driver process. It is safe to call more than once.
func (d *Driver) Stop() error {
	d.stopOnce.Do(func() { d.stopErr = d.pw.Stop() })
	return d.stopErr
}
