package embedded_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff/signoff/temporal/embedded"
)

func TestStartRejectsBadConfig(t *testing.T) {
	base := t.TempDir()
	cases := []struct {
		name string
		mod  func(*embedded.Config)
		want string
	}{
		{"no data dir", func(c *embedded.Config) { c.DataDir = "" }, "data dir is required"},
		{"non-loopback host", func(c *embedded.Config) { c.Host = "0.0.0.0" }, "loopback"},
		{"hostname", func(c *embedded.Config) { c.Host = "example.com" }, "not an IP address"},
		{"other hosts with the UI on", func(c *embedded.Config) { c.Host, c.OtherHosts, c.UIPort = "0.0.0.0", true, 8299 }, "Web UI stays on loopback"},
		{"negative retention", func(c *embedded.Config) { c.RetentionDays = -1 }, "retention"},
		{"bad log level", func(c *embedded.Config) { c.LogLevel = "chatty" }, "log level"},
		{"bad namespace", func(c *embedded.Config) { c.Namespace = "has space" }, "namespace"},
		{"system namespace", func(c *embedded.Config) { c.Namespace = "temporal-system" }, "namespace"},
		{"port out of range", func(c *embedded.Config) { c.FrontendPort = 70000 }, "out of range"},
		{"same ports", func(c *embedded.Config) { c.FrontendPort, c.UIPort = 7399, 7399 }, "both"},
		{"uri chars in dir", func(c *embedded.Config) { c.DataDir = filepath.Join(base, "a?b") }, "must not contain"},
	}
	for _, tc := range cases {
		dir := filepath.Join(base, strings.ReplaceAll(tc.name, " ", "-"))
		cfg := embedded.Config{DataDir: dir}
		tc.mod(&cfg)
		srv, err := embedded.Start(context.Background(), cfg)
		if err == nil {
			_ = srv.Stop()
			t.Fatalf("%s: Start succeeded", tc.name)
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %q does not mention %q", tc.name, err, tc.want)
		}
		if _, err := os.Stat(cfg.DataDir); cfg.DataDir != "" && err == nil {
			t.Errorf("%s: bad config still created %s", tc.name, cfg.DataDir)
		}
	}
}
