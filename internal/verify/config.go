package verify

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/signoff/signoff/internal/modroot"
	"github.com/signoff/signoff/internal/settings"
)

// DriverVersion is the Playwright driver (npm playwright-core) that
// github.com/mxschmitt/playwright-go v0.6401.0 pins. It is part of the verifier digest.
const DriverVersion = "1.64.1"

// Environment variables that override the default paths.
const (
	EnvDriverDir   = "SIGNOFF_PW_DRIVER_DIR"
	EnvChromium    = "SIGNOFF_CHROMIUM"
	EnvBrowserUser = "SIGNOFF_BROWSER_USER"
	// EnvAllowNoBrowserSandbox=1 lets Chromium run without its sandbox where user namespaces
	// are unavailable (still as the browser user, with a clean environment). Evidence says so.
	EnvAllowNoBrowserSandbox = "SIGNOFF_ALLOW_NO_BROWSER_SANDBOX"
	// EnvRealTimeFactor sets Config.RealTimeFactor (a number from 1 to 20).
	EnvRealTimeFactor = "SIGNOFF_VERIFY_REAL_TIME_FACTOR"
)

// DefaultBrowserUser is the system user a root worker runs Chromium as (the setup task
// creates it). It must not be the preview user: the app's own server runs as that one and
// could then trace or signal the browser that measures it.
const DefaultBrowserUser = "signoff-browser"

// DefaultChromium is Debian's real Chromium binary (not the /usr/bin/chromium wrapper, which
// prepends its own flags).
const DefaultChromium = "/usr/lib/chromium/chromium"

// SetupTask is the command that provisions what the verifier needs.
const SetupTask = "go tool task browser:setup"

// Config says where the browser pieces live. Zero fields take the defaults of DefaultConfig.
type Config struct {
	// DriverDir holds package/cli.js (npm playwright-core) and a node executable or symlink.
	DriverDir string
	// Chromium is the browser binary launched in local mode.
	Chromium string
	// BrowserUser is who a root worker runs local Chromium as; default DefaultBrowserUser.
	// A worker that is not root runs it as itself.
	BrowserUser string
	// AllowNoBrowserSandbox launches local Chromium without its sandbox when user namespaces
	// are unavailable, instead of failing with a SetupError. Evidence records the difference.
	AllowNoBrowserSandbox bool
	// RealTimeFactor is the real time a browser criterion gets per viewport, as a multiple of
	// its max_runtime_ms of page time, before the host's load stretches it. Zero:
	// DefaultRealTimeFactor. A host known to be slow sets it higher.
	RealTimeFactor float64
	// problem is what was wrong in the environment DefaultConfig read; CheckSetup reports it.
	problem string
	// frameWait, when set, replaces the package's frameWait and artifactTimeout, and
	// dropFrame, when set, is asked before each call that waits for a frame, with its name
	// (the CDP method of a sendPainted, "Page.screenshot" for the full-page screenshot): true
	// swallows it, as Chromium did on a busy host. Tests only: a page without frames cannot
	// be made at will.
	frameWait time.Duration
	dropFrame func(call string) bool
}

// ConfigFrom is the verifier's configuration from the process's settings; empty paths take
// the defaults of withDefaults.
func ConfigFrom(b settings.Browser) Config {
	return Config{DriverDir: b.DriverDir, Chromium: b.Chromium, BrowserUser: b.User,
		AllowNoBrowserSandbox: b.AllowNoSandbox, RealTimeFactor: b.RealTimeFactor}.withDefaults()
}

// DefaultConfig is ConfigFrom this process's environment, for tests and tools that have no
// settings of their own; a variable that does not parse is reported by CheckSetup.
func DefaultConfig() Config {
	s, err := settings.Load(os.Getenv)
	c := ConfigFrom(s.Browser)
	if err != nil {
		c.problem = err.Error()
	}
	return c
}

func (c Config) withDefaults() Config {
	if c.DriverDir == "" {
		if root, err := modroot.FromWD(); err == nil {
			c.DriverDir = filepath.Join(root, ".cache", "pw-driver", DriverVersion)
		}
	}
	if c.Chromium == "" {
		c.Chromium = DefaultChromium
	}
	if c.BrowserUser == "" {
		c.BrowserUser = DefaultBrowserUser
	}
	return c
}

// SetupError says a provisioned piece (driver, node, Chromium) is missing. It is not worth
// retrying: someone has to run the setup task.
type SetupError struct {
	Missing string
	Err     error
}

func (e *SetupError) Error() string {
	msg := fmt.Sprintf("browser setup incomplete: %s (run `%s`, or set %s / %s)", e.Missing, SetupTask, EnvDriverDir, EnvChromium)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *SetupError) Unwrap() error { return e.Err }

// CheckSetup reports whether the driver and, when needed, the local Chromium are in place,
// without starting anything and without any download.
func (c Config) CheckSetup(needChromium bool) error {
	c = c.withDefaults()
	if c.problem != "" {
		return fmt.Errorf("verifier configuration: %s", c.problem)
	}
	if c.DriverDir == "" {
		return &SetupError{Missing: "the Playwright driver directory (no repository root found)"}
	}
	cli := filepath.Join(c.DriverDir, "package", "cli.js")
	if _, err := os.Stat(cli); err != nil {
		return &SetupError{Missing: "Playwright driver " + cli, Err: err}
	}
	if os.Getenv("PLAYWRIGHT_NODEJS_PATH") == "" {
		node := filepath.Join(c.DriverDir, "node")
		if _, err := os.Stat(node); err != nil {
			return &SetupError{Missing: "node for the driver at " + node, Err: err}
		}
	}
	if needChromium {
		st, err := os.Stat(c.Chromium)
		if err != nil {
			return &SetupError{Missing: "Chromium at " + c.Chromium, Err: err}
		}
		if st.IsDir() || st.Mode()&0o111 == 0 {
			return &SetupError{Missing: "an executable Chromium at " + c.Chromium}
		}
	}
	return nil
}

// IsSetupError reports whether err (or anything it wraps) is a SetupError.
func IsSetupError(err error) bool {
	var se *SetupError
	return errors.As(err, &se)
}

// RequestError is a malformed verification request: retrying it cannot help.
type RequestError struct{ Problems []string }

func (e *RequestError) Error() string {
	return "invalid verification request: " + strings.Join(e.Problems, "; ")
}
