package e2e_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/temporal/temporaltest"
	"github.com/signoff/signoff/workers"
	"github.com/signoff/signoff/workers/devstack"
)

// hostStatus is the status of GET rawURL sent with Host host ("" keeps the URL's).
func hostStatus(t *testing.T, method, rawURL, host string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(temporaltest.Context(t), method, rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	// A redirect is an answer here, not something to follow.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// Every listener of `signoff dev` refuses a foreign Host (DNS rebinding) and answers its own
// address and localhost: the loopback one (contract index, checkout, proof pages, chat info)
// and the public one (webhooks, the chat endpoint), which also answers the chat endpoint's
// configured public host.
func TestDevListenersRefuseForeignHosts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the embedded Temporal server: not in the unit tier")
	}
	srv := temporaltest.StartServer(t)
	st, err := devstack.Start(temporaltest.Context(t), devstack.Options{DataDir: t.TempDir(), Dial: srv.DialConfig(),
		Control: true, Log: &temporaltest.LogBuffer{},
		Chat:        devstack.ChatOptions{Endpoint: "https://agent.example.org/submit"},
		BuildVerify: func(workers.Config) (*activities.Verify, func(), error) { return &activities.Verify{}, func() {}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)

	for name, base := range map[string]string{"loopback": st.LoopbackURL, "public": st.PublicURL} {
		u, _ := url.Parse(base)
		if code := hostStatus(t, http.MethodGet, base+"/healthz", "evil.example:"+u.Port()); code != http.StatusMisdirectedRequest {
			t.Errorf("%s listener, foreign Host: %d, want 421", name, code)
		}
		for _, host := range []string{"", "localhost:" + u.Port()} {
			if code := hostStatus(t, http.MethodGet, base+"/healthz", host); code != http.StatusOK {
				t.Errorf("%s listener, Host %q: %d, want 200", name, host, code)
			}
		}
	}
	u, _ := url.Parse(st.LoopbackURL)
	if code := hostStatus(t, http.MethodGet, st.LoopbackURL+"/", "rebind.example:"+u.Port()); code != http.StatusMisdirectedRequest {
		t.Errorf("contract index, foreign Host: %d, want 421", code)
	}
	if code := hostStatus(t, http.MethodGet, st.LoopbackURL+"/", ""); code != http.StatusOK {
		t.Errorf("contract index: %d, want 200", code)
	}
	// The chat endpoint: refused under a foreign name, reached under the configured public one
	// (an empty POST then fails on content, not on Host).
	if code := hostStatus(t, http.MethodPost, st.PublicURL+"/submit", "evil.example"); code != http.StatusMisdirectedRequest {
		t.Errorf("chat endpoint, foreign Host: %d, want 421", code)
	}
	if code := hostStatus(t, http.MethodPost, st.PublicURL+"/submit", "agent.example.org"); code == http.StatusMisdirectedRequest {
		t.Errorf("chat endpoint, its public Host: %d", code)
	}
}
