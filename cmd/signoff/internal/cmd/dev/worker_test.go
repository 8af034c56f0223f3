package dev

import (
	"strings"
	"testing"

	"github.com/signoff/signoff/workers"
)

func TestPreviewAddress(t *testing.T) {
	cases := []struct {
		advertise, listen    string
		static               bool
		wantListen, wantHost string
		wantPort             int
		wantErr              string
	}{
		{wantListen: "127.0.0.1", wantHost: "127.0.0.1"},
		{advertise: "10.0.3.2", wantListen: "10.0.3.2", wantHost: "10.0.3.2"},
		{advertise: "10.0.3.2:9100", wantListen: "10.0.3.2", wantHost: "10.0.3.2", wantPort: 9100},
		{advertise: "exec-1.lan:9100", wantListen: "0.0.0.0", wantHost: "exec-1.lan", wantPort: 9100},
		{advertise: "exec-1.lan", listen: "10.0.3.2", wantListen: "10.0.3.2", wantHost: "exec-1.lan"},
		{advertise: "exec-1.lan:http", wantErr: "the port must be a number"},
		{advertise: "exec-1.lan:65535", wantErr: "the port must be a number"},
		{advertise: "http://exec-1.lan", wantErr: "--advertise"},
		{listen: "exec-1.lan", wantErr: "--listen"},
		{advertise: "10.0.3.2", static: true, wantErr: "static previews serve this host's loopback only"},
	}
	for _, c := range cases {
		o := &WorkerOptions{Advertise: c.advertise, Listen: c.listen}
		if c.static {
			o.Preview = workers.PreviewStatic
		}
		err := o.previewAddress()
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("advertise %q listen %q: error %v, want one containing %q", c.advertise, c.listen, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("advertise %q listen %q: %v", c.advertise, c.listen, err)
			continue
		}
		e := o.ExecuteFlags
		if e.PreviewListen != c.wantListen || e.PreviewAdvertise != c.wantHost || e.PreviewFirstPort != c.wantPort {
			t.Errorf("advertise %q listen %q: listen %q host %q port %d; want %q %q %d", c.advertise, c.listen,
				e.PreviewListen, e.PreviewAdvertise, e.PreviewFirstPort, c.wantListen, c.wantHost, c.wantPort)
		}
	}
}
