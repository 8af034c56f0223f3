package verify

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/hostiletest"
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
