package conversation

import (
	"context"
	"testing"
	"time"
)

func TestQuoteLinePlacesAndOrder(t *testing.T) {
	l := newQuoteLine(2)
	for key, want := range map[string]int{"a": 0, "b": 0} {
		if got := l.join(key, "alice"); got != want {
			t.Fatalf("%s placed %d, want %d", key, got, want)
		}
	}
	if got := l.join("c", "bob"); got != 1 {
		t.Fatalf("c placed %d, want 1", got)
	}
	if got := l.join("d", "bob"); got != 2 {
		t.Fatalf("d placed %d, want 2", got)
	}
	if l.join("c", "bob") != 1 || l.pending("bob") != 2 || l.pending("alice") != 2 {
		t.Fatal("joining twice changed the line")
	}
	done := make(chan error, 1)
	go func() { done <- l.wait(context.Background(), "c", func() {}) }()
	select {
	case err := <-done:
		t.Fatalf("c ran with both slots taken: %v", err)
	case <-time.After(50 * time.Millisecond): // a wait that must not end; only its absence is checked
	}
	l.leave("a")
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("c did not run when a slot freed")
	}
	if got := l.join("d", "bob"); got != 1 {
		t.Fatalf("d placed %d after a left, want 1", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.wait(ctx, "d", func() {}); err == nil {
		t.Fatal("a cancelled wait returned nil")
	}
}
