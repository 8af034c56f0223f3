package sandbox

import (
	"bytes"
	"fmt"
	"net"
	"os/exec"
	"strings"
)

// slirpHost is slirp4netns's alias for the host; --disable-host-loopback already refuses
// it, and the deny rules name it again.
const slirpHost = "10.0.2.2"

// denyHostRules is an nftables ruleset for the sandbox's network namespace that rejects
// traffic to the host's own addresses and to link-local ones (cloud metadata services):
// slirp4netns only stops 10.0.2.2 reaching the host's loopback, so a service bound to
// 0.0.0.0 would still answer on the host's external address.
func denyHostRules(addrs []net.IP) string {
	var v4, v6 []string
	v4 = append(v4, slirpHost, "169.254.0.0/16")
	v6 = append(v6, "fe80::/10")
	for _, ip := range addrs {
		switch {
		case ip.IsLoopback():
			// The namespace's own loopback, not the host's.
		case ip.To4() != nil:
			v4 = append(v4, ip.String())
		default:
			v6 = append(v6, ip.String())
		}
	}
	return fmt.Sprintf(`table inet signoff_sandbox {
	chain output {
		type filter hook output priority 0; policy accept;
		oifname "lo" accept
		ip daddr { %s } reject
		ip6 daddr { %s } reject
	}
}
`, strings.Join(v4, ", "), strings.Join(v6, ", "))
}

// hostAddrs are this host's interface addresses, read in the host's namespace.
func hostAddrs() ([]net.IP, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("sandbox: the host's addresses: %w", err)
	}
	var ips []net.IP
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			ips = append(ips, n.IP)
		}
	}
	return ips, nil
}

// denyHost loads denyHostRules into the sandbox's network namespace before its command
// runs. nft is forked from a thread inside that namespace, as the worker, which holds
// CAP_NET_ADMIN over the sandbox's user namespace.
func (p *Process) denyHost(nft string) error {
	ips, err := hostAddrs()
	if err != nil {
		return err
	}
	rules := denyHostRules(ips)
	return p.inNetns(func() error {
		cmd := exec.Command(nft, "-f", "-")
		cmd.Env = []string{}
		cmd.Dir = "/"
		cmd.Stdin = strings.NewReader(rules)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("sandbox: loading the host deny rules with %s: %w: %s", nft, err, strings.TrimSpace(out.String()))
		}
		return nil
	})
}
