package index_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/activities/index"
)

func TestPutGetListAcrossOpens(t *testing.T) {
	p := filepath.Join(t.TempDir(), "index.json")
	x := index.Open(p)
	for _, e := range []activities.IndexEntry{
		{ContractID: "a", State: "quoted", UpdatedAt: "2026-11-29T10:00:00Z"},
		{ContractID: "b", State: "quoted", UpdatedAt: "2026-11-29T11:00:00Z"},
		{ContractID: "a", State: "payment_captured", Verdict: "satisfied", UpdatedAt: "2026-11-29T12:00:00Z"},
	} {
		if err := x.Put(e); err != nil {
			t.Fatal(err)
		}
	}
	// A second handle (another process) sees the same file.
	y := index.Open(p)
	got, ok, err := y.Get("a")
	if err != nil || !ok || got.Verdict != "satisfied" {
		t.Fatalf("%+v %v %v", got, ok, err)
	}
	list, err := y.List()
	if err != nil || len(list) != 2 || list[0].ContractID != "a" {
		t.Fatalf("newest first: %+v %v", list, err)
	}
}

func TestCorruptIndexIsRefusedAndKept(t *testing.T) {
	p := filepath.Join(t.TempDir(), "index.json")
	if err := os.WriteFile(p, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := index.Open(p).Put(activities.IndexEntry{ContractID: "a"}); err == nil {
		t.Fatal("wrote over a corrupt index")
	}
	if b, _ := os.ReadFile(p); string(b) != "{not json" {
		t.Fatalf("corrupt index was changed: %q", b)
	}
}
