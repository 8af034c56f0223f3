package contracts_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/contracts/contractstest"
)

func TestW1Loads(t *testing.T) {
	c, err := contracts.Load(contractstest.ReadW1(t), contracts.LoadOptions{})
	if err != nil {
		t.Fatalf("W1 contract: %v", err)
	}
	if len(c.Criteria) != 6 || c.MaxAttempts != 3 {
		t.Fatalf("W1: %d criteria, max_attempts %d", len(c.Criteria), c.MaxAttempts)
	}
	for _, cr := range c.Criteria {
		if _, err := contracts.ChecksFor(cr); err != nil {
			t.Errorf("%s: %v", cr.ID, err)
		}
		var seed []string
		if err := json.Unmarshal(cr.Seed.LocalStorage["watchlist"], &seed); err != nil || strings.Join(seed, ",") != "NVDA,AAPL,MSFT,SPY" {
			t.Errorf("%s: seed %v (%v)", cr.ID, seed, err)
		}
	}
}

func TestMalformedContracts(t *testing.T) {
	base := contractstest.ReadW1(t)
	if len(contractstest.MalformedW1) < 20 {
		t.Fatalf("only %d malformed cases", len(contractstest.MalformedW1))
	}
	for _, c := range contractstest.MalformedW1 {
		t.Run(c.Name, func(t *testing.T) {
			_, err := contracts.Load(contractstest.MalformedDoc(t, base, c), contracts.LoadOptions{})
			var ve *contracts.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("want a validation error, got %v", err)
			}
			if !ve.Has(c.Pointer, c.Rule) {
				t.Fatalf("want %s %s, got:\n%v", c.Pointer, c.Rule, ve)
			}
		})
	}
}

func TestMoreCriteriaNeedAnAllowance(t *testing.T) {
	var tooMany contractstest.MalformedCase
	for _, c := range contractstest.MalformedW1 {
		if c.Name == "too many criteria" {
			tooMany = c
		}
	}
	doc := contractstest.MalformedDoc(t, contractstest.ReadW1(t), tooMany)
	if _, err := contracts.Load(doc, contracts.LoadOptions{AllowMoreCriteria: true}); err != nil {
		t.Fatalf("with the allowance: %v", err)
	}
}

func TestLoadRejectsDuplicateMembersAndGarbage(t *testing.T) {
	for name, in := range map[string]string{
		"duplicate": `{"goal":"a","goal":"b"}`,
		"garbage":   `{"goal":`,
		"array":     `[]`,
		"empty":     ``,
	} {
		if _, err := contracts.Load([]byte(in), contracts.LoadOptions{}); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
}
