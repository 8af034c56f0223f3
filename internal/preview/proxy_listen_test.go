package preview

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// A preview's URL names the advertised host and the port the proxy listens on; this host
// still reaches the proxy through where it listens.
func TestProxyAdvertisesItsHost(t *testing.T) {
	app := httptest.NewServer(http.NotFoundHandler())
	defer app.Close()
	px, err := startProxy(strings.TrimPrefix(app.URL, "http://"), strings.Repeat("a", 40), "127.0.0.1", "preview-1.internal", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	_, port, _ := net.SplitHostPort(px.ln.Addr().String())
	if want := "http://preview-1.internal:" + port; px.URL() != want {
		t.Fatalf("URL() = %q, want %q", px.URL(), want)
	}
	resp, err := http.Get(px.localURL() + VerificationPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body verificationBody
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.CommitSHA != strings.Repeat("a", 40) {
		t.Fatalf("through localURL: %+v, %v", body, err)
	}
}

// With a first port, previews take the first free port of the range, and none outside it.
func TestProxyStaysInItsPortRange(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	first := busy.Addr().(*net.TCPAddr).Port
	if first+PortSpan > 65535 {
		t.Skip("the kernel gave a port too near the top to hold a range")
	}
	px, err := startProxy("127.0.0.1:1", strings.Repeat("b", 40), "127.0.0.1", "127.0.0.1", first)
	if err != nil {
		// Another process may hold every port of the range; that is not this code's fault,
		// but the error must name the range.
		if !strings.Contains(err.Error(), strconv.Itoa(first)+"-") {
			t.Fatalf("error does not name the range: %v", err)
		}
		t.Skipf("range busy: %v", err)
	}
	defer px.Close()
	got := px.ln.Addr().(*net.TCPAddr).Port
	if got <= first || got >= first+PortSpan {
		t.Fatalf("proxy on port %d; want one in %d-%d other than the busy %d", got, first+1, first+PortSpan-1, first)
	}
}

func TestCheckHost(t *testing.T) {
	for _, ok := range []string{"127.0.0.1", "10.0.3.2", "::1", "verify-lan", "preview.example.com"} {
		if err := CheckHost(ok); err != nil {
			t.Errorf("CheckHost(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "host:8080", "http://host", "host/path", "-lead", "a..b", "[::1]", "a b"} {
		if err := CheckHost(bad); err == nil {
			t.Errorf("CheckHost(%q) accepted", bad)
		}
	}
}
