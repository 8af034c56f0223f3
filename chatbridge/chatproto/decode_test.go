package chatproto

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestPeerText: no internal package names, and a huge field is cut with a count of the rest.
func TestPeerText(t *testing.T) {
	_, err := DecodeChatMessage([]byte(`{"content": [{"type": "text", "text": 1}], "msg_id": "` + strings.Repeat("9", 150<<10) + `"}`))
	if err == nil {
		t.Fatal("a malformed message decoded")
	}
	got := NonConformingText(err)
	if len(got) > MaxPeerText+200 || strings.Contains(got, "pyjson") {
		t.Fatalf("%d bytes: %.400s", len(got), got)
	}
	wrapped := PeerText(fmt.Errorf("pyjson: %w", errors.New("envelope: bad signature")))
	if wrapped != "bad signature" {
		t.Fatalf("PeerText kept package names: %q", wrapped)
	}
	if long := PeerText(errors.New(strings.Repeat("é", MaxPeerText+5))); !strings.HasSuffix(long, "… (5 more characters)") {
		t.Fatalf("cut: %q", long[len(long)-40:])
	}
}
