package embedded

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/signoff/signoff/temporal"
)

// Defaults for the embedded server (its host, frontend port and namespace are the temporal
// package's, which clients dial). The UI port matches `temporal server start-dev`; the
// retention is ours (the server's default is 24 h, too short for an audit trail of paid work).
const (
	DefaultUIPort        = 8233
	DefaultRetentionDays = 30
	DefaultLogLevel      = "warn"

	// AnyPort asks Start to pick a free loopback port itself (for tests and
	// side-by-side runs). For FrontendPort, 0 means the same; for UIPort, 0 means off.
	AnyPort = -1

	// DBFileName is the SQLite file inside Config.DataDir.
	DBFileName = "temporal.db"
)

// Config describes the embedded server. The zero value of every field except
// DataDir has a usable default.
type Config struct {
	// DataDir holds temporal.db and its lock file; created (0700) when missing.
	DataDir string
	// Host is the loopback address every listener binds to. Default 127.0.0.1.
	// Non-loopback addresses are refused unless OtherHosts is set.
	Host string
	// OtherHosts lifts the loopback rule, UI off, for workers on other hosts: the server
	// then answers anyone who reaches Host and holds a copy of the client certificate
	// (ClientDirName), with no further authorization between them, so it
	// belongs on a private network only (a test rig's namespaces, a firewalled LAN).
	OtherHosts bool
	// FrontendPort is the gRPC port clients dial. 0 or AnyPort picks a free port.
	FrontendPort int
	// UIPort is the Web UI port. 0 turns the UI off; AnyPort picks a free port.
	UIPort int
	// UIWriteActions lets the Web UI signal, cancel, terminate, reset and start workflows.
	// Off (the default) the UI is read-only: Signoff's CLI and chat make every change through
	// Temporal's API. On, each state-changing request needs the per-process token handed out
	// by Server.UIURL (see uiFront).
	UIWriteActions bool
	// Namespace is registered on start if missing. Default "default".
	Namespace string
	// RetentionDays is how long closed workflow histories are kept. 0 means 30.
	// A changed value is applied to an existing namespace on the next start.
	RetentionDays int
	// LogLevel of the server's own logger: debug, info, warn (default) or error.
	LogLevel string
	// LogOutput receives the server's JSON log lines. Nil means stderr (never stdout:
	// stdout belongs to the CLI's own output).
	LogOutput io.Writer
}

// namespaceName follows the rules the frontend applies on RegisterNamespace; we
// pre-register straight into the database, so we have to check them ourselves.
var namespaceName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$`)

// normalized returns cfg with defaults filled in and the data dir made absolute,
// or an error naming the first bad field.
func (cfg Config) normalized() (Config, error) {
	if strings.TrimSpace(cfg.DataDir) == "" {
		return cfg, errors.New("temporal: data dir is required")
	}
	dir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return cfg, fmt.Errorf("temporal: data dir %q: %w", cfg.DataDir, err)
	}
	// The SQLite plugin puts the path into a "file:" URI without escaping it.
	if strings.ContainsAny(dir, "?#%") {
		return cfg, fmt.Errorf("temporal: data dir %q must not contain '?', '#' or '%%'", dir)
	}
	cfg.DataDir = dir

	if cfg.Host == "" || cfg.Host == "localhost" {
		cfg.Host = temporal.DefaultHost
	}
	ip := net.ParseIP(cfg.Host)
	switch {
	case ip == nil:
		return cfg, fmt.Errorf("temporal: host %q is not an IP address", cfg.Host)
	case !ip.IsLoopback() && !cfg.OtherHosts:
		return cfg, fmt.Errorf("temporal: host %q is not a loopback IP address; the embedded server binds to loopback only unless told to serve other hosts (use an external cluster in production)", cfg.Host)
	case !ip.IsLoopback() && cfg.UIPort != 0:
		// The ui-server behind the UI front trusts any request with an Authorization
		// header; it must never listen where other hosts reach it.
		return cfg, fmt.Errorf("temporal: the Web UI stays on loopback: turn it off (UI port 0) to serve other hosts on %s", cfg.Host)
	}
	cfg.Host = ip.String()

	if cfg.FrontendPort == 0 {
		cfg.FrontendPort = AnyPort
	}
	if err := checkPort("frontend", cfg.FrontendPort); err != nil {
		return cfg, err
	}
	if err := checkPort("UI", cfg.UIPort); err != nil {
		return cfg, err
	}
	if cfg.FrontendPort > 0 && cfg.FrontendPort == cfg.UIPort {
		return cfg, fmt.Errorf("temporal: frontend and UI ports are both %d", cfg.FrontendPort)
	}

	if cfg.Namespace == "" {
		cfg.Namespace = temporal.DefaultNamespace
	}
	if !namespaceName.MatchString(cfg.Namespace) || cfg.Namespace == "temporal-system" {
		return cfg, fmt.Errorf("temporal: invalid namespace name %q (letters, digits, '.', '_', '-'; not temporal-system)", cfg.Namespace)
	}

	switch {
	case cfg.RetentionDays == 0:
		cfg.RetentionDays = DefaultRetentionDays
	case cfg.RetentionDays < 0 || cfg.RetentionDays > 36500:
		return cfg, fmt.Errorf("temporal: retention of %d days is out of range (1..36500)", cfg.RetentionDays)
	}

	if cfg.LogLevel == "" {
		cfg.LogLevel = DefaultLogLevel
	}
	cfg.LogLevel = strings.ToLower(cfg.LogLevel)
	switch cfg.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return cfg, fmt.Errorf("temporal: log level %q is not one of debug, info, warn, error", cfg.LogLevel)
	}
	if cfg.LogOutput == nil {
		cfg.LogOutput = os.Stderr
	}
	return cfg, nil
}

func checkPort(what string, port int) error {
	if port < AnyPort || port > 65535 {
		return fmt.Errorf("temporal: %s port %d is out of range", what, port)
	}
	return nil
}
