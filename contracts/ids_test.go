package contracts

import (
	"encoding/json"
	"testing"
)

// The Go pattern is the schema's: a contract that loads has an id every consumer accepts.
func TestContractIDPatternIsTheSchemas(t *testing.T) {
	data, err := schemaFS.ReadFile("schema/contract.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties struct {
			ContractID struct {
				Pattern string `json:"pattern"`
			} `json:"contract_id"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if s.Properties.ContractID.Pattern != ContractIDPattern {
		t.Fatalf("schema pattern %q, Go pattern %q", s.Properties.ContractID.Pattern, ContractIDPattern)
	}
	for id, want := range map[string]bool{"w1-watchlist": true, "abc": true, "ab": false, "-ab": false, "A-bc": false, "../x": false} {
		if ValidContractID(id) != want {
			t.Errorf("ValidContractID(%q) = %v", id, !want)
		}
	}
}
