package embedded_test

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/signoff/signoff/temporal/embedded"
	"github.com/signoff/signoff/temporal/temporaltest"
)

// uiRequest sends one request to the UI with the given Host (empty: the URL's).
func uiRequest(t *testing.T, method, rawURL, host string, header http.Header) int {
	t.Helper()
	req, err := http.NewRequestWithContext(temporaltest.Context(t), method, rawURL, strings.NewReader(`{"input":null}`))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if host != "" {
		req.Host = host
	}
	res, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

var noFollow = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// The embedded Web UI, in its default configuration, refuses a foreign Host (DNS rebinding)
// and every state-changing request, even one carrying an Authorization header (which makes
// the ui-server skip its CSRF check); the workflow it aimed at receives no signal.
func TestWebUIDefaultIsReadOnlyAndChecksHost(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the embedded Temporal server: not in the unit tier")
	}
	srv := temporaltest.StartServer(t, func(c *embedded.Config) { c.UIPort = embedded.AnyPort })
	if srv.UIOpenURL() != srv.UIURL() {
		t.Fatalf("a read-only UI hands out a token URL: %s", srv.UIOpenURL())
	}
	u, _ := url.Parse(srv.UIURL())
	if code := uiRequest(t, http.MethodGet, srv.UIURL()+"/", "evil.example:"+u.Port(), nil); code != http.StatusMisdirectedRequest {
		t.Fatalf("GET with a foreign Host: %d, want 421", code)
	}
	if code := uiRequest(t, http.MethodGet, srv.UIURL()+"/", "localhost:"+u.Port(), nil); code != http.StatusOK {
		t.Fatalf("GET with Host localhost: %d, want 200", code)
	}

	c := temporaltest.Dial(t, srv)
	run, err := c.ExecuteWorkflow(temporaltest.Context(t), client.StartWorkflowOptions{ID: "ui-signal-1", TaskQueue: "nobody"}, greetWorkflow, "x")
	if err != nil {
		t.Fatal(err)
	}
	signal := srv.UIURL() + "/api/v1/namespaces/" + srv.Namespace() + "/workflows/ui-signal-1/signal/approve"
	hdr := http.Header{"Authorization": {"Bearer anything"}, "Content-Type": {"application/json"}}
	if code := uiRequest(t, http.MethodPost, signal, "", hdr); code < 400 {
		t.Fatalf("POST signal with an Authorization header: %d, want a refusal", code)
	}
	if code := uiRequest(t, http.MethodPost, signal, "evil.example:"+u.Port(), hdr); code != http.StatusMisdirectedRequest {
		t.Fatalf("POST signal with a foreign Host: %d, want 421", code)
	}
	it := c.GetWorkflowHistory(temporaltest.Context(t), "ui-signal-1", run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED {
			t.Fatal("the workflow was signalled through the read-only UI")
		}
	}
}

// With write actions opted in, a state-changing request needs the per-process token's
// cookie; with it (after opening the token URL) the signal goes through.
func TestWebUIWriteActionsNeedTheToken(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the embedded Temporal server: not in the unit tier")
	}
	srv := temporaltest.StartServer(t, func(c *embedded.Config) { c.UIPort, c.UIWriteActions = embedded.AnyPort, true })
	open := srv.UIOpenURL()
	if !strings.Contains(open, "signoff_token=") {
		t.Fatalf("UIOpenURL %q carries no token", open)
	}
	c := temporaltest.Dial(t, srv)
	if _, err := c.ExecuteWorkflow(temporaltest.Context(t), client.StartWorkflowOptions{ID: "ui-signal-2", TaskQueue: "nobody"}, greetWorkflow, "x"); err != nil {
		t.Fatal(err)
	}
	signal := srv.UIURL() + "/api/v1/namespaces/" + srv.Namespace() + "/workflows/ui-signal-2/signal/approve"
	hdr := http.Header{"Authorization": {"Bearer anything"}, "Content-Type": {"application/json"}}
	if code := uiRequest(t, http.MethodPost, signal, "", hdr); code != http.StatusForbidden {
		t.Fatalf("POST signal without the token: %d, want 403", code)
	}
	req, _ := http.NewRequestWithContext(temporaltest.Context(t), http.MethodGet, open, nil)
	res, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	var cookie *http.Cookie
	for _, ck := range res.Cookies() {
		if ck.Name == "signoff_ui_token" {
			cookie = ck
		}
	}
	if res.StatusCode != http.StatusSeeOther || cookie == nil || cookie.SameSite != http.SameSiteStrictMode || !cookie.HttpOnly {
		t.Fatalf("token URL: %d, cookie %+v; want a redirect setting a strict, HttpOnly cookie", res.StatusCode, cookie)
	}
	hdr.Set("Cookie", cookie.Name+"="+cookie.Value)
	if code := uiRequest(t, http.MethodPost, signal, "", hdr); code == http.StatusForbidden || code == http.StatusMethodNotAllowed {
		t.Fatalf("POST signal with the token: %d, want it passed to the server", code)
	}
}

// The ui-server never listens: besides the front, no port this process opened answers the
// UI's API. (Its internal loopback port once let any local user, uid nobody included, reach
// the ui-server past the front's Host check and write token.)
func TestWebUIHasNoPortButTheFront(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the embedded Temporal server: not in the unit tier")
	}
	srv := temporaltest.StartServer(t, func(c *embedded.Config) { c.UIPort, c.UIWriteActions = embedded.AnyPort, true })
	front, err := url.Parse(srv.UIURL())
	if err != nil {
		t.Fatal(err)
	}
	ports := listeningPorts(t)
	if !slices.Contains(ports, front.Port()) {
		t.Fatalf("the UI front's port %s is not among this process's listeners %v", front.Port(), ports)
	}
	answered := 0
	for _, p := range ports {
		if p == front.Port() {
			continue
		}
		ctx, cancel := context.WithTimeout(temporaltest.Context(t), 5*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:"+p+"/api/v1/settings", nil)
		req.Header.Set("Authorization", "Bearer anything")
		res, err := noFollow.Do(req)
		cancel()
		if err != nil {
			continue // a gRPC port, not HTTP/1.1
		}
		res.Body.Close()
		answered++
		if res.StatusCode == http.StatusOK {
			t.Errorf("port %s answers the Web UI's API past the front", p)
		}
	}
	t.Logf("listeners: %v; front %s; other HTTP answers %d", ports, front.Port(), answered)
}

// listeningPorts are the TCP ports this process listens on (from /proc/net/tcp and tcp6,
// matched to the process's own socket inodes).
func listeningPorts(t *testing.T) []string {
	t.Helper()
	mine := map[string]bool{}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, fd := range fds {
		if l, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && strings.HasPrefix(l, "socket:[") {
			mine[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	var out []string
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" || !mine[f[9]] { // 0A: LISTEN
				continue
			}
			_, hexPort, _ := strings.Cut(f[1], ":")
			n, err := strconv.ParseUint(hexPort, 16, 16)
			if err == nil && !slices.Contains(out, strconv.FormatUint(n, 10)) {
				out = append(out, strconv.FormatUint(n, 10))
			}
		}
	}
	return out
}
