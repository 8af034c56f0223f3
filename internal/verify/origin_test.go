package verify

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/hostiletest"
	"github.com/signoff/signoff/internal/sitetest"
)

// TestOriginCanary: page code in the verifier's browser cannot reach a listener on the
// verifier's host by any of the ways a page opens connections, while its own origin answers
// through the same browser; what was refused is listed in the evidence.
func TestOriginCanary(t *testing.T) {
	v := testVerifier(t)
	p, hits := hostiletest.Service(t)
	port := strconv.Itoa(p)
	addr := "127.0.0.1:" + port
	targets := []string{"http://" + addr, "http://localhost:" + port, "http://0.0.0.0:" + port, "http://[::1]:" + port}
	var probes []string
	for i, u := range targets {
		probes = append(probes,
			fmt.Sprintf(`fetch(%q + '/f%d').catch(() => {});`, u, i),
			fmt.Sprintf(`new Image().src = %q + '/i%d';`, u, i),
			fmt.Sprintf(`try { new WebSocket(%q + '/w%d'); } catch (e) {}`, strings.Replace(u, "http", "ws", 1), i),
			fmt.Sprintf(`try { new EventSource(%q + '/e%d'); } catch (e) {}`, u, i),
			fmt.Sprintf(`navigator.sendBeacon(%q + '/b%d', 'x');`, u, i),
			fmt.Sprintf(`document.body.insertAdjacentHTML('beforeend', '<link rel="stylesheet" href="%s/s%d"><video src="%s/v%d"></video>');`, u, i, u, i),
		)
	}
	probes = append(probes, `try { const pc = new RTCPeerConnection({iceServers: [{urls: 'stun:127.0.0.1:`+port+`'}]}); pc.createDataChannel('x'); pc.createOffer().then((o) => pc.setLocalDescription(o)); } catch (e) {}`)
	html := page(``, `<p id="own">waiting</p><script>`+strings.Join(probes, "\n")+`
		fetch('/api/own').then((r) => r.text()).then((s) => { document.getElementById('own').textContent = s; });
		const w = new Worker(URL.createObjectURL(new Blob(["fetch('http://`+addr+`/worker').catch(() => {}); new WebSocket('ws://`+addr+`/ww');"])));</script>`)
	base := site(t, testSHA, map[string]string{"/reach": html}, map[string]http.HandlerFunc{
		"/api/own": func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "own origin answered") },
	}).URL
	c := crit("reach", "/reach", contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{"own origin answered"}})
	ev := verify(t, v, request(t, base, c))
	r := wantStatus(t, ev, "reach", contracts.StatusPass)
	if n := hits(); n != 0 {
		t.Errorf("the canary on %s was reached %d times from the verifier's browser", addr, n)
	}
	blocked, _ := r.Observed["390x844/"+contracts.ObsBlocked].([]any)
	if len(blocked) == 0 {
		t.Errorf("evidence lists no blocked request: %v", r.Observed)
	}
	if left := r.Observed["390x844/"+contracts.ObsLeftOrigin]; left != "" {
		t.Errorf("left_origin = %v, want \"\" (only subresources were refused; the page and its frames stayed)", left)
	}
	t.Logf("blocked: %v", blocked)
}

// TestPinProxyAnswersOnlyItsBrowser: another process on the host that finds the origin
// proxy's port is answered 407 and leaves nothing in the page's evidence; with the context's
// credentials an off-origin request is refused and listed.
func TestPinProxyAnswersOnlyItsBrowser(t *testing.T) {
	base, _ := url.Parse("http://127.0.0.1:1/")
	g := newOriginGuard(base, nil)
	px, err := startPinProxy(g)
	if err != nil {
		t.Fatal(err)
	}
	defer px.close()
	proxyURL, _ := url.Parse(px.server())
	get := func(withCreds bool, target string) int {
		t.Helper()
		pu := *proxyURL
		if withCreds {
			pu.User = url.UserPassword(px.user, px.pass)
		}
		c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&pu)}}
		resp, err := c.Get(target)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(false, "http://elsewhere.test/x"); code != http.StatusProxyAuthRequired {
		t.Errorf("no credentials: %d, want 407", code)
	}
	if b := g.blockedList(); len(b) != 0 {
		t.Errorf("a stranger's request is in the page's blocked list: %v", b)
	}
	if code := get(true, "http://elsewhere.test/x"); code != http.StatusForbidden {
		t.Errorf("the browser's off-origin request: %d, want 403", code)
	}
	if b := g.blockedList(); len(b) != 1 || b[0] != "http://elsewhere.test/x" {
		t.Errorf("blocked list %v, want the browser's off-origin request", b)
	}
}

// TestOriginsCompareAsTheBrowserWritesThem: a preview or an allowed origin written with its
// scheme's default port, or in capitals, is the origin Chromium reports for its pages (which
// leaves the default port out), so the page's own requests are not taken for off-origin ones.
func TestOriginsCompareAsTheBrowserWritesThem(t *testing.T) {
	base, _ := url.Parse("HTTPS://Preview.Example.TEST:443/app")
	g := newOriginGuard(base, []string{"https://cdn.example.test:443", "https://fonts.example.test:8443"})
	for raw, want := range map[string]bool{
		"https://preview.example.test/watchlist":      true,
		"https://preview.example.test:443/watchlist":  true,
		"blob:https://preview.example.test/1234-5678": true,
		"http://preview.example.test/watchlist":       false,
		"https://preview.example.test:8443/watchlist": false,
		"https://preview.example.test:0443/":          true, // the port as a number
		"https://preview.example.test:99999/":         false,
	} {
		if got := g.onOrigin(raw); got != want {
			t.Errorf("onOrigin(%s) = %v, want %v", raw, got, want)
		}
	}
	for raw, want := range map[string]bool{
		"https://cdn.example.test/lib.js":        true,
		"http://cdn.example.test/lib.js":         false,
		"https://fonts.example.test:8443/a.woff": true,
		"https://fonts.example.test/a.woff":      false,
	} {
		if got := g.fetchable(raw); got != want {
			t.Errorf("fetchable(%s) = %v, want %v", raw, got, want)
		}
	}
	px, err := startPinProxy(g)
	if err != nil {
		t.Fatal(err)
	}
	defer px.close()
	for _, hp := range []string{"preview.example.test:443", "cdn.example.test:443", "fonts.example.test:8443"} {
		if !px.allowed[hp] {
			t.Errorf("the proxy does not let the browser reach %s (allowed: %v)", hp, px.allowed)
		}
	}
}

// TestRequestsAndPathsOnADefaultPort: a url assertion reads the path, and a request assertion
// counts the request, of a page on a preview written with its default port.
func TestRequestsAndPathsOnADefaultPort(t *testing.T) {
	base, _ := url.Parse("https://preview.example.test:443")
	if got := pagePath(base, "https://preview.example.test/watchlist?tab=2"); got != "/watchlist?tab=2" {
		t.Errorf("pagePath on the preview's origin = %q, want the path", got)
	}
	if got := pagePath(base, "https://elsewhere.example.test/watchlist"); got != "https://elsewhere.example.test/watchlist" {
		t.Errorf("pagePath off the origin = %q, want the whole URL", got)
	}
	l := newRequestLog(base, true)
	if l.origin != "https://preview.example.test" {
		t.Errorf("request log origin %q", l.origin)
	}
}

// TestPreviewOnItsDefaultPort: a preview given with its scheme's default port
// (http://host:80) is verified like any other. Chromium reports its pages without the port;
// before origins were compared as Chromium writes them, the page's own requests were blocked
// as off-origin, its seed never written and its path read as a foreign URL.
func TestPreviewOnItsDefaultPort(t *testing.T) {
	v := testVerifier(t)
	pages := map[string]string{
		"/links":   page(``, `<a id="pricing" href="/pricing?plan=pro">Pricing</a>`),
		"/pricing": page(``, `<main>Prices</main>`),
		"/search": page(`<script src="/app.js"></script>`, `<input id="q"><p id="out"></p><p id="seen"></p><script>
			document.getElementById('seen').textContent = 'theme ' + localStorage.getItem('theme') + ' ' + (window.appLoaded ? 'script loaded' : 'no script');
			document.getElementById('q').addEventListener('keydown', (e) => {
				if (e.key !== 'Enter') return;
				fetch('/api/search?q=' + encodeURIComponent(e.target.value)).then((r) => r.json()).then((j) => {
					document.getElementById('out').textContent = 'results for ' + j.q; });
			});</script>`),
	}
	extra := map[string]http.HandlerFunc{
		"/app.js": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprint(w, `window.appLoaded = true;`)
		},
		"/api/search": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"q":%q}`, r.URL.Query().Get("q"))
		},
	}
	srv := sitetest.Serve(t, testSHA, pages, extra) // the same site, to serve on port 80 as well
	var ln net.Listener
	var err error
	for i := 0; i < 20 && ln == nil; i++ {
		// A loopback address of its own: port 80 on 127.0.0.1 may be another program's.
		addr := fmt.Sprintf("127.%d.%d.%d:80", 10+rand.IntN(200), rand.IntN(250), 1+rand.IntN(250))
		ln, err = net.Listen("tcp", addr)
		if errors.Is(err, syscall.EACCES) {
			t.Skipf("cannot listen on port 80 here: %v", err)
		}
	}
	if ln == nil {
		t.Fatalf("no loopback address with port 80 free: %v", err)
	}
	front := &http.Server{Handler: srv.Config.Handler, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = front.Serve(ln) }()
	t.Cleanup(func() { _ = front.Close() })
	base := "http://" + ln.Addr().String() // with :80

	str := func(s string) json.RawMessage { b, _ := json.Marshal(s); return b }
	toPricing := crit("url-on-80", "/links", contracts.Assertion{Kind: contracts.KindURL, Operator: contracts.OpEQ, Expected: str("/pricing?plan=pro")})
	toPricing.Actions = []contracts.Action{{Type: contracts.ActionClick, Selector: "#pricing"}}
	search := crit("request-on-80", "/search", contracts.Assertion{Kind: contracts.KindRequest, Method: "GET", Path: "/api/search"})
	search.Actions = []contracts.Action{{Type: contracts.ActionFill, Selector: "#q", Value: "nvda"}, {Type: contracts.ActionPress, Selector: "#q", Key: "Enter"}}
	seeded := crit("seeded-on-80", "/search", contracts.Assertion{Kind: contracts.KindVisibleText, Texts: []string{"theme dark script loaded"}})
	seeded.Seed = &contracts.Seed{LocalStorage: map[string]json.RawMessage{"theme": json.RawMessage(`"dark"`)}}
	ev := verify(t, v, request(t, base, toPricing, search, seeded))
	for _, id := range []string{"url-on-80", "request-on-80", "seeded-on-80"} {
		wantStatus(t, ev, id, contracts.StatusPass)
		r := result(t, ev, id)
		if left := r.Observed["390x844/"+contracts.ObsLeftOrigin]; left != "" {
			t.Errorf("%s: the page left the origin for %v", id, left)
		}
	}
}

// TestRequestLogSkipsWhatLoadingMade: Playwright may report a request the page's script made
// while it loaded only after the log is armed (it reports a request when the routes hold it).
// Such a report is not the input's; a report of the same request made after the input is,
// and so is a worker's request the page's session never heard.
func TestRequestLogSkipsWhatLoadingMade(t *testing.T) {
	base, _ := url.Parse("http://127.0.0.1:3000/")
	const quotes = "http://127.0.0.1:3000/api/quotes"
	l := newRequestLog(base, false)
	l.issued("GET", quotes)                        // the page's load fetch, heard from the renderer
	l.issued("GET", "http://127.0.0.1:3000/a.css") // reported before arming: not owed
	l.reported("GET", "http://127.0.0.1:3000/a.css")
	l.reported("GET", "http://127.0.0.1:3000/worker-only") // a worker's, never heard
	l.issued("GET", "https://elsewhere.test/api/quotes")   // another origin: not the log's
	l.arm()
	if n := l.count("GET", "/api/quotes"); n != 0 {
		t.Fatalf("before any report: %d", n)
	}
	l.reported("GET", quotes) // the load fetch, reported late
	if n := l.count("GET", "/api/quotes"); n != 0 {
		t.Errorf("the load fetch reported after arming counted: %d", n)
	}
	l.reported("GET", quotes) // the click's
	l.reported("GET", "http://127.0.0.1:3000/a.css")
	l.reported("GET", "http://127.0.0.1:3000/worker-only")
	l.issued("GET", quotes) // heard after arming: changes nothing
	for path, want := range map[string]int{"/api/quotes": 1, "/a.css": 1, "/worker-only": 1, "/api/*": 1} {
		if n := l.count("GET", path); n != want {
			t.Errorf("count %s = %d, want %d", path, n, want)
		}
	}
}
