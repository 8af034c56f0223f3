// Package server holds `signoff server`: the embedded Temporal server alone, for workers that
// run elsewhere (`signoff worker --temporal-address`).
package server

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/temporal"
	"github.com/signoff/signoff/temporal/embedded"
)

// Options are the inputs of `server`.
type Options struct {
	IO        *iostreams.IO
	DataDir   string
	IP        string
	Port      int
	UIPort    int
	Retention int
	// Ready, when set, is called with the frontend address once the server answers (tests).
	Ready func(addr string)
}

// NewCmdServer builds `server`.
func NewCmdServer(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	o := &Options{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run only the embedded Temporal server, for workers on other hosts",
		Long: "Starts the embedded Temporal server (SQLite under <data-dir>/temporal) and nothing else: no\n" +
			"workers, no listeners. Workers started with `signoff worker --temporal-address` on this or\n" +
			"other hosts connect to it.\n\n" +
			"Every port it opens answers only mutual TLS with the client certificate it makes on first\n" +
			"start in <data-dir>/temporal/client (owner-only): Signoff's commands with this --data-dir use\n" +
			"it; a worker on another host needs a copy of that folder in its own <data-dir>/temporal/client.\n\n" +
			"By default it listens on 127.0.0.1. --ip with another address serves other hosts and needs\n" +
			"--ui-port 0 (the Web UI stays on loopback). A production deployment uses a Temporal cluster.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.DataDir = f.DataDir
			if runF != nil {
				return runF(o)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return Run(ctx, o)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.IP, "ip", temporal.DefaultHost, "address to listen on; not loopback: hosts holding a copy of the client certificate may use it")
	fs.IntVar(&o.Port, "port", temporal.DefaultFrontendPort, "frontend gRPC port")
	fs.IntVar(&o.UIPort, "ui-port", embedded.DefaultUIPort, "Web UI port on loopback (0 turns it off; must be 0 with a non-loopback --ip)")
	fs.IntVar(&o.Retention, "retention-days", embedded.DefaultRetentionDays, "workflow history retention")
	return cmd
}

// Run serves until ctx ends.
func Run(ctx context.Context, o *Options) error {
	ip := net.ParseIP(o.IP)
	if ip == nil {
		return iostreams.BadInput(fmt.Errorf("--ip %q: want an IP address", o.IP))
	}
	if !ip.IsLoopback() && o.UIPort != 0 {
		return iostreams.BadInput(fmt.Errorf("--ip %s serves other hosts; pass --ui-port 0 (the Web UI stays on loopback)", o.IP))
	}
	dir := datadir.Paths(o.DataDir).Temporal
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return iostreams.Failed(err)
	}
	logFile, err := os.OpenFile(filepath.Join(dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return iostreams.Failed(err)
	}
	defer logFile.Close()
	srv, err := embedded.Start(ctx, embedded.Config{DataDir: dir, Host: o.IP, OtherHosts: !ip.IsLoopback(),
		FrontendPort: o.Port, UIPort: o.UIPort, RetentionDays: o.Retention, LogLevel: "warn", LogOutput: logFile})
	if err != nil {
		return iostreams.Failed(err)
	}
	defer func() { _ = srv.Stop() }()
	fmt.Fprintf(o.IO.ErrOut, "Temporal server on %s (namespace %s, history in %s), pid %d\n", srv.FrontendAddress(), srv.Namespace(), srv.DBPath(), os.Getpid())
	fmt.Fprintf(o.IO.ErrOut, "clients need the certificate in %s (mutual TLS; copy the folder to another host's <data-dir>/temporal/%s)\n",
		datadir.Paths(o.DataDir).TemporalClient, temporal.ClientDirName)
	if srv.NewClientCertificate() {
		fmt.Fprintln(o.IO.ErrOut, "the client certificate is new: copies made before this start no longer get in")
	}
	if u := srv.UIURL(); u != "" {
		fmt.Fprintf(o.IO.ErrOut, "Web UI: %s\n", u)
	}
	if o.Ready != nil {
		o.Ready(srv.FrontendAddress())
	}
	<-ctx.Done()
	return nil
}
