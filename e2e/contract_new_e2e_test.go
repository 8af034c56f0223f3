package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/e2e/signoffproc"
	"github.com/signoff/signoff/fixtures/finance"
	"github.com/signoff/signoff/fixtures/fixturerepo"
	"github.com/signoff/signoff/internal/localgit"
	"github.com/signoff/signoff/temporal/temporaltest"
	"github.com/signoff/signoff/workflows/contractapi"
)

// TestContractNewOnQueues drafts a contract for an app in a folder of a repository on this
// machine that no worker knows yet: `contract new` registers its base commit with the execute queue's bare remote,
// the base check builds it on the execute queue and verifies it on the verify queue of a
// running `signoff dev`, and the quote it writes carries into the workflow: its expiry is the
// approval deadline and the base check is on the timeline before approval.
func TestContractNewOnQueues(t *testing.T) {
	if testing.Short() {
		t.Skip("runs signoff dev as a process, builds the fixture app and drives Chromium")
	}
	root := signoffproc.RepoRoot()
	signoffproc.RequireSetup(t, filepath.Join(root, ".cache", "finance-deps", "node_modules", "next"), "go tool task fixture:setup")
	signoffproc.RequireSetup(t, filepath.Join(root, ".cache", "pw-driver", "1.64.1", "package", "cli.js"), "go tool task browser:setup")

	dataDir := t.TempDir()
	port := signoffproc.FreePort(t)
	addr := "127.0.0.1:" + port
	dev := signoffproc.Start(t, nil, "dev", "--data-dir", dataDir, "--temporal-port", port, "--ui-port", "0", "--loopback", "127.0.0.1:0",
		"--public", "127.0.0.1:0", "--no-chat", "--allow", "acme/*")
	signoffproc.WaitOutput(t, dev, "Ctrl-C stops.", 2*time.Minute)

	// A user's repository: a monorepo with the finance app in web/.
	mono := fstest.MapFS{"README.md": {Data: []byte("monorepo\n"), Mode: 0o644}}
	if err := fs.WalkDir(finance.Files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := finance.Files.ReadFile(p)
		mono["web/"+p] = &fstest.MapFile{Data: b, Mode: 0o644}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(t.TempDir(), "finance")
	base, err := fixturerepo.MaterializeFS(mono, repo)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "watchlist.contract.json")
	common := []string{"--data-dir", dataDir, "--temporal-address", addr}
	newArgs := []string{"contract", "new", "--repo", filepath.Join(repo, "web"), "--name", "acme/finance", "--allow", "acme/*", "--requester", "alice",
		"--goal", "Make the Watchlist page work well on mobile: cards instead of the table below 640px, desktop table kept.",
		"--check", "queues", "--out", out}

	// Another data dir than the server's would register the base where no worker looks; it
	// holds no client certificate for the server either, so the dial is refused first.
	other := t.TempDir()
	if code, msg := cliExit(t, append(newArgs, "--data-dir", other, "--temporal-address", addr)...); code != 1 || !strings.Contains(msg, "pass --data-dir of the `signoff dev`") {
		t.Fatalf("contract new with a foreign data dir: exit %d %s", code, msg)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a contract was written without its base check")
	}

	started := time.Now()
	stdout := signoffproc.CLI(t, append(append(newArgs, "--json"), common...)...)
	t.Logf("contract new with a base check on the queues: %s", time.Since(started).Round(time.Millisecond))
	var rep struct {
		Offered   bool   `json:"offered"`
		Hash      string `json:"contract_hash"`
		QuoteFile string `json:"quote_file"`
		BaseCheck struct {
			Checked  bool     `json:"checked"`
			Failing  []string `json:"failing"`
			Guards   []string `json:"guards"`
			Variants []struct {
				Name     string   `json:"name"`
				Rejected bool     `json:"rejected"`
				FailedBy []string `json:"failed_by"`
				Error    string   `json:"error"`
			} `json:"variants"`
			Report struct {
				Notes     []string `json:"notes"`
				CommitSHA string   `json:"commit_sha"`
				Where     string   `json:"where"`
				ProofDir  string   `json:"proof_dir"`
				Results   []struct {
					CriterionID string   `json:"criterion_id"`
					Outcome     string   `json:"outcome"`
					Failures    []string `json:"failures"`
				} `json:"results"`
			} `json:"report"`
		} `json:"discrimination"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	d := rep.BaseCheck
	if !rep.Offered || !d.Checked || d.Report.Where != "queues" || d.Report.CommitSHA != base || !slices.Contains(d.Failing, "mobile-no-overflow") || len(d.Guards) == 0 {
		t.Fatalf("base check %+v", rep)
	}
	overflow := false
	for _, r := range d.Report.Results {
		if r.CriterionID == "mobile-no-overflow" && r.Outcome == "fail" && strings.Contains(strings.Join(r.Failures, ";"), "scrollWidth = 927, innerWidth = 390") {
			overflow = true
		}
	}
	if !overflow {
		t.Fatalf("the base check does not name the observed overflow: %+v", d.Report.Results)
	}
	// The contract's self-test ran on the queues: each lazy variant failed some criterion.
	if len(d.Variants) == 0 {
		t.Fatal("no lazy variant was run in the base check")
	}
	for _, v := range d.Variants {
		if !v.Rejected || len(v.FailedBy) == 0 {
			t.Errorf("lazy variant %s: rejected %v by %v (%s)", v.Name, v.Rejected, v.FailedBy, v.Error)
		}
	}
	// The workers measured it: their signed evidence is in the data dir, and the execute
	// queue's remote holds the registered base commit.
	if !strings.HasPrefix(d.Report.ProofDir, dataDir) {
		t.Fatalf("evidence at %q, not in the workers' data dir", d.Report.ProofDir)
	}
	if _, err := os.Stat(filepath.Join(d.Report.ProofDir, "evidence.json")); err != nil {
		t.Fatalf("no signed evidence from the verify queue: %v", err)
	}
	if !localgit.Has(context.Background(), filepath.Join(dataDir, "remotes", "acme", "finance.git"), base) {
		t.Fatal("the base commit was not registered with the execute queue's remote")
	}

	var quote struct {
		ContractHash string `json:"contract_hash"`
		Quote        struct {
			ExpiresAt time.Time `json:"expires_at"`
		} `json:"quote"`
	}
	data, err := os.ReadFile(rep.QuoteFile)
	if err != nil || json.Unmarshal(data, &quote) != nil || quote.ContractHash != rep.Hash || quote.Quote.ExpiresAt.Before(time.Now()) {
		t.Fatalf("quote file %s: %v %s", rep.QuoteFile, err, data)
	}

	// Someone else cannot start alice's quote; nothing starts.
	if code, msg := cliExit(t, append([]string{"contract", "start", out, "--requester", "bob"}, common...)...); code != 2 || !strings.Contains(msg, `quoted to "alice"`) {
		t.Fatalf("bob started alice's quote: exit %d %s", code, msg)
	}
	startOut := signoffproc.CLI(t, append([]string{"contract", "start", out, "--requester", "alice"}, common...)...)
	if !strings.Contains(startOut, "The quote stands until "+quote.Quote.ExpiresAt.Format(time.RFC3339)) {
		t.Fatalf("start output:\n%s", startOut)
	}
	var contractID struct {
		ID    string `json:"contract_id"`
		Stack struct {
			AppDir string `json:"app_dir"`
		} `json:"stack"`
	}
	cdata, _ := os.ReadFile(out)
	if err := json.Unmarshal(cdata, &contractID); err != nil || contractID.Stack.AppDir != "web" {
		t.Fatalf("contract %s: app dir %q (%v)", out, contractID.Stack.AppDir, err)
	}
	var st struct {
		State          string    `json:"state"`
		QuoteExpiresAt time.Time `json:"quote_expires_at"`
		Timeline       []struct {
			Type string            `json:"type"`
			Data map[string]string `json:"data"`
		} `json:"timeline"`
	}
	if err := json.Unmarshal([]byte(signoffproc.CLI(t, append([]string{"contract", "status", contractID.ID, "--json"}, common...)...)), &st); err != nil {
		t.Fatal(err)
	}
	if st.State != contracts.StateQuoted || !st.QuoteExpiresAt.Equal(quote.Quote.ExpiresAt) || len(st.Timeline) < 2 || st.Timeline[1].Type != contracts.EventBaseCheck ||
		st.Timeline[1].Data["checked_on"] != "queues" || !strings.Contains(st.Timeline[1].Data["failing_on_base"], "mobile-no-overflow") ||
		!strings.Contains(st.Timeline[1].Data[contracts.DataLazyVariants], "rejected by") {
		t.Fatalf("status %+v", st)
	}
	signoffproc.CLI(t, append([]string{"contract", "cancel", contractID.ID}, common...)...)

	if os.Getenv(temporaltest.EnvRecordHistories) != "" {
		c := signoffproc.DialDev(t, dataDir, addr)
		if err := c.GetWorkflow(context.Background(), contractapi.WorkflowID(contractID.ID), "").Get(context.Background(), nil); err != nil {
			t.Fatalf("the cancelled contract: %v", err)
		}
		temporaltest.RecordHistory(t, c, contractapi.WorkflowID(contractID.ID), "q1-quoted-checked-cancelled")
		for _, n := range d.Report.Notes {
			if id := baseCheckID.FindString(n); id != "" {
				temporaltest.RecordHistory(t, c, id, "d2-base-check-lazy-variants")
			}
		}
	}
}

var baseCheckID = regexp.MustCompile(`discriminate-[a-z0-9-]+-[0-9a-f]{8}`)

// cliExit runs a signoff command expected to fail and returns its exit code and output.
func cliExit(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(signoffproc.Binary(t), args...)
	cmd.Dir = signoffproc.RepoRoot()
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}
