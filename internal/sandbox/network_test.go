package sandbox

import "testing"

func TestParseNetworkReadsWhatStringWrites(t *testing.T) {
	for _, n := range []Network{NetEgress, NetNone} {
		if got, err := ParseNetwork(n.String()); err != nil || got != n {
			t.Errorf("%s: %v, %v", n, got, err)
		}
	}
	for _, bad := range []string{"", "host", "Egress", "none "} {
		if _, err := ParseNetwork(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
