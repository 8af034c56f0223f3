package policy_test

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff/signoff/cmd/signoff/internal/cmd/policy"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/contracts/contractstest"
	"github.com/signoff/signoff/policy/policytest"
)

const sha = "2222222222222222222222222222222222222222"

func writeEvidence(t *testing.T, o policytest.Options) string {
	t.Helper()
	c, err := contracts.Load(contractstest.ReadW1(t), contracts.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := policytest.Evidence(*c, sha, o)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(ev, "", "  ")
	p := filepath.Join(t.TempDir(), "evidence.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func run(t *testing.T, o *policy.DecideOptions) (string, int) {
	t.Helper()
	io, out, errOut := iostreams.Test()
	o.IO = io
	if o.ContractFile == "" {
		o.ContractFile = contractstest.W1Path()
	}
	if o.PubKey == "" {
		o.PubKey = hex.EncodeToString(policytest.VerifierPublicKey())
	}
	if o.SHA == "" {
		o.SHA = sha
	}
	err := policy.RunDecide(o)
	return out.String() + errOut.String(), iostreams.ExitCode(err)
}

func TestDecide(t *testing.T) {
	pass := writeEvidence(t, policytest.Options{Attempt: 1})
	overflow := writeEvidence(t, policytest.Options{Attempt: 1, Override: map[string]map[string]any{
		"mobile-no-overflow": {"390x844/scroll_width": 927.0}}})

	if out, code := run(t, &policy.DecideOptions{EvidenceFile: pass}); code != 0 || !strings.Contains(out, "verdict: satisfied") {
		t.Fatalf("satisfied: %d %s", code, out)
	}
	out, code := run(t, &policy.DecideOptions{EvidenceFile: overflow, ExitStatus: true})
	if code != 1 || !strings.Contains(out, "verdict: not_satisfied") || !strings.Contains(out, "scrollWidth = 927, innerWidth = 390") {
		t.Fatalf("overflow: %d %s", code, out)
	}
	if out, _ := run(t, &policy.DecideOptions{EvidenceFile: pass, SHA: strings.Repeat("3", 40)}); !strings.Contains(out, "verification_error") {
		t.Fatalf("wrong sha: %s", out)
	}
	other := hex.EncodeToString(make([]byte, 32))
	if out, _ := run(t, &policy.DecideOptions{EvidenceFile: pass, PubKey: other}); !strings.Contains(out, "signature_invalid") {
		t.Fatalf("wrong key: %s", out)
	}
	var d struct{ Verdict string }
	out, _ = run(t, &policy.DecideOptions{EvidenceFile: overflow, JSON: true})
	if err := json.Unmarshal([]byte(out), &d); err != nil || d.Verdict != contracts.NotSatisfied {
		t.Fatalf("json: %v %s", err, out)
	}
}

func TestDecideBadInput(t *testing.T) {
	pass := writeEvidence(t, policytest.Options{Attempt: 1})
	garbage := filepath.Join(t.TempDir(), "g.json")
	_ = os.WriteFile(garbage, []byte("{not json"), 0o600)
	for name, o := range map[string]*policy.DecideOptions{
		"short sha":        {EvidenceFile: pass, SHA: "abc"},
		"bad key":          {EvidenceFile: pass, PubKey: "not-a-key"},
		"missing file":     {EvidenceFile: filepath.Join(t.TempDir(), "none.json")},
		"garbage":          {EvidenceFile: garbage},
		"missing contract": {EvidenceFile: pass, ContractFile: filepath.Join(t.TempDir(), "c.json")},
	} {
		if out, code := run(t, o); code != 2 {
			t.Errorf("%s: exit %d, want 2 (%s)", name, code, out)
		}
	}
}
