package sandbox

import (
	"bytes"
	"fmt"
	"net"
	"os/exec"
	"strings"
)

// slirpHost is slirp4netns's alias for the host; --disable-host-loopback already refuses
// it, and the deny rules name it again. slirpDNS is its DNS forwarder, the one address in a
// refused range the sandbox may reach (resolvConf names it), and only on port 53.
const (
	slirpHost = "10.0.2.2"
	slirpDNS  = "10.0.2.3"
)

// nonPublic are the ranges egress never reaches, whatever the host routes: this network,
// loopback, RFC 1918, CGNAT, link-local (cloud metadata at 169.254.169.254), multicast and
// reserved for IPv4; unspecified, loopback, IPv4-mapped, ULA, link-local and multicast for
// IPv6. On a cloud host the private ranges are its VPC. The documentation and benchmarking
// ranges are not here: some networks route them like public addresses.
var nonPublic = struct{ v4, v6 []string }{
	v4: []string{"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
		"192.0.0.0/24", "192.168.0.0/16", "224.0.0.0/4", "240.0.0.0/4"},
	v6: []string{"::/128", "::1/128", "::ffff:0:0/96", "fc00::/7", "fe80::/10", "ff00::/8"},
}

// denyHostRules is an nftables ruleset for the sandbox's network namespace: egress means
// public unicast addresses only. It rejects the non-public ranges and the host's own
// addresses (slirp4netns only stops 10.0.2.2 reaching the host's loopback, so a service
// bound to 0.0.0.0 would still answer on the host's external address). One rule per range:
// a host address inside a range would be a conflicting interval in one set.
func denyHostRules(addrs []net.IP) string {
	var b strings.Builder
	b.WriteString("table inet signoff_sandbox {\n\tchain output {\n\t\ttype filter hook output priority 0; policy accept;\n")
	b.WriteString("\t\toifname \"lo\" accept\n")
	fmt.Fprintf(&b, "\t\tip daddr %s udp dport 53 accept\n\t\tip daddr %s tcp dport 53 accept\n", slirpDNS, slirpDNS)
	rule := func(family, dst string) { fmt.Fprintf(&b, "\t\t%s daddr %s reject\n", family, dst) }
	rule("ip", slirpHost)
	for _, r := range nonPublic.v4 {
		rule("ip", r)
	}
	for _, r := range nonPublic.v6 {
		rule("ip6", r)
	}
	for _, ip := range addrs {
		switch {
		case ip.IsLoopback():
			// The namespace's own loopback, not the host's (and in the ranges anyway).
		case ip.To4() != nil:
			rule("ip", ip.String())
		default:
			rule("ip6", ip.String())
		}
	}
	b.WriteString("\t}\n}\n")
	return b.String()
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
