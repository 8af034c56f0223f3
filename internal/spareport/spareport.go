// Package spareport chooses TCP ports for child processes that bind a port they are told.
//
// A port found free with a bind to port 0 comes from the kernel's ephemeral range, the same
// range every outgoing connection on the machine takes its local port from; between closing the
// probe and the child's bind, any connection may take it ("address already in use" on a busy
// test machine). Ports below that range are handed out by nobody but explicit choosers, so a
// child told one of them keeps it unless another chooser picks the same number at random.
// Within a process that chooser is never this package: a port it handed out recently is not
// handed out again, since the child it went to may not have bound it yet.
package spareport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// floor is the lowest port chosen: above the well-known and most registered service ports.
const floor = 20000

// defaultEphemeralLow is Linux's default first ephemeral port, used when /proc cannot say.
const defaultEphemeralLow = 32768

// recentSize is how many of the process's latest ports Pick does not hand out again. A test
// process asks for dozens; the range has about 12,000.
const recentSize = 1024

// recent holds the ports handed out last, oldest overwritten first (0: none yet).
var recent struct {
	sync.Mutex
	ring [recentSize]int
	next int
}

// Pick returns n distinct ports below the ephemeral range, each free on every address when
// chosen and none among the process's last recentSize. The probes stay bound until all n are
// chosen so none repeats.
func Pick(n int) ([]int, error) {
	hi := ephemeralLow()
	if hi <= floor+n+recentSize {
		return nil, fmt.Errorf("spareport: ephemeral range starts at %d, leaving no room above %d", hi, floor)
	}
	var held []net.Listener
	defer func() {
		for _, l := range held {
			_ = l.Close()
		}
	}()
	recent.Lock()
	defer recent.Unlock()
	var ports []int
	for tries := 0; len(ports) < n; tries++ {
		if tries > 200*n {
			return nil, fmt.Errorf("spareport: no free port in [%d, %d) after %d tries", floor, hi, tries)
		}
		p := floor + rand.IntN(hi-floor)
		if slices.Contains(recent.ring[:], p) {
			continue // handed out lately: its child may not have bound it yet
		}
		l, err := net.Listen("tcp", ":"+strconv.Itoa(p))
		if err != nil {
			continue // taken, or in use by a listener on some address
		}
		held = append(held, l)
		ports = append(ports, p)
	}
	for _, p := range ports {
		recent.ring[recent.next] = p
		recent.next = (recent.next + 1) % recentSize
	}
	return ports, nil
}

// One returns a single port as Pick does.
func One() (int, error) {
	ps, err := Pick(1)
	if err != nil {
		return 0, err
	}
	return ps[0], nil
}

func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return defaultEphemeralLow
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return defaultEphemeralLow
	}
	lo, err := strconv.Atoi(f[0])
	if err != nil || lo <= 0 {
		return defaultEphemeralLow
	}
	return lo
}
