package contracts_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"math/rand"
	"sort"
	"testing"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/contracts/contractstest"
)

// reorder re-serialises a decoded JSON document with member order shuffled and irregular
// whitespace, which must not change the hash.
func reorder(v any, r *rand.Rand, buf *bytes.Buffer) {
	switch n := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(n))
		for k := range n {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		buf.WriteString("{\n   ")
		for i, k := range keys {
			if i > 0 {
				buf.WriteString(" ,\t")
			}
			kb, _ := json.Marshal(k)
			buf.Write(kb)
			buf.WriteString(" :  ")
			reorder(n[k], r, buf)
		}
		buf.WriteString("\n}")
	case []any:
		buf.WriteString("[ ")
		for i, e := range n {
			if i > 0 {
				buf.WriteString(",\n")
			}
			reorder(e, r, buf)
		}
		buf.WriteString(" ]")
	default:
		b, _ := json.Marshal(n)
		buf.Write(b)
	}
}

func TestHashIgnoresKeyOrderAndWhitespace(t *testing.T) {
	base := contractstest.ReadW1(t)
	want, err := contracts.HashJSON(base, contracts.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	doc := contractstest.Decode(t, base)
	for seed := int64(1); seed <= 10; seed++ {
		var buf bytes.Buffer
		reorder(doc, rand.New(rand.NewSource(seed)), &buf)
		if bytes.Equal(buf.Bytes(), base) {
			t.Fatal("reordering produced the same bytes; the test would prove nothing")
		}
		got, err := contracts.HashJSON(buf.Bytes(), contracts.LoadOptions{})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if got != want {
			t.Fatalf("seed %d: hash %s, want %s", seed, got, want)
		}
	}
}

func TestEveryTermChangesTheHash(t *testing.T) {
	base := contractstest.ReadW1(t)
	want, err := contracts.HashJSON(base, contracts.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	changes := map[string]any{
		"/goal":                                    "Make the Watchlist page work well on tablets.",
		"/contract_version":                        2,
		"/contract_id":                             "w1-watchlist-mobile-b",
		"/repo/base_commit_sha":                    "1111111111111111111111111111111111111111",
		"/repo/name":                               "finance2",
		"/stack/build":                             "npm run build:prod",
		"/stack/port":                              3001,
		"/criteria/0/viewport/width":               391,
		"/criteria/0/description":                  "The Watchlist page loads at 390 by 844.",
		"/criteria/2/actions/0/timeout_ms":         10001,
		"/criteria/3/assert/all_of/1/texts/0":      "TSLA",
		"/criteria/0/seed/local_storage/theme":     "dark",
		"/criteria/5/extra_viewports/0/height":     1001,
		"/criteria/4/required_artifacts/2":         nil,
		"/evidence_policy/required":                []any{"observed"},
		"/verifier/digest":                         "1111111111111111111111111111111111111111111111111111111111111111",
		"/verifier/version":                        "99",
		"/max_attempts":                            2,
		"/price/amount":                            4901,
		"/price/currency":                          "eur",
		"/test_hooks/0/selector":                   "[data-testid=\"card\"]",
		"/criteria/4/assert/within":                "main table",
		"/criteria/1/max_runtime_ms":               30001,
		"/criteria/2/actions/0/selector":           "[data-symbol]",
		"/criteria/3/assert/all_of/0/selector":     "table.watchlist",
		"/criteria/3/assert/all_of/0/state":        "attached",
		"/criteria/0/route":                        "/watchlist?view=cards",
		"/criteria/1/seed/local_storage/watchlist": []any{"NVDA"},
		"/allowed_origins":                         []any{"https://fonts.example.com"},
	}
	for ptr, v := range changes {
		doc := contractstest.Edit(t, contractstest.Decode(t, base), ptr, v, v == nil)
		b, _ := json.Marshal(doc)
		got, err := contracts.HashJSON(b, contracts.LoadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", ptr, err)
		}
		if got == want {
			t.Errorf("changing %s left the hash unchanged", ptr)
		}
	}
}

func TestApprovalIsNotInTheHash(t *testing.T) {
	c, err := contracts.Load(contractstest.ReadW1(t), contracts.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q, err := contracts.NewQuote(*c, "agent1qrequester")
	if err != nil {
		t.Fatal(err)
	}
	before := q.Hash
	q.Approval = &contracts.Approval{Hash: q.Hash, Approver: "agent1qrequester", Channel: "chat", MessageID: "m-1"}
	q.Payment = &contracts.PaymentRef{Provider: "stripe", PaymentIntentID: "pi_1", State: "authorized"}
	q.Status = "authorized"
	after, err := contracts.Hash(q.Contract)
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Fatalf("approval changed the hash: %s -> %s", before, after)
	}
	// And an approval smuggled into the terms document is refused, not ignored.
	doc := contractstest.Edit(t, contractstest.Decode(t, contractstest.ReadW1(t)), "/approval", map[string]any{"approver": "x"}, false)
	b, _ := json.Marshal(doc)
	if _, err := contracts.Load(b, contracts.LoadOptions{}); err == nil {
		t.Fatal("a contract carrying an approval member loaded")
	}
}

func TestChain(t *testing.T) {
	var c contracts.Chain
	for i, typ := range []string{"quoted", "approved", "authorized", "verified"} {
		if _, err := c.Append(typ, "2026-11-29T00:00:0"+string(rune('0'+i))+"Z", map[string]string{"n": typ}); err != nil {
			t.Fatal(err)
		}
	}
	head, err := contracts.VerifyChain(c.Events)
	if err != nil || head != c.Head() {
		t.Fatalf("valid chain: head %s err %v", head, err)
	}
	corrupt := map[string]func([]contracts.Event) []contracts.Event{
		"reordered": func(e []contracts.Event) []contracts.Event { e[1], e[2] = e[2], e[1]; return e },
		"dropped":   func(e []contracts.Event) []contracts.Event { return append(e[:1:1], e[2:]...) },
		"edited":    func(e []contracts.Event) []contracts.Event { e[2].Data = map[string]string{"n": "x"}; return e },
		"rehashed-edit": func(e []contracts.Event) []contracts.Event {
			e[1].Type = "approved-by-mallory"
			e[1].Hash, _ = e[1].ComputeHash()
			return e
		},
		"renumbered": func(e []contracts.Event) []contracts.Event { e[3].Seq = 7; return e },
	}
	for name, f := range corrupt {
		events := f(append([]contracts.Event(nil), c.Events...))
		if _, err := contracts.VerifyChain(events); err == nil {
			t.Errorf("%s chain verified", name)
		}
	}
}

func TestEvidenceSignature(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(nil)
	otherPub, _, _ := ed25519.GenerateKey(nil)
	ev := contracts.Evidence{SchemaVersion: contracts.EvidenceSchemaVersion, ContractID: "c", Results: []contracts.CriterionResult{
		{CriterionID: "a", Status: "pass", Observed: map[string]any{"x": 1.5}},
	}}
	if err := ev.Sign(priv); err != nil {
		t.Fatal(err)
	}
	if err := ev.VerifySignature(pub); err != nil {
		t.Fatalf("own key: %v", err)
	}
	if err := ev.VerifySignature(otherPub); err == nil {
		t.Fatal("another key verified")
	}
	// Through JSON and back, as it travels.
	b, _ := json.Marshal(ev)
	var back contracts.Evidence
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if err := back.VerifySignature(pub); err != nil {
		t.Fatalf("after a JSON round trip: %v", err)
	}
	back.Results[0].Observed["x"] = 1.6
	if err := back.VerifySignature(pub); err == nil {
		t.Fatal("an edited observed value verified")
	}
	// A bundle signature is not an evidence signature.
	b2 := contracts.Bundle{Signature: ev.Signature}
	if err := b2.VerifySignature(pub); err == nil {
		t.Fatal("an evidence signature verified as a bundle signature")
	}
}
