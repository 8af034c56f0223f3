package dev

import (
	"testing"
	"time"

	"github.com/signoff/signoff/internal/settings"
)

// The contracts chat starts take the configured heartbeat timeout, as `contract start`'s do.
func TestChatContractsTakeTheHeartbeatTimeout(t *testing.T) {
	s, err := settings.Load(func(k string) string {
		if k == "SIGNOFF_HEARTBEAT_TIMEOUT" {
			return "7s"
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := (&ChatFlags{}).options(s, "", nil).Timeouts.Heartbeat; got != 7*time.Second {
		t.Fatalf("chat contracts' heartbeat timeout %s, want 7s", got)
	}
}
