package workers

import (
	"strings"
	"testing"
)

func TestNewBarrier(t *testing.T) {
	env := func(v string) string { return v }
	if ics, err := NewBarrier(env("")); err != nil || ics != nil {
		t.Fatalf("unset: %v %v", ics, err)
	}
	ics, err := NewBarrier(env("/tmp/b:CapturePayment:applied"))
	if err != nil || len(ics) != 1 {
		t.Fatalf("set: %v %v", ics, err)
	}
	if b := ics[0].(*barrier); b.dir != "/tmp/b" || b.point != "CapturePayment:applied" {
		t.Fatalf("parsed %+v", b)
	}
	for _, bad := range []string{"/tmp/b", "/tmp/b:RunExecutor", ":RunExecutor:start"} {
		if _, err := NewBarrier(env(bad)); err == nil || !strings.Contains(err.Error(), EnvBarrier) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
