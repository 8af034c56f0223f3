package spareport

import (
	"net"
	"strconv"
	"testing"
)

func TestPickIsBelowTheEphemeralRangeDistinctAndFree(t *testing.T) {
	ports, err := Pick(20)
	if err != nil {
		t.Fatal(err)
	}
	lo := ephemeralLow()
	seen := map[int]bool{}
	for _, p := range ports {
		if p < floor || p >= lo {
			t.Errorf("port %d outside [%d, %d)", p, floor, lo)
		}
		if seen[p] {
			t.Errorf("port %d chosen twice", p)
		}
		seen[p] = true
		l, err := net.Listen("tcp", ":"+strconv.Itoa(p))
		if err != nil {
			t.Errorf("port %d not free after Pick: %v", p, err)
			continue
		}
		l.Close()
	}
}

func TestPickSkipsAPortInUse(t *testing.T) {
	lo := ephemeralLow()
	held, err := Pick(1)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(held[0]))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for range 60 { // without the probe, one of ~95,000 picks lands on it (all but e^-7)
		ps, err := Pick((lo - floor) / 8)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			if p == held[0] {
				t.Fatalf("Pick returned %d, held by a listener on 127.0.0.1", p)
			}
		}
	}
}

// TestOneDoesNotRepeatARecentPort: each One() returns a port whose probe it closed, so without
// the memory of recent ports, 1024 calls over ~12,000 ports repeat one about 40 times.
func TestOneDoesNotRepeatARecentPort(t *testing.T) {
	seen := map[int]bool{}
	for range recentSize {
		p, err := One()
		if err != nil {
			t.Fatal(err)
		}
		if seen[p] {
			t.Fatalf("port %d handed out twice within %d calls", p, recentSize)
		}
		seen[p] = true
	}
}
