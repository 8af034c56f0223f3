package proofpage

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/signoff/signoff/internal/proofstore"
)

// TraceViewerPath is where the trace viewer sits under the handler's prefix. Contract folder
// names cannot start with "_", so it never shadows a contract.
const TraceViewerPath = "_trace/"

// TraceViewerDir is the static trace viewer inside a Playwright driver folder (npm
// playwright-core): the same files `playwright show-trace` serves.
func TraceViewerDir(driverDir string) string {
	return filepath.Join(driverDir, "package", "lib", "vite", "traceViewer")
}

// Config is a proof handler's setup.
type Config struct {
	// Root is the proof store root: <root>/<contract>/attempt-<n>/try-<m>/.
	Root string
	// Prefix is the URL path the handler is mounted at, with both slashes ("/proofs/").
	Prefix string
	// TraceViewerDir holds Playwright's static trace viewer (see TraceViewerDir); empty: trace
	// links go to the raw files.
	TraceViewerDir string
	// Contracts, when set, limits the handler to these contract folders.
	Contracts []string
	// IndexURL links the contract index from the proof list ("" for none).
	IndexURL string
	Options
}

// Handler serves proof pages, the files they link and the trace viewer, read from the proof
// store on every request (a proof folder changes only by adding attempts).
type Handler struct {
	cfg    Config
	viewer http.Handler
}

// NewHandler checks the configuration. Mount it on the loopback listener at cfg.Prefix:
// web.Loopback.Extra["/proofs/"] = h.
func NewHandler(cfg Config) (*Handler, error) {
	if cfg.Prefix == "" {
		cfg.Prefix = "/proofs/"
	}
	if !strings.HasPrefix(cfg.Prefix, "/") || !strings.HasSuffix(cfg.Prefix, "/") {
		return nil, fmt.Errorf("proof handler: prefix %q must start and end with /", cfg.Prefix)
	}
	if cfg.Root == "" {
		return nil, fmt.Errorf("proof handler: no proof store root")
	}
	h := &Handler{cfg: cfg}
	if cfg.TraceViewerDir != "" {
		if _, err := os.Stat(filepath.Join(cfg.TraceViewerDir, "index.html")); err != nil {
			return nil, fmt.Errorf("proof handler: trace viewer: %w (run `go tool task browser:setup`)", err)
		}
		h.viewer = http.StripPrefix(cfg.Prefix+TraceViewerPath, http.FileServer(http.Dir(cfg.TraceViewerDir)))
	}
	return h, nil
}

func (h *Handler) allowed(slug string) bool {
	if !ValidSlug(slug) {
		return false
	}
	return len(h.cfg.Contracts) == 0 || slices.Contains(h.cfg.Contracts, slug)
}

// pageCSP keeps proof pages inert: no script, images and links from this origin only.
const pageCSP = "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, h.cfg.Prefix)
	if !ok {
		if r.URL.Path+"/" == h.cfg.Prefix {
			http.Redirect(w, r, h.cfg.Prefix, http.StatusMovedPermanently)
			return
		}
		http.NotFound(w, r)
		return
	}
	if strings.HasPrefix(rest, TraceViewerPath) {
		h.serveViewer(w, r)
		return
	}
	if rest == "" {
		h.serveList(w, r)
		return
	}
	slug, file, _ := strings.Cut(rest, "/")
	if !h.allowed(slug) {
		http.NotFound(w, r)
		return
	}
	if file == "" {
		if !strings.HasSuffix(r.URL.Path, "/") {
			http.Redirect(w, r, h.cfg.Prefix+slug+"/", http.StatusMovedPermanently)
			return
		}
		h.servePage(w, r, slug)
		return
	}
	h.serveFile(w, r, slug, file)
}

func (h *Handler) serveList(w http.ResponseWriter, r *http.Request) {
	slugs, err := ListContracts(h.cfg.Root)
	if err != nil && !os.IsNotExist(err) {
		http.Error(w, "proof store unreadable: "+err.Error(), http.StatusInternalServerError)
		return
	}
	var shown []string
	for _, s := range slugs {
		if h.allowed(s) {
			shown = append(shown, s)
		}
	}
	var buf bytes.Buffer
	if err := RenderList(&buf, h.cfg.Root, shown, h.cfg.IndexURL); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeHTML(w, buf.Bytes())
}

func (h *Handler) servePage(w http.ResponseWriter, r *http.Request, slug string) {
	p, err := Build(h.cfg.Root, slug, h.cfg.Options)
	if errors.Is(err, proofstore.ErrSymlinkedFolder) {
		http.Error(w, "refused: "+slug+": "+proofstore.ErrSymlinkedFolder.Error(), http.StatusForbidden)
		return
	}
	if err != nil {
		http.Error(w, "no proof for "+slug, http.StatusNotFound)
		return
	}
	links := Links{Index: h.cfg.Prefix}
	if h.viewer != nil {
		if origin, ok := loopbackOrigin(r); ok {
			links.TraceViewer = h.cfg.Prefix + TraceViewerPath + "index.html"
			links.Origin = origin
			links.FileBase = h.cfg.Prefix + slug + "/"
		}
	}
	var buf bytes.Buffer
	if err := RenderPage(&buf, p, links); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeHTML(w, buf.Bytes())
}

// loopbackOrigin is the origin the trace viewer fetches traces from. Only a loopback Host is
// used, so a page fetched through some other name never points the viewer elsewhere.
func loopbackOrigin(r *http.Request) (string, bool) {
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return "", false
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host, true
}

func writeHTML(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", pageCSP)
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(body)
}

// serveFile serves a file a page links: <attempt-n>/<try-m>/<name>, base/<name>, or <name>
// for a loose verification folder. Nothing else, no directory listings, no hidden files.
func (h *Handler) serveFile(w http.ResponseWriter, r *http.Request, slug, rel string) {
	parts := strings.Split(rel, "/")
	ok := false
	switch len(parts) {
	case 1:
		ok = fileNameRe.MatchString(parts[0])
	case 2:
		ok = parts[0] == proofstore.BaseDir && fileNameRe.MatchString(parts[1])
	case 3:
		_, _, ok = proofstore.ParseTryDir(path.Join(parts[0], parts[1]))
		ok = ok && fileNameRe.MatchString(parts[2])
	}
	if !ok {
		http.NotFound(w, r)
		return
	}
	dir := filepath.Join(h.cfg.Root, slug)
	if proofstore.NotSymlink(dir) != nil {
		http.NotFound(w, r)
		return
	}
	f, err := proofstore.OpenContained(dir, filepath.FromSlash(rel))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		http.NotFound(w, r)
		return
	}
	ct := "application/octet-stream"
	switch path.Ext(rel) {
	case ".png":
		ct = "image/png"
	case ".zip":
		ct = "application/zip"
	case ".json":
		ct = "application/json"
	case ".log", ".txt":
		ct = "text/plain; charset=utf-8"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Security-Policy", "default-src 'none'; sandbox")
	w.Header().Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, "", st.ModTime().Truncate(time.Second), f)
}

// serveViewer serves Playwright's trace viewer. Its DOM snapshots render in frames its
// service worker answers, so the listener's X-Frame-Options: DENY does not get in the way
// (checked in Chromium by the browser test, through web.Loopback).
func (h *Handler) serveViewer(w http.ResponseWriter, r *http.Request) {
	if h.viewer == nil {
		http.Error(w, "no trace viewer configured: run `go tool task browser:setup` and use `signoff proof serve`", http.StatusNotFound)
		return
	}
	h.viewer.ServeHTTP(w, r)
}
