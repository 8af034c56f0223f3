package embedded

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"time"
	"unsafe"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uiopts "github.com/temporalio/ui-server/v2/server/server_options"

	"github.com/signoff/signoff/internal/hostcheck"
	"github.com/signoff/signoff/temporal"
)

// uiServer is the Temporal Web UI, served in-process from the assets embedded in the
// ui-server module (no Node, no network), behind Signoff's own front listener.
//
// The ui-server checks neither Host (DNS rebinding) nor CSRF when a request carries any
// Authorization header, so it never listens: its handler is served only by the front on the
// UI port, which refuses foreign Host headers first. (It listened on an internal loopback port
// once, which any local user could reach past the front.) By default the ui-server runs with
// its write actions disabled (it answers 405 to every state-changing API call but workflow
// queries). With writes opted in, the front lets a state-changing request through only with
// the per-process token (see writeGate).
type uiServer struct {
	front *http.Server
	token string // "" when the UI is read-only
}

// uiSetup is where the UI listens and what it may do.
type uiSetup struct {
	host                string
	port                int // the front's port
	frontend, namespace string
	tls                 temporal.TLSConfig // the client credentials the ui-server dials the frontend with
	writes              bool
}

// startUI serves the UI on the front's port. The port must have been checked.
func startUI(s uiSetup) (u *uiServer, err error) {
	defer func() {
		// NewServer panics on a bad config; turn that into an error.
		if r := recover(); r != nil {
			err = fmt.Errorf("temporal: web UI: %v", r)
		}
	}()
	srv := uiserver.NewServer(uiopts.WithConfigProvider(&uiconfig.Config{
		Host:                s.host,
		Port:                s.port,
		TemporalGRPCAddress: s.frontend,
		TLS: uiconfig.TLS{CaFile: s.tls.CACertFile, CertFile: s.tls.ClientCertFile, KeyFile: s.tls.ClientKeyFile,
			ServerName: s.tls.ServerName, EnableHostVerification: true},
		EnableUI:         true,
		DefaultNamespace: s.namespace,
		// Plain HTTP on loopback: a Secure CSRF cookie would never be sent back.
		CORS:                    uiconfig.CORS{CookieInsecure: true},
		HideLogs:                true,
		DisableNewsFetch:        true,
		DisableWriteActions:     !s.writes,
		HideWorkflowQueryErrors: true,
	}))
	h, err := uiHandler(srv)
	if err != nil {
		return nil, err
	}
	u = &uiServer{}
	addr := net.JoinHostPort(s.host, strconv.Itoa(s.port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("temporal: web UI front on %s: %w", addr, err)
	}
	if s.writes {
		if u.token, err = newToken(); err != nil {
			ln.Close()
			return nil, err
		}
	}
	u.front = &http.Server{Handler: u.frontHandler(ln.Addr(), h), ReadHeaderTimeout: 10 * time.Second}
	go u.front.Serve(ln) //nolint:errcheck // ends with Close
	return u, nil
}

// uiHandler is the ui-server's HTTP handler (its echo router), which the module keeps in an
// unexported field and only ever serves from a listener of its own. Reading the field is
// what keeps the ui-server off the network; a ui-server release that renames it fails here,
// at start, rather than serving without the front.
func uiHandler(srv *uiserver.Server) (http.Handler, error) {
	f := reflect.ValueOf(srv).Elem().FieldByName("httpServer")
	if !f.IsValid() || f.Kind() != reflect.Pointer || f.IsNil() {
		return nil, fmt.Errorf("temporal: web UI: this ui-server release keeps no httpServer handler to serve behind the front")
	}
	h, ok := reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Interface().(http.Handler)
	if !ok {
		return nil, fmt.Errorf("temporal: web UI: the ui-server's %s is not an http.Handler", f.Type())
	}
	return h, nil
}

// frontHandler is what the UI port serves: the Host check, then (with writes) the token gate,
// then the ui-server.
func (u *uiServer) frontHandler(addr net.Addr, ui http.Handler) http.Handler {
	h := ui
	if u.token != "" {
		h = writeGate(u.token, h)
	}
	return hostcheck.Wrap(h, addr)
}

// uiTokenCookie carries the write token once the person opened the UI through its token URL.
const uiTokenCookie = "signoff_ui_token"

// uiTokenParam is the query parameter of that URL.
const uiTokenParam = "signoff_token"

// writeGate lets GET, HEAD and OPTIONS through and requires the per-process token (as the
// SameSite=Strict cookie set when the person opens the token URL) on everything else. A page
// on another site cannot send the cookie, and a process on the machine does not know the
// token, which only the CLI that started the server prints.
func writeGate(token string, next http.Handler) http.Handler {
	valid := func(s string) bool { return subtle.ConstantTimeCompare([]byte(s), []byte(token)) == 1 }
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if t := r.URL.Query().Get(uiTokenParam); t != "" {
			if !valid(t) {
				http.Error(w, "forbidden: wrong Web UI token", http.StatusForbidden)
				return
			}
			http.SetCookie(w, &http.Cookie{Name: uiTokenCookie, Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			q := r.URL.Query()
			q.Del(uiTokenParam)
			clean := *r.URL
			clean.RawQuery = q.Encode()
			http.Redirect(w, r, clean.RequestURI(), http.StatusSeeOther)
			return
		}
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			next.ServeHTTP(w, r)
			return
		}
		c, err := r.Cookie(uiTokenCookie)
		if err != nil || !valid(c.Value) {
			http.Error(w, "forbidden: state-changing Web UI requests need this process's token (open the UI through the URL `signoff dev` printed)", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func newToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("temporal: web UI token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

func (u *uiServer) stop() {
	if u.front != nil {
		if err := u.front.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // closing anyway
		}
	}
}
