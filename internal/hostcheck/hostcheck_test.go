package hostcheck

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestHostValues(t *testing.T) {
	a := For(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8233}, "agent.example.org", "tunnel.example.net:8443")
	for host, want := range map[string]bool{
		"127.0.0.1:8233":          true,
		"LOCALHOST:8233":          true,
		"agent.example.org":       true,
		"agent.example.org:443":   true,
		"tunnel.example.net:8443": true,
		"tunnel.example.net":      false,
		"127.0.0.1:8234":          false,
		"localhost":               false,
		"evil.example":            false,
		"evil.example:8233":       false,
		"[::1]:8233":              false,
		"":                        false,
	} {
		if got := a.OK(host); got != want {
			t.Errorf("Host %q: allowed %v, want %v", host, got, want)
		}
	}
	all := For(&net.TCPAddr{IP: net.IPv4zero, Port: 8000})
	if !all.OK("192.0.2.7:8000") || !all.OK("[::1]:8000") || all.OK("192.0.2.7:8001") || all.OK("rebind.example:8000") {
		t.Error("a listener on all interfaces answers any IP address on its port, and no other name")
	}
	v6 := For(&net.TCPAddr{IP: net.IPv6loopback, Port: 9000})
	if !v6.OK("[::1]:9000") || v6.OK("127.0.0.1:9000") {
		t.Error("an IPv6 loopback listener answers exactly [::1] and localhost")
	}
}

func TestWrapRefusesAForeignHost(t *testing.T) {
	srv := httptest.NewServer(nil)
	defer srv.Close()
	srv.Config.Handler = Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }), srv.Listener.Addr())
	for host, want := range map[string]int{"evil.example": http.StatusMisdirectedRequest, srv.Listener.Addr().String(): http.StatusTeapot} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %q: %d, want %d", host, resp.StatusCode, want)
		}
	}
}
