// Package hostcheck refuses HTTP requests whose Host header is not a name the listener is
// meant to be reached by. A loopback port is reachable from any web page through DNS
// rebinding (a name the attacker controls that resolves to 127.0.0.1), and the browser then
// sends that name as Host; checking Host is what tells the two apart.
package hostcheck

import (
	"net"
	"net/http"
	"strconv"
	"strings"
)

// Allowed is the set of Host values one listener answers.
type Allowed struct {
	hosts map[string]bool // lower-case host[:port] values accepted as they are
	names map[string]bool // lower-case host names accepted on any port (advertised names)
	// anyIPPort, for a listener bound to all interfaces, accepts an IP literal on this port:
	// it is reached by whatever address the machine has, and a rebinding page always sends a
	// DNS name, never an address.
	anyIPPort string
}

// For allows the listener's own address (e.g. 127.0.0.1:8233 or [::1]:8233; any IP address
// on its port when it is bound to all interfaces), localhost on the same port, and each
// advertised name: "host:port" exactly, or a bare "host" on any port
// (a public name behind a proxy arrives with the proxy's port or none).
func For(addr net.Addr, advertised ...string) *Allowed {
	a := &Allowed{hosts: map[string]bool{}, names: map[string]bool{}}
	if tcp, ok := addr.(*net.TCPAddr); ok {
		port := strconv.Itoa(tcp.Port)
		a.hosts[strings.ToLower(net.JoinHostPort(tcp.IP.String(), port))] = true
		a.hosts["localhost:"+port] = true
		if tcp.IP.IsUnspecified() {
			a.anyIPPort = port
		}
	}
	for _, n := range advertised {
		n = strings.ToLower(strings.TrimSpace(n))
		switch {
		case n == "":
		case strings.Contains(strings.TrimPrefix(n, "["), ":") && !strings.HasSuffix(n, "]"):
			a.hosts[n] = true
		default:
			a.names[strings.Trim(n, "[]")] = true
		}
	}
	return a
}

// OK reports whether a request's Host value is allowed.
func (a *Allowed) OK(host string) bool {
	host = strings.ToLower(host)
	if a.hosts[host] {
		return true
	}
	name, port := host, ""
	if h, p, err := net.SplitHostPort(host); err == nil {
		name, port = h, p
	}
	if a.anyIPPort != "" && port == a.anyIPPort && net.ParseIP(name) != nil {
		return true
	}
	return name != "" && a.names[strings.Trim(name, "[]")]
}

// Wrap answers 421 Misdirected Request to a request whose Host is not allowed, before h sees
// it, and passes every other request to h.
func (a *Allowed) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.OK(r.Host) {
			http.Error(w, "misdirected request: this listener does not answer to Host "+strconv.Quote(r.Host), http.StatusMisdirectedRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Wrap is For(addr, advertised...).Wrap(h).
func Wrap(h http.Handler, addr net.Addr, advertised ...string) http.Handler {
	return For(addr, advertised...).Wrap(h)
}
