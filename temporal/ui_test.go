package temporal_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/signoff/signoff/temporal"
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
	srv := temporaltest.StartServer(t, func(c *temporal.Config) { c.UIPort = temporal.AnyPort })
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
	srv := temporaltest.StartServer(t, func(c *temporal.Config) { c.UIPort, c.UIWriteActions = temporal.AnyPort, true })
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
