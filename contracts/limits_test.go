package contracts_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/contracts/contractstest"
)

// bomb600K is the attacker's 600 KB nested object.
var bomb600K = contractstest.DepthBomb(600 << 10)

func TestCheckJSONNamesTheLimit(t *testing.T) {
	var le *contracts.LimitError
	err := contracts.CheckJSON(bomb600K, "contract", contracts.MaxContractBytes, contracts.MaxJSONDepth)
	if !errors.As(err, &le) || le.Limit != "depth" || le.Max != contracts.MaxJSONDepth {
		t.Fatalf("depth bomb: got %v, want a depth LimitError", err)
	}
	if !strings.Contains(err.Error(), "128 levels") {
		t.Errorf("error %q does not name the limit", err)
	}
	err = contracts.CheckJSON(contractstest.SizeBomb(contracts.MaxContractBytes), "contract", contracts.MaxContractBytes, contracts.MaxJSONDepth)
	if !errors.As(err, &le) || le.Limit != "size" {
		t.Fatalf("size bomb: got %v, want a size LimitError", err)
	}
	// Exactly at the limit passes: the bound is on depth, not on what a document may hold.
	if err := contracts.CheckJSON(contractstest.DepthBomb(6*contracts.MaxJSONDepth), "x", 1<<20, contracts.MaxJSONDepth); err != nil {
		t.Errorf("%d levels: %v", contracts.MaxJSONDepth, err)
	}
}

func TestReadJSONStopsAtTheSizeLimit(t *testing.T) {
	_, err := contracts.ReadJSON(strings.NewReader(strings.Repeat(" ", 2000)), "chat", 1000, 8)
	if !contracts.IsLimitError(err) {
		t.Fatalf("got %v, want a size LimitError", err)
	}
	b, err := contracts.ReadJSON(strings.NewReader(`{"a":[1]}`), "chat", 1000, 8)
	if err != nil || string(b) != `{"a":[1]}` {
		t.Fatalf("got %q, %v", b, err)
	}
}

func TestCanonicalizeHasItsOwnDepthGuard(t *testing.T) {
	_, err := contracts.Canonicalize(bomb600K)
	if !contracts.IsLimitError(err) {
		t.Fatalf("got %v, want a depth LimitError", err)
	}
	deep := contractstest.DepthBomb(6 * contracts.MaxJSONDepth) // exactly MaxJSONDepth levels
	if _, err := contracts.Canonicalize(deep); err != nil {
		t.Fatalf("%d levels must canonicalize: %v", contracts.MaxJSONDepth, err)
	}
}

func TestLoadAndDecodeEvidenceRefuseBombs(t *testing.T) {
	for name, doc := range map[string][]byte{
		"depth": bomb600K,
		"size":  contractstest.SizeBomb(contracts.MaxEvidenceBytes),
	} {
		_, err := contracts.Load(doc, contracts.LoadOptions{})
		var ve *contracts.ValidationError
		if !errors.As(err, &ve) || !ve.Has("", contracts.RuleLimit) {
			t.Errorf("Load %s bomb: got %v, want rule %s", name, err, contracts.RuleLimit)
		}
		_, err = contracts.DecodeEvidence(doc)
		if !errors.As(err, &ve) || !ve.Has("", contracts.RuleLimit) {
			t.Errorf("DecodeEvidence %s bomb: got %v, want rule %s", name, err, contracts.RuleLimit)
		}
	}
}

// BenchmarkJSONBombs is the cost of refusing a 600 KB nested object: what it took minutes of
// CPU to canonicalize before the limits.
func BenchmarkJSONBombs(b *testing.B) {
	b.Run("CheckJSON", func(b *testing.B) {
		for b.Loop() {
			if err := contracts.CheckJSON(bomb600K, "contract", contracts.MaxContractBytes, contracts.MaxJSONDepth); err == nil {
				b.Fatal("accepted")
			}
		}
	})
	b.Run("Canonicalize", func(b *testing.B) {
		for b.Loop() {
			if _, err := contracts.Canonicalize(bomb600K); err == nil {
				b.Fatal("accepted")
			}
		}
	})
	b.Run("Load", func(b *testing.B) {
		for b.Loop() {
			if _, err := contracts.Load(bomb600K, contracts.LoadOptions{}); err == nil {
				b.Fatal("accepted")
			}
		}
	})
}
