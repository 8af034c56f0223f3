package proof

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/internal/hostcheck"
	"github.com/signoff/signoff/internal/settings"
	"github.com/signoff/signoff/internal/verify"
	"github.com/signoff/signoff/web/proofpage"
)

// ServeOptions are the inputs of `proof serve`.
type ServeOptions struct {
	IO        *iostreams.IO
	Dir       string
	Addr      string
	DriverDir string
	// Browser is the settings' browser: where the verifier's driver, and its trace viewer, are.
	Browser settings.Browser
	JSON    bool
	Keys
	// Ready, when set, receives the proof list URL once the listener is up (tests).
	Ready func(url string)
}

// ServeInfo is the --json line printed once serving.
type ServeInfo struct {
	URL         string       `json:"url"`
	Pages       []string     `json:"pages"`
	TraceViewer bool         `json:"trace_viewer"`
	Verified    bool         `json:"verifies_pages"`
	Keys        *TrustedKeys `json:"keys,omitempty"`
	Note        string       `json:"not_verified_because,omitempty"`
}

// NewCmdServe builds `proof serve PROOF_DIR`.
func NewCmdServe(f *cmdutil.Factory, runF func(context.Context, *ServeOptions) error) *cobra.Command {
	o := &ServeOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "serve PROOF_DIR [--addr 127.0.0.1:0]",
		Short: "Serve proof pages and the Playwright trace viewer on loopback",
		Long: "Serves the proof pages of PROOF_DIR (a proof store root, a contract folder or one attempt's\n" +
			"folder) and the trace viewer shipped with the Playwright driver, so each trace link opens in\n" +
			"the viewer. Binds loopback only. Runs until interrupted.\n\n" +
			keysHelp + "\n\n" +
			"Without usable keys the pages are still served, each headed \"unverified\" and saying why.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.DataDir = f.DataDir
			o.Dir = args[0]
			s, err := f.Settings()
			if err != nil {
				return err
			}
			o.Browser = s.Browser
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return RunServe(ctx, o)
		},
	}
	o.addFlags(cmd)
	cmd.Flags().StringVar(&o.Addr, "addr", "127.0.0.1:0", "loopback address to listen on (port 0 picks a free one)")
	cmd.Flags().StringVar(&o.DriverDir, "driver-dir", "", "the Playwright driver folder holding the trace viewer (default: the verifier's, see 'go tool task browser:setup')")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the URL and pages as JSON once serving")
	return cmd
}

// RunServe serves until ctx ends.
func RunServe(ctx context.Context, o *ServeOptions) error {
	root, slugs, err := proofpage.Resolve(o.Dir)
	if err != nil {
		return iostreams.BadInput(err)
	}
	host, _, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return iostreams.BadInput(fmt.Errorf("--addr %q: %w", o.Addr, err))
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return iostreams.BadInput(fmt.Errorf("--addr %q: proof pages are served on loopback only (127.0.0.1 or ::1)", o.Addr))
	}
	opts, keys, err := o.pageOptions(o.Dir)
	if err != nil {
		return err
	}
	driver := o.DriverDir
	if driver == "" {
		driver = verify.ConfigFrom(o.Browser).DriverDir
	}
	viewer := proofpage.TraceViewerDir(driver)
	if _, err := os.Stat(filepath.Join(viewer, "index.html")); err != nil {
		if o.DriverDir != "" {
			return iostreams.BadInput(fmt.Errorf("--driver-dir: no trace viewer at %s", viewer))
		}
		fmt.Fprintf(o.IO.ErrOut, "no trace viewer at %s (run `%s`): trace links go to the raw files\n", viewer, verify.SetupTask)
		viewer = ""
	}
	// A store root is served whole (contracts added later appear); anything narrower is
	// served alone, so its neighbours in the store stay private.
	only := slugs
	if abs, err := filepath.Abs(o.Dir); err == nil && abs == root {
		only = nil
	}
	h, err := proofpage.NewHandler(proofpage.Config{Root: root, Prefix: "/proofs/", TraceViewerDir: viewer, Contracts: only,
		Options: opts})
	if err != nil {
		return iostreams.Failed(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/proofs/", h)
	mux.Handle("GET /{$}", http.RedirectHandler("/proofs/", http.StatusFound))
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return iostreams.Failed(fmt.Errorf("listen %s: %w", o.Addr, err))
	}
	srv := &http.Server{Handler: hostcheck.Wrap(mux, ln.Addr()), ReadHeaderTimeout: 10 * time.Second}
	base := "http://" + ln.Addr().String()
	info := ServeInfo{URL: base + "/proofs/", TraceViewer: viewer != "", Verified: keys != nil, Keys: keys, Note: opts.KeyNote}
	for _, s := range slugs {
		info.Pages = append(info.Pages, base+"/proofs/"+s+"/")
	}
	if o.JSON {
		if err := o.IO.WriteJSON(info); err != nil {
			ln.Close()
			return err
		}
	} else {
		o.IO.Printf("serving proofs at %s (Ctrl-C to stop)\n", info.URL)
		for _, p := range info.Pages {
			o.IO.Printf("  %s\n", p)
		}
		if keys != nil {
			o.IO.Printf("%s\n", keys.describe())
		} else {
			o.IO.Printf("pages are headed unverified: %s\n", opts.KeyNote)
		}
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if o.Ready != nil {
		o.Ready(info.URL)
	}
	select {
	case err := <-errc:
		return iostreams.Failed(err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return iostreams.Failed(err)
	}
	return nil
}
