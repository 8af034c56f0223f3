package sandbox

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Forward reaches a server on the sandbox's 127.0.0.1:PORT; nothing else inside
// (another port, a 0.0.0.0 listener) is reachable from the host; stop ends it.
func TestForwardIsTheOnlyWayIn(t *testing.T) {
	for _, mode := range []Network{NetNone, NetEgress} {
		t.Run(mode.String(), func(t *testing.T) {
			s := probeSpec(t, "serve", "127.0.0.1:0", "127.0.0.1:0", "0.0.0.0:0")
			s.Net = mode
			tok := envValue(s.Env, "SANDBOX_TOKEN")
			l := startLive(t, testCtx(t), s)
			ports := []string{l.expect(t, "port "), l.expect(t, "port "), l.expect(t, "port ")}
			for i := range ports {
				ports[i] = strings.TrimPrefix(ports[i], "port ")
			}
			l.expect(t, "ready")
			port, err := strconv.Atoi(ports[0])
			if err != nil {
				t.Fatal(err)
			}
			addr, stop, err := l.p.Forward(port)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(addr, "127.0.0.1:") {
				t.Errorf("forward listens on %s, want host loopback only", addr)
			}
			client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
			if body := get(t, client, "http://"+addr+"/"); body != tok {
				t.Fatalf("via the forward: %q, want the token", body)
			}
			// Nothing else: the other ports are not on the host (whatever answers
			// there, if anything, is not the sandbox), nor is slirp's guest address.
			for _, a := range []string{"127.0.0.1:" + ports[1], "127.0.0.1:" + ports[2], "10.0.2.100:" + ports[2]} {
				if body := get(t, client, "http://"+a+"/"); body == tok {
					t.Errorf("host reached the sandbox at %s without a forward", a)
				}
			}
			// Control: DialContext does reach the second port from inside.
			ctx, cancel := context.WithTimeout(testCtx(t), 10*time.Second)
			defer cancel()
			c, err := l.p.DialContext(ctx, "tcp", "127.0.0.1:"+ports[1])
			if err != nil {
				t.Fatalf("DialContext to the second port: %v", err)
			}
			c.Close()
			if _, err := l.p.DialContext(ctx, "tcp", "localhost:"+ports[1]); err == nil {
				t.Error("DialContext resolved a name (on a host-namespace thread)")
			}
			stop()
			if body := get(t, client, "http://"+addr+"/"); body == tok {
				t.Error("forward still answers after stop")
			}
			l.stdin.Close()
			if err := l.p.Wait(); err != nil {
				t.Errorf("Wait: %v", err)
			}
			if _, err := l.p.DialContext(ctx, "tcp", "127.0.0.1:"+ports[1]); err == nil {
				t.Error("DialContext after Wait succeeded")
			}
		})
	}
}

// get returns the body, or "" when nothing answers.
func get(t *testing.T, c *http.Client, url string) string {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
