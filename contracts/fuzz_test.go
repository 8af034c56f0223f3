package contracts_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/contracts/contractstest"
)

// The seed corpora run in the normal suite; `go test -fuzz FuzzX ./contracts` explores further.

func FuzzLoad(f *testing.F) {
	f.Add(contractstest.ReadW1(f))
	f.Add([]byte(`{"criteria":[{"id":"a","route":"//x"}]}`))
	f.Add([]byte(`{"goal":"a","goal":"b"}`))
	f.Add([]byte("\xff\xfe"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := contracts.Load(data, contracts.LoadOptions{})
		if err != nil {
			return
		}
		// A loaded contract hashes, survives a round trip, and checks every criterion.
		h1, err := contracts.Hash(*c)
		if err != nil {
			t.Fatalf("hash of a loaded contract: %v", err)
		}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		c2, err := contracts.Load(b, contracts.LoadOptions{})
		if err != nil {
			t.Fatalf("re-load of a loaded contract: %v", err)
		}
		if h2, _ := contracts.Hash(*c2); h1 != h2 {
			t.Fatalf("hash changed over a round trip: %s vs %s", h1, h2)
		}
		for _, cr := range c.Criteria {
			if _, err := contracts.ChecksFor(cr); err != nil {
				t.Fatalf("criterion %s loaded but has no checks: %v", cr.ID, err)
			}
		}
	})
}

func FuzzCanonical(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[1.5,"x",null,true]}`, `1e21`, `"\u2028"`, `{"\ud83d\ude00":1,"\u20ac":2}`, `[-0.0]`, `{}`} {
		f.Add([]byte(s))
	}
	f.Add(contractstest.ReadW1(f))
	f.Fuzz(func(t *testing.T, data []byte) {
		once, err := contracts.Canonicalize(data)
		if err != nil {
			return
		}
		// parse -> canonical -> parse is stable, and canonical output is valid JSON.
		if !json.Valid(once) {
			t.Fatalf("canonical form is not JSON: %q", once)
		}
		twice, err := contracts.Canonicalize(once)
		if err != nil {
			t.Fatalf("canonical form does not re-canonicalize: %v", err)
		}
		if !bytes.Equal(once, twice) {
			t.Fatalf("not idempotent:\n%q\n%q", once, twice)
		}
	})
}

func FuzzDecodeEvidence(f *testing.F) {
	f.Add([]byte(`{"schema_version":"signoff.evidence/v1","contract_id":"c","contract_hash":"` + zeros64 + `","attempt":1,` +
		`"verifier":{"name":"v","version":"1","digest":"d"},"expected_sha":"a","runtime_sha":"a","preview_url":"http://127.0.0.1:1",` +
		`"browser":{"name":"chromium","version":"156","mode":"local"},"started_at":"t","finished_at":"t",` +
		`"results":[{"criterion_id":"x","status":"pass","observed":{"390x844/status":200},"duration_ms":1,"artifacts":[],"page_errors":[],"console_errors":[]}],` +
		`"artifacts":[],"signature":"AAAA"}`))
	f.Add([]byte(`{"results":[{"status":"maybe"}]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := contracts.DecodeEvidence(data)
		if err != nil {
			return
		}
		// Whatever decodes re-validates, and signing bytes are computable.
		if err := contracts.ValidateEvidence(*ev); err != nil {
			t.Fatalf("decoded evidence does not re-validate: %v", err)
		}
		if _, err := ev.SigningBytes(); err != nil {
			t.Fatalf("signing bytes: %v", err)
		}
	})
}

const zeros64 = "0000000000000000000000000000000000000000000000000000000000000000"
