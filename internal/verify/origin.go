package verify

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/signoff/signoff/contracts"
)

// Origin pinning. What the verifier measures is the commit's page as served from the preview's
// origin: a page, frame or popup that navigates anywhere else is recorded (the criterion then
// fails with that URL as the observed value), and whatever else the page fetches from an origin
// that is neither the preview's nor one the contract allows is blocked and listed. Two layers
// hold this:
//
//   - every browser context routes every request through originGuard (Playwright's request
//     interception, which works the same for a local, a remote CDP and a Browserbase browser);
//   - a local browser's contexts also send all their traffic, loopback included, through
//     pinProxy, which connects only to the preview and the allowed origins. Interception does
//     not see WebSockets, WebRTC or what a service worker fetches; the proxy refuses them, so
//     page code cannot reach a listener on the verifier's host.

// offOriginPage is what a navigation away from the preview's origin gets instead of the page it
// asked for: the verifier never measures a foreign page.
const offOriginPage = `<!doctype html><html><head><meta charset="utf-8"><title>Left the preview</title></head>` +
	`<body><p>Signoff's verifier did not load this page: it is not on the preview's origin.</p></body></html>`

// maxBlockedListed bounds the blocked requests evidence lists.
const maxBlockedListed = 20

// originGuard watches one browser context.
type originGuard struct {
	preview string
	allowed map[string]bool
	// pace, when set, is told of each request let through, before it goes (pacer).
	pace *pacer

	mu      sync.Mutex
	left    string   // the first URL outside the origin a page or frame navigated to
	blocked []string // subresources refused, at most maxBlockedListed
	nBlock  int
}

func newOriginGuard(base *url.URL, allowed []string) *originGuard {
	// Every origin here is compared as Chromium writes it (contracts.Origin), so a preview
	// written with its default port or in capitals is the origin its pages report.
	g := &originGuard{preview: contracts.URLOrigin(base), allowed: map[string]bool{}}
	for _, o := range allowed {
		if o := contracts.Origin(o); o != "" {
			g.allowed[o] = true
		}
	}
	return g
}

// onOrigin reports whether a URL may be shown as the commit's page: the preview's origin, or a
// document without a network origin of its own (about:blank, srcdoc, data: and blob: documents
// made by the page).
func (g *originGuard) onOrigin(raw string) bool {
	switch {
	case raw == "" || raw == "about:blank" || raw == "about:srcdoc":
		return true
	case strings.HasPrefix(raw, "data:"):
		return true
	case strings.HasPrefix(raw, "blob:"):
		return contracts.Origin(strings.TrimPrefix(raw, "blob:")) == g.preview
	}
	return contracts.Origin(raw) == g.preview
}

// fetchable reports whether the page may load a subresource from a URL.
func (g *originGuard) fetchable(raw string) bool {
	if g.onOrigin(raw) {
		return true
	}
	return g.allowed[contracts.Origin(raw)]
}

func (g *originGuard) leave(raw string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.left == "" {
		g.left = clip(raw, 2000)
	}
}

func (g *originGuard) block(raw string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.nBlock++
	if len(g.blocked) < maxBlockedListed {
		g.blocked = append(g.blocked, clip(raw, 500))
	}
}

// leftURL is the first URL that left the origin, "" when none did.
func (g *originGuard) leftURL() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.left
}

// blockedList is what evidence lists of the refused requests.
func (g *originGuard) blockedList() []any {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]any, 0, len(g.blocked)+1)
	for _, b := range g.blocked {
		out = append(out, b)
	}
	if g.nBlock > len(g.blocked) {
		out = append(out, fmt.Sprintf("... and %d more", g.nBlock-len(g.blocked)))
	}
	return out
}

// install routes every request of the context through the guard and watches the pages it
// opens.
func (g *originGuard) install(bctx playwright.BrowserContext) error {
	if err := bctx.Route("**/*", g.route); err != nil {
		return fmt.Errorf("route requests: %w", err)
	}
	watch := func(p playwright.Page) { p.OnFrameNavigated(func(f playwright.Frame) { g.check(f.URL()) }) }
	// The page opened before install, and a popup: a page the person would be shown, which
	// on another origin is a page elsewhere. A popup's navigations go through route as well.
	for _, p := range bctx.Pages() {
		watch(p)
	}
	bctx.OnPage(watch)
	return nil
}

// check records a frame or page URL off the origin.
func (g *originGuard) check(raw string) {
	if !g.onOrigin(raw) && !strings.HasPrefix(raw, "chrome-error:") {
		g.leave(raw)
	}
}

// checkPage records the page's and every frame's URL that is off the origin.
func (g *originGuard) checkPage(p playwright.Page) {
	g.check(p.URL())
	for _, f := range p.Frames() {
		g.check(f.URL())
	}
}

func (g *originGuard) route(rt playwright.Route) {
	req := rt.Request()
	u := req.URL()
	if g.fetchable(u) {
		g.pace.request(u)
		_ = rt.Continue()
		return
	}
	if req.IsNavigationRequest() {
		// A page or frame going elsewhere: recorded, and shown a placeholder rather than
		// the foreign page (which may be built to pass).
		g.leave(u)
		_ = rt.Fulfill(playwright.RouteFulfillOptions{
			Status:      playwright.Int(200),
			ContentType: playwright.String("text/html; charset=utf-8"),
			Body:        offOriginPage,
		})
		return
	}
	g.block(u)
	_ = rt.Abort("blockedbyclient")
}

// pinProxy is an HTTP proxy that connects only to the preview's host and port and to the
// allowed origins. A local browser context sends everything through it, loopback included.
type pinProxy struct {
	ln    net.Listener
	srv   *http.Server
	guard *originGuard
	// user and pass are this proxy's credentials, given to its browser context only: any
	// other process on the host that finds the port is answered 407 and never counted as the
	// page's blocked requests.
	user, pass string
	allowed    map[string]bool // host:port
	rp         *httputil.ReverseProxy
	// tunnels are the CONNECT tunnels open now: hijacked connections the server no longer
	// tracks, closed with the proxy so none outlives its context.
	mu      sync.Mutex
	tunnels map[net.Conn]bool
}

// hostPort is a URL's host:port with the scheme's default port filled in.
func hostPort(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	if u.Port() != "" {
		return strings.ToLower(u.Host)
	}
	port := "80"
	if u.Scheme == "https" || u.Scheme == "wss" {
		port = "443"
	}
	return strings.ToLower(net.JoinHostPort(u.Hostname(), port))
}

func startPinProxy(g *originGuard) (*pinProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("origin proxy: %w", err)
	}
	cred := make([]byte, 16)
	if _, err := rand.Read(cred); err != nil {
		ln.Close()
		return nil, fmt.Errorf("origin proxy: %w", err)
	}
	p := &pinProxy{ln: ln, guard: g, allowed: map[string]bool{hostPort(g.preview): true}, tunnels: map[net.Conn]bool{},
		user: hex.EncodeToString(cred[:8]), pass: hex.EncodeToString(cred[8:])}
	for o := range g.allowed {
		p.allowed[hostPort(o)] = true
	}
	tr := &http.Transport{Proxy: nil, DialContext: (&net.Dialer{Timeout: 10 * time.Second}).DialContext, MaxIdleConnsPerHost: 8}
	p.rp = &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.Out.URL = r.In.URL; r.Out.Host = r.In.Host },
		Transport: tr,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			http.Error(w, "preview unreachable", http.StatusBadGateway)
		},
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// server is the proxy's address for Playwright.
func (p *pinProxy) server() string { return "http://" + p.ln.Addr().String() }

// authorized says whether a request carries this proxy's credentials.
func (p *pinProxy) authorized(r *http.Request) bool {
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte(p.user+":"+p.pass))
	return subtle.ConstantTimeCompare([]byte(r.Header.Get("Proxy-Authorization")), []byte(want)) == 1
}

func (p *pinProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !p.authorized(r) {
		w.Header().Set("Proxy-Authenticate", `Basic realm="signoff-verifier"`)
		http.Error(w, "proxy credentials required", http.StatusProxyAuthRequired)
		return
	}
	if r.Method == http.MethodConnect {
		target := strings.ToLower(r.Host)
		if _, _, err := net.SplitHostPort(target); err != nil || !p.allowed[target] {
			p.guard.block("connect://" + r.Host)
			http.Error(w, "not the preview", http.StatusForbidden)
			return
		}
		// A tunnel is how the page's WebSockets (and its https requests) reach the server:
		// the pacer holds the ones opened at a person's pass, as it holds routed requests.
		p.guard.pace.request("connect://" + r.Host)
		p.tunnel(w, r, target)
		return
	}
	if !r.URL.IsAbs() || !p.allowed[hostPort(r.URL.String())] || (r.URL.Scheme != "http" && r.URL.Scheme != "ws") {
		p.guard.block(r.URL.String())
		http.Error(w, "not the preview", http.StatusForbidden)
		return
	}
	if r.URL.Scheme == "ws" {
		p.guard.pace.request(r.URL.String()) // a WebSocket the route does not see (CONNECT above)
	}
	r.RequestURI = ""
	p.rp.ServeHTTP(w, r)
}

func (p *pinProxy) tunnel(w http.ResponseWriter, r *http.Request, target string) {
	up, err := net.DialTimeout("tcp", target, 10*time.Second)
	if err != nil {
		http.Error(w, "preview unreachable", http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "no tunnel", http.StatusInternalServerError)
		return
	}
	down, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	_, _ = down.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n"))
	if n := buf.Reader.Buffered(); n > 0 {
		b, _ := buf.Reader.Peek(n)
		_, _ = up.Write(b)
	}
	p.mu.Lock()
	p.tunnels[up], p.tunnels[down] = true, true
	p.mu.Unlock()
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if c, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = c.CloseWrite()
		} else {
			_ = dst.Close()
		}
	}
	go pipe(up, down)
	go pipe(down, up)
}

// close stops the proxy and every tunnel through it.
func (p *pinProxy) close() {
	_ = p.srv.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.tunnels {
		_ = c.Close()
	}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
