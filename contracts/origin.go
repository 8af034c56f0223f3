package contracts

import (
	"net/url"
	"strconv"
	"strings"
)

// Origin is a URL's origin as a browser writes it: scheme://host[:port], lowercased, the port
// in decimal and left out when it is the scheme's default; "" when the URL has none. A preview
// given as https://host:443 is then the origin its pages report (https://host), not another:
// evidence, its reads and the verifier compare origins only in this form.
func Origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return URLOrigin(u)
}

// URLOrigin is Origin of a URL already parsed.
func URLOrigin(u *url.URL) string {
	if u.Host == "" {
		return ""
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]" // IPv6
	}
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			return ""
		}
		if n != defaultPorts[scheme] {
			host += ":" + strconv.FormatUint(n, 10)
		}
	}
	return scheme + "://" + host
}

// defaultPorts are the ports an origin leaves out, by scheme.
var defaultPorts = map[string]uint64{"http": 80, "https": 443, "ws": 80, "wss": 443}
