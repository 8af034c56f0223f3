package index_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/index"
)

func TestPutGetListAcrossOpens(t *testing.T) {
	p := filepath.Join(t.TempDir(), "index.json")
	x := index.Open(p)
	for _, e := range []capability.IndexEntry{
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
	if err := index.Open(p).Put(capability.IndexEntry{ContractID: "a"}); err == nil {
		t.Fatal("wrote over a corrupt index")
	}
	if b, _ := os.ReadFile(p); string(b) != "{not json" {
		t.Fatalf("corrupt index was changed: %q", b)
	}
}

// A settled contract never moves backwards: a later "quoted" (a second workflow over the
// same id) or an entry of other terms is dropped; a settled update of the same terms is kept.
func TestSettledEntryNeverMovesBackwards(t *testing.T) {
	x := index.Open(filepath.Join(t.TempDir(), "index.json"))
	put := func(e capability.IndexEntry) {
		t.Helper()
		if err := x.Put(e); err != nil {
			t.Fatal(err)
		}
	}
	captured := capability.IndexEntry{ContractID: "a", ContractHash: "h1", State: "payment_captured", Verdict: "satisfied", ProofDir: "/p/a/attempt-1", UpdatedAt: "2026-11-29T12:00:00Z"}
	put(capability.IndexEntry{ContractID: "a", ContractHash: "h1", State: "quoted", UpdatedAt: "2026-11-29T10:00:00Z"})
	put(captured)
	for _, later := range []capability.IndexEntry{
		{ContractID: "a", ContractHash: "h1", State: "quoted", UpdatedAt: "2026-11-29T13:00:00Z"},
		{ContractID: "a", ContractHash: "h1", State: "building", Attempts: 1, UpdatedAt: "2026-11-29T13:01:00Z"},
		{ContractID: "a", ContractHash: "h2", State: "payment_cancelled", UpdatedAt: "2026-11-29T13:02:00Z"},
	} {
		put(later)
		if got, _, _ := x.Get("a"); got != captured {
			t.Fatalf("after %s (%s): %+v, want the settled entry kept", later.State, later.ContractHash, got)
		}
	}
	revoked := captured
	revoked.PR, revoked.UpdatedAt = "revoked", "2026-11-29T14:00:00Z"
	put(revoked)
	if got, _, _ := x.Get("a"); got != revoked {
		t.Fatalf("a settled update of the same terms was dropped: %+v", got)
	}
	// Merge eligibility comes after the capture and goes when a push revokes it: both ways
	// are moves between settled states of the same terms.
	for _, state := range []string{"merge_eligible", "payment_captured", "merge_eligible"} {
		e := captured
		e.State = state
		put(e)
		if got, _, _ := x.Get("a"); got.State != state {
			t.Fatalf("the move to %s was dropped: %+v", state, got)
		}
	}
	put(capability.IndexEntry{ContractID: "a", ContractHash: "h1", State: "quoted"})
	if got, _, _ := x.Get("a"); got.State != "merge_eligible" {
		t.Fatalf("a merge-eligible contract moved back to %s", got.State)
	}
}
