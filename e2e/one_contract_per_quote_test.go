package e2e_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/fixtures/runs"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/internal/signing"
	"github.com/signoff/signoff/policy/policytest"
	"github.com/signoff/signoff/temporal/embedded"
	"github.com/signoff/signoff/temporal/temporaltest"
	"github.com/signoff/signoff/workflows/contractapi"
	"github.com/signoff/signoff/workflows/contractclient"
)

// byContract is the scripted verifier for several contracts at once, chosen by id.
type byContract map[string]*scriptedVerify

func (b byContract) Verify(ctx context.Context, req capability.VerifyRequest) (capability.VerifyResult, error) {
	s, ok := b[req.ContractID]
	if !ok {
		return capability.VerifyResult{}, errors.New("no scripted verifier for " + req.ContractID)
	}
	return s.Verify(ctx, req)
}

// TestOneContractPerQuote: the same goal quoted twice at the same base is two contracts.
// Both run to the end; the first's state, proof folder, index entry and payment are exactly
// as they were when it settled. Starting an id that already has a workflow (settled here)
// is refused, through the client options and through `signoff contract start`, with a
// message saying so, and again nothing of the first contract changes.
func TestOneContractPerQuote(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the embedded Temporal server: not in the unit tier")
	}
	srv := temporaltest.StartServer(t)
	c := temporaltest.Dial(t, srv)

	// The second quote: the same terms under a contract id of its own, as `contract new`
	// gives it (authoring's quoteID).
	runsDir := t.TempDir()
	copyTree(t, filepath.Join(testRunsDir(), "H1"), filepath.Join(runsDir, "H1"))
	copyTree(t, filepath.Join(testRunsDir(), "H1"), filepath.Join(runsDir, "H1B"))
	first, err := runs.Load(runsDir, "H1")
	if err != nil {
		t.Fatal(err)
	}
	secondID := first.Contract.ContractID + "-5e1f0a2b"
	cpath := filepath.Join(runsDir, "H1B", "contract.json")
	data, err := os.ReadFile(cpath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cpath, []byte(strings.Replace(string(data), `"`+first.Contract.ContractID+`"`, `"`+secondID+`"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	second, err := runs.Load(runsDir, "H1B")
	if err != nil || second.Contract.ContractID != secondID {
		t.Fatalf("second quote: %v %+v", err, second)
	}

	verifier := byContract{first.Contract.ContractID: {contract: first.Contract}, secondID: {contract: second.Contract}}
	w := startWiring(t, c, verifier, wiringOptions{RunsDir: runsDir})
	dataDir, local := w.Config.DataDir, w.Local
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	env := w.Env(first.Contract)

	st, mismatches, err := first.Replay(ctx, env)
	if err != nil || len(mismatches) > 0 {
		t.Fatalf("first contract: %v %v", err, mismatches)
	}
	assertCapturedOnce(t, dataDir, first.Contract.ContractID, first.Contract.Price.Amount)
	waitLockReleased(t, c, "signoff-fixtures/finance")
	id := first.Contract.ContractID
	contractDir := filepath.Dir(filepath.Dir(st.Attempts[0].ProofDir))
	if _, err := os.Stat(filepath.Join(contractDir, "settlement.json")); err != nil {
		t.Fatalf("the first contract is not settled: %v", err)
	}
	type snapshot struct {
		status  contractapi.Status
		history int // bytes
		proof   map[string]string
		index   capability.IndexEntry
		payment string
	}
	snap := func() snapshot {
		t.Helper()
		var s snapshot
		q, err := c.QueryWorkflow(ctx, contractapi.WorkflowID(id), "", contractapi.QueryStatus)
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Get(&s.status); err != nil {
			t.Fatal(err)
		}
		s.history = temporaltest.HistorySize(t, c, contractapi.WorkflowID(id))
		s.proof = treeDigests(t, contractDir)
		e, ok, err := local.Index.Get(id)
		if err != nil || !ok {
			t.Fatalf("index entry: %v %v", ok, err)
		}
		s.index = e
		s.payment = paymentOnDouble(t, dataDir, id)
		return s
	}
	before := snap()
	unchanged := func(when string) {
		t.Helper()
		after := snap()
		if !reflect.DeepEqual(before.status, after.status) || before.history != after.history || !reflect.DeepEqual(before.proof, after.proof) ||
			before.index != after.index || before.payment != after.payment {
			t.Fatalf("%s changed the first contract:\nbefore %+v\nafter  %+v", when, before, after)
		}
	}

	// The second quote runs to the end as a contract of its own.
	st2, mismatches, err := second.Replay(ctx, env)
	if err != nil || len(mismatches) > 0 {
		t.Fatalf("second contract: %v %v", err, mismatches)
	}
	assertCapturedOnce(t, dataDir, secondID, second.Contract.Price.Amount)
	if filepath.Dir(filepath.Dir(st2.Attempts[0].ProofDir)) == contractDir {
		t.Fatalf("both contracts' proof in %s", contractDir)
	}
	unchanged("the second quote")

	// The first id again: refused by the server, whatever state its workflow is in.
	_, err = c.ExecuteWorkflow(ctx, contractclient.StartOptions(id), contractapi.ContractWorkflowName,
		contractapi.ContractInput{Quote: mustQuote(t, first.Contract), Channel: "cli", Trust: testTrust(first.Contract)})
	var already *serviceerror.WorkflowExecutionAlreadyStarted
	if !errors.As(err, &already) {
		t.Fatalf("a second start of %s: %v, want WorkflowExecutionAlreadyStarted", id, err)
	}
	unchanged("a second start through the client")

	// And through the CLI, which says why and exits 2 (bad input). It reads the verifier's
	// trust from the data dir, as a verify worker publishes it.
	keyPath := filepath.Join(datadir.Paths(dataDir).Keys, datadir.VerifierKeyFile)
	if _, err := signing.WritePublic(keyPath, policytest.VerifierKey); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath+".digest", []byte(first.Contract.Verifier.Digest+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "h1.contract.json")
	copyFile(t, filepath.Join(runsDir, "H1", "contract.json"), file)
	admit(t, srv, dataDir)
	code, out := cliExit(t, "contract", "start", file, "--quote", "none", "--requester", "replay",
		"--data-dir", dataDir, "--temporal-address", srv.DialConfig().Address)
	if code != 2 || !strings.Contains(out, "contract "+id+" already has a workflow (workflow completed") || !strings.Contains(out, "nothing was started") {
		t.Fatalf("contract start of a settled contract: exit %d\n%s", code, out)
	}
	t.Logf("contract start, refused: %s", strings.TrimSpace(out))
	unchanged("a second start through the CLI")
}

func mustQuote(t *testing.T, c contracts.Contract) contracts.Quote {
	t.Helper()
	q, err := contracts.NewQuote(c, "replay")
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// treeDigests is every file under dir by its path, with its sha256.
func treeDigests(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		copyFile(t, p, filepath.Join(dst, rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// admit gives dataDir the test server's client certificate, as an operator copies it to a
// worker's host: a process started with --data-dir dataDir dials srv with it (the embedded
// server answers nothing else).
func admit(t *testing.T, srv *embedded.Server, dataDir string) {
	t.Helper()
	from := filepath.Dir(srv.DialConfig().TLS.ClientCertFile)
	to := datadir.Paths(dataDir).TemporalClient
	if err := os.MkdirAll(to, 0o700); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
