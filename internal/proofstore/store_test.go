package proofstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A settled contract's folder is final: its base evidence folder is not handed out again,
// while another contract's is.
func TestSettledContractKeepsItsBaseEvidence(t *testing.T) {
	s := Store{Root: t.TempDir()}
	dir, err := s.Dir("watchlist-0123456789", 0, 1)
	if err != nil || dir != filepath.Join(s.Root, "watchlist-0123456789", BaseDir) {
		t.Fatalf("base dir %q %v", dir, err)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(dir), SettlementFile), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Dir("watchlist-0123456789", 0, 1); err == nil || !strings.Contains(err.Error(), "is settled") {
		t.Fatalf("base dir of a settled contract: %v", err)
	}
	if _, err := s.Dir("watchlist-abcdef0123", 0, 1); err != nil {
		t.Fatalf("another contract's base dir: %v", err)
	}
}
