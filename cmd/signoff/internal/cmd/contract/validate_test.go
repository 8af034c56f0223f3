package contract_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signoff/signoff/cmd/signoff/internal/cmd/contract"
	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/contracts/contractstest"
	"github.com/signoff/signoff/workflows/contractapi"
)

func TestValidateW1(t *testing.T) {
	io, out, _ := iostreams.Test()
	err := contract.RunValidate(&contract.ValidateOptions{IO: io, File: contractstest.W1Path()})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "valid contract w1-watchlist-mobile") || !strings.Contains(out.String(), "contract hash: ") {
		t.Fatalf("output: %s", out)
	}
}

// TestMalformedExitTwo runs every one-field corruption of W1 through the command, in human
// and JSON modes: exit code 2, the pointer and the rule named, and the file left as it was.
func TestMalformedExitTwo(t *testing.T) {
	base := contractstest.ReadW1(t)
	dir := t.TempDir()
	for i, c := range contractstest.MalformedW1 {
		doc := contractstest.MalformedDoc(t, base, c)
		file := filepath.Join(dir, "bad.json")
		if err := os.WriteFile(file, doc, 0o600); err != nil {
			t.Fatal(err)
		}
		io, _, errOut := iostreams.Test()
		err := contract.RunValidate(&contract.ValidateOptions{IO: io, File: file})
		if code := iostreams.ExitCode(err); code != 2 {
			t.Errorf("case %d %s: exit %d, want 2", i, c.Name, code)
		}
		if want := c.Pointer + ": " + c.Rule + ":"; !strings.Contains(errOut.String(), want) {
			t.Errorf("case %d %s: stderr %q lacks %q", i, c.Name, errOut, want)
		}

		io, out, _ := iostreams.Test()
		err = contract.RunHash(&contract.ValidateOptions{IO: io, File: file, JSON: true})
		if code := iostreams.ExitCode(err); code != 2 {
			t.Errorf("case %d %s --json: exit %d, want 2", i, c.Name, code)
		}
		var got struct {
			Valid  bool `json:"valid"`
			Errors []struct{ Pointer, Rule string }
		}
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatalf("case %d: json output %q: %v", i, out, err)
		}
		found := false
		for _, e := range got.Errors {
			found = found || (e.Pointer == c.Pointer && e.Rule == c.Rule)
		}
		if got.Valid || !found {
			t.Errorf("case %d %s --json: %s", i, c.Name, out)
		}
		after, _ := os.ReadFile(file)
		if string(after) != string(doc) {
			t.Errorf("case %d: the input file was changed", i)
		}
	}
}

func TestHashMatchesAcrossFormatting(t *testing.T) {
	base := contractstest.ReadW1(t)
	compact, err := json.Marshal(contractstest.Decode(t, base))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var hashes []string
	for name, b := range map[string][]byte{"pretty.json": base, "compact.json": compact} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		io, out, _ := iostreams.Test()
		if err := contract.RunHash(&contract.ValidateOptions{IO: io, File: p}); err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, strings.TrimSpace(out.String()))
	}
	if hashes[0] != hashes[1] || len(hashes[0]) != 64 {
		t.Fatalf("hashes %v", hashes)
	}
}

func TestFlagsReachOptions(t *testing.T) {
	io, _, _ := iostreams.Test()
	var got *contract.ValidateOptions
	cmd := contract.NewCmdValidate(cmdutil.New(io), func(o *contract.ValidateOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"x.json", "--json", "--allow-more-criteria"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.File != "x.json" || !got.JSON || !got.AllowMoreCriteria {
		t.Fatalf("options %+v", got)
	}
}

func TestMissingFileIsBadInput(t *testing.T) {
	io, _, _ := iostreams.Test()
	err := contract.RunValidate(&contract.ValidateOptions{IO: io, File: filepath.Join(t.TempDir(), "none.json")})
	if iostreams.ExitCode(err) != 2 {
		t.Fatalf("exit %d (%v)", iostreams.ExitCode(err), err)
	}
}

func TestPrintStatusShowsTheQuoteDeadlineAndBaseCheck(t *testing.T) {
	exp := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	st := contractapi.Status{ContractID: "c1", State: contracts.StateQuoted, QuoteExpiresAt: exp,
		Timeline: []contracts.Event{{Type: contracts.EventQuoted}, {Type: contracts.EventBaseCheck, Data: map[string]string{"checked_on": "queues",
			"failing_on_base": "mobile-no-overflow", "regression_guards": "desktop-table"}}}}
	io, out, _ := iostreams.Test()
	contract.PrintStatus(io, st)
	for _, want := range []string{"quote open until: 2026-12-01T09:00:00Z", "base check (queues): fails on base mobile-no-overflow; regression guards desktop-table"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	st.State = contracts.StateAuthorized
	io, out, _ = iostreams.Test()
	contract.PrintStatus(io, st)
	if strings.Contains(out.String(), "quote open until") {
		t.Errorf("an approved contract still shows its quote deadline:\n%s", out)
	}
}

// contract validate on a 600 KB nesting bomb and on a file over the size limit: exit 2 with
// the limit named (the bomb used to overflow the canonicalizer's stack).
func TestValidateRefusesJSONBombs(t *testing.T) {
	dir := t.TempDir()
	for name, doc := range map[string][]byte{
		"depth": contractstest.DepthBomb(600 << 10),
		"size":  contractstest.SizeBomb(contracts.MaxContractBytes),
	} {
		file := filepath.Join(dir, name+".json")
		if err := os.WriteFile(file, doc, 0o600); err != nil {
			t.Fatal(err)
		}
		io, _, errOut := iostreams.Test()
		err := contract.RunValidate(&contract.ValidateOptions{IO: io, File: file})
		if code := iostreams.ExitCode(err); code != 2 {
			t.Errorf("%s bomb: exit %d, want 2", name, code)
		}
		if !strings.Contains(errOut.String(), contracts.RuleLimit+": "+"contract: ") || !strings.Contains(errOut.String(), "limit of") {
			t.Errorf("%s bomb: stderr %q does not name the limit", name, errOut)
		}
	}
}
