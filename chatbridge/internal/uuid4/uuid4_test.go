package uuid4

import "testing"

// Expectations recorded from uagents-core 0.4.12 (pydantic 2.14 Envelope) and pydantic.v1 UUID4.
func TestParseLikeReference(t *testing.T) {
	const canon = "d3b1a7b0-5f3e-4c7a-9d2e-1a2b3c4d5e6f"
	cases := []struct {
		in         string
		env, model bool // accepted by the envelope (v2) / chat models (v1)
	}{
		{"D3B1A7B0-5F3E-4C7A-9D2E-1A2B3C4D5E6F", true, true},
		{"d3b1a7b05f3e4c7a9d2e1a2b3c4d5e6f", true, true},
		{"{d3b1a7b0-5f3e-4c7a-9d2e-1a2b3c4d5e6f}", true, true},
		{"urn:uuid:d3b1a7b0-5f3e-4c7a-9d2e-1a2b3c4d5e6f", true, true},
		{"d3b1a7b0-5f3e-4c7a-cd2e-1a2b3c4d5e6f", false, false}, // variant not RFC 4122
		{"d3b1-a7b05f3e-4c7a-9d2e-1a2b3c4d5e6f", false, true},  // odd hyphens: v1 only
		{"d3b1a7b0-5f3e-4c7a-9d2e-1a2b3c4d5e6f ", false, false},
		{"6f1c2a3b-4d5e-1f60-8a7b-9c0d1e2f3a4b", false, false}, // version 1
	}
	for _, c := range cases {
		got, err := ParseEnvelope(c.in)
		if (err == nil) != c.env || (err == nil && got != canon) {
			t.Errorf("ParseEnvelope(%q) = %q, %v; want accepted=%v", c.in, got, err, c.env)
		}
		got, err = ParseModel(c.in)
		if (err == nil) != c.model || (err == nil && got != canon) {
			t.Errorf("ParseModel(%q) = %q, %v; want accepted=%v", c.in, got, err, c.model)
		}
	}
	if _, err := ParseModel("6f1c2a3b-4d5e-1f60-8a7b-9c0d1e2f3a4b"); err != ErrNotV4 {
		t.Errorf("v1 uuid: err = %v, want %v", err, ErrNotV4)
	}
	for range 100 {
		u := New()
		if got, err := ParseEnvelope(u); err != nil || got != u {
			t.Fatalf("New() = %q not a canonical v4 (%v)", u, err)
		}
	}
}

func TestFromKeyIsStableV4(t *testing.T) {
	a, b := FromKey("wf-1/progress/3"), FromKey("wf-1/progress/3")
	if a != b || a == FromKey("wf-1/progress/4") {
		t.Fatalf("FromKey not stable/distinct: %s %s", a, b)
	}
	if got, err := ParseEnvelope(a); err != nil || got != a {
		t.Fatalf("FromKey(%q) = %s is not a canonical v4 UUID: %v", "wf-1/progress/3", a, err)
	}
}
