package contract_test

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/signoff/signoff/authoring"
	"github.com/signoff/signoff/authoring/criteria"
	"github.com/signoff/signoff/authoring/pricing"
	"github.com/signoff/signoff/authoring/survey"
	"github.com/signoff/signoff/cmd/signoff/internal/cmd/contract"
	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/fixtures/finance"
	"github.com/signoff/signoff/fixtures/fixturerepo"
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/internal/settings"
	"github.com/signoff/signoff/internal/signing"
	"github.com/signoff/signoff/internal/verify"
)

const newGoal = "Make the Watchlist page work well on mobile: cards instead of the table below 640px, desktop table kept."

// monorepo materializes the finance app in web/ of a repository (a traversable directory, so
// the preview user can build it) and returns the repository root.
func monorepo(t *testing.T) string {
	t.Helper()
	m := fstest.MapFS{"README.md": {Data: []byte("monorepo\n"), Mode: 0o644}}
	err := fs.WalkDir(finance.Files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := finance.Files.ReadFile(p)
		m["web/"+p] = &fstest.MapFile{Data: b, Mode: 0o644}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	root, err := os.MkdirTemp("", "contract-new-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if err := os.Chmod(root, 0o711); err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(root, "repo")
	if _, err := fixturerepo.MaterializeFS(m, repo); err != nil {
		t.Fatal(err)
	}
	return repo
}

// newOpts are a `contract new` run's options with this process's settings, as the command
// would read them (the unit tier's browser that points nowhere included).
func newOpts(io *iostreams.IO, repo, out string) *contract.NewOptions {
	s, _ := settings.Load(os.Getenv)
	return &contract.NewOptions{IO: io, Repo: repo, Goal: newGoal, Out: out, NoCheck: true, Base: "HEAD",
		Requester: "ann", DataDir: filepath.Join(filepath.Dir(out), "data"), Settings: s,
		Now: func() time.Time { return time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC) }}
}

func TestNewWritesContractFromSubfolder(t *testing.T) {
	repo := monorepo(t)
	out := filepath.Join(t.TempDir(), "c.json")
	io, stdout, stderr := iostreams.Test()
	if err := contract.RunNew(newOpts(io, filepath.Join(repo, "web"), out)); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	text := stdout.String()
	for _, want := range []string{"(app in web/)", "mobile-no-overflow", "mobile-cards", "desktop-table", "test hook [data-testid=\"watchlist-card\"]",
		"BaseCheck: not run (--no-check", "Quote: ", "expires 2026-03-02T09:00:00Z", "Contract written to " + out, "Contract hash (approve this): "} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	c, err := contracts.Load(data, contracts.LoadOptions{})
	if err != nil {
		t.Fatalf("written contract does not load: %v", err)
	}
	h, _ := contracts.Hash(*c)
	if !strings.Contains(text, "Contract hash (approve this): "+h) {
		t.Errorf("printed hash is not the file's hash %s", h)
	}
	if c.Verifier != verify.Ref() || c.Repo.Owner != "local" || c.Stack.Build != "cd web && npm run build" {
		t.Errorf("contract %+v %+v %+v", c.Verifier, c.Repo, c.Stack)
	}
	// `contract validate` agrees. Asking again is another quote: a contract of its own, which
	// does not replace the first's file.
	io2, out2, _ := iostreams.Test()
	if err := contract.RunValidate(&contract.ValidateOptions{IO: io2, File: out}); err != nil || !strings.Contains(out2.String(), h) {
		t.Errorf("validate: %v %s", err, out2)
	}
	io3, _, errOut3 := iostreams.Test()
	if err := contract.RunNew(newOpts(io3, filepath.Join(repo, "web", "app"), out)); err == nil || !strings.Contains(err.Error(), "exists with other content") {
		t.Errorf("same goal again over the first's file: %v %s", err, errOut3)
	}
	if c2 := readContract(t, out); c2.ContractID != c.ContractID {
		t.Errorf("the first quote's file was replaced: %s", c2.ContractID)
	}
	out4 := filepath.Join(t.TempDir(), "again.json")
	io4, _, errOut4 := iostreams.Test()
	if err := contract.RunNew(newOpts(io4, filepath.Join(repo, "web", "app"), out4)); err != nil {
		t.Fatalf("same goal again: %v %s", err, errOut4)
	}
	if again := readContract(t, out4); again.ContractID == c.ContractID || again.Goal != c.Goal {
		t.Errorf("second quote %s (goal %q), first %s", again.ContractID, again.Goal, c.ContractID)
	}
}

func TestNewJSON(t *testing.T) {
	repo := monorepo(t)
	out := filepath.Join(t.TempDir(), "c.json")
	io, stdout, _ := iostreams.Test()
	o := newOpts(io, repo, out)
	o.JSON = true
	if err := contract.RunNew(o); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Offered      bool                `json:"offered"`
		Hash         string              `json:"contract_hash"`
		File         string              `json:"contract_file"`
		Contract     *contracts.Contract `json:"contract"`
		Survey       *survey.Survey      `json:"survey"`
		Estimate     *pricing.Estimate   `json:"quote"`
		Draft        *criteria.Draft     `json:"draft"`
		Error        map[string]any      `json:"error"`
		Discriminate map[string]any      `json:"discrimination"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if !got.Offered || got.File != out || len(got.Hash) != 64 || got.Contract == nil || got.Survey.AppDir != "web" || got.Estimate.Price.Amount < 50 || got.Error != nil {
		t.Errorf("json report: %s", stdout)
	}
	if len(got.Draft.Plan) != len(got.Contract.Criteria) {
		t.Errorf("plan %v", got.Draft.Plan)
	}
}

func TestNewRefusesBadInput(t *testing.T) {
	repo := monorepo(t)
	dir := t.TempDir()
	existing := filepath.Join(dir, "existing.json")
	if err := os.WriteFile(existing, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		edit  func(o *contract.NewOptions)
		want  string
		check func(t *testing.T)
	}{
		{name: "no goal", edit: func(o *contract.NewOptions) { o.Goal = " " }, want: "--goal"},
		{name: "subjective", edit: func(o *contract.NewOptions) { o.Goal = "Make the watchlist look nicer." }, want: "refused (subjective)"},
		{name: "out of scope", edit: func(o *contract.NewOptions) { o.Goal = "Rewrite the app in Rust." }, want: "refused (out_of_scope)"},
		{name: "not allowed", edit: func(o *contract.NewOptions) { o.Allow = []string{"acme/*"} }, want: "not on the repository allowlist"},
		{name: "bad pattern", edit: func(o *contract.NewOptions) { o.Allow = []string{"acme"} }, want: "owner/name"},
		{name: "bad budget", edit: func(o *contract.NewOptions) { o.Budget = "-3" }, want: "--budget"},
		{name: "budget too small", edit: func(o *contract.NewOptions) { o.Budget = "5" }, want: "not weakened"},
		{name: "bad route", edit: func(o *contract.NewOptions) { o.Routes = []string{"http://evil/"} }, want: "route"},
		{name: "not a repo", edit: func(o *contract.NewOptions) { o.Repo = dir }, want: "not inside a git repository"},
		{name: "bad base", edit: func(o *contract.NewOptions) { o.Base = "no-such-branch" }, want: "not a commit"},
		{name: "bad check", edit: func(o *contract.NewOptions) { o.NoCheck, o.Check = false, "sometimes" }, want: "--check"},
		{name: "out exists", edit: func(o *contract.NewOptions) { o.Out = existing }, want: "--force",
			check: func(t *testing.T) {
				if b, _ := os.ReadFile(existing); string(b) != "keep me\n" {
					t.Errorf("existing file changed: %q", b)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "c.json")
			io, _, stderr := iostreams.Test()
			o := newOpts(io, repo, out)
			c.edit(o)
			err := contract.RunNew(o)
			if code := iostreams.ExitCode(err); code != iostreams.ExitBadInput {
				t.Fatalf("exit %d (%v), want 2", code, err)
			}
			msg := stderr.String()
			if err != nil {
				msg += err.Error()
			}
			if !strings.Contains(msg, c.want) {
				t.Errorf("message %q lacks %q", msg, c.want)
			}
			if o.Out == out {
				if _, err := os.Stat(out); err == nil {
					t.Error("a contract was written")
				}
			}
			if c.check != nil {
				c.check(t)
			}
		})
	}
}

// stubChecker reports every criterion as already passing: a vacuous contract.
type stubChecker struct{}

func (stubChecker) CheckBase(_ context.Context, c contracts.Contract) (*authoring.BaseReport, error) {
	r := &authoring.BaseReport{CommitSHA: c.Repo.BaseCommitSHA, BuiltSHA: c.Repo.BaseCommitSHA}
	for _, cr := range c.Criteria {
		r.Results = append(r.Results, authoring.BaseResult{CriterionID: cr.ID, Outcome: authoring.OutcomePass})
	}
	return r, nil
}

func TestNewVacuousIsNotOffered(t *testing.T) {
	repo := monorepo(t)
	out := filepath.Join(t.TempDir(), "c.json")
	io, stdout, stderr := iostreams.Test()
	o := newOpts(io, repo, out)
	o.NoCheck, o.Checker = false, stubChecker{}
	err := contract.RunNew(o)
	if iostreams.ExitCode(err) != iostreams.ExitFailure || !strings.Contains(stderr.String(), "vacuous") {
		t.Fatalf("exit %d, stderr %s", iostreams.ExitCode(err), stderr)
	}
	if !strings.Contains(stdout.String(), "regression guard") || strings.Contains(stdout.String(), "Contract hash") {
		t.Errorf("output:\n%s", stdout)
	}
	// A contract that is not offered has no price.
	if strings.Contains(stdout.String(), "Quote: ") || !strings.Contains(stdout.String(), "No quote:") {
		t.Errorf("a refused contract printed a price:\n%s", stdout)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a vacuous contract was written")
	}
}

func TestNewFlagsReachOptions(t *testing.T) {
	io, _, _ := iostreams.Test()
	var got *contract.NewOptions
	f := cmdutil.New(io)
	parent := &cobra.Command{Use: "signoff"}
	parent.PersistentFlags().StringVar(&f.DataDir, "data-dir", ".signoff", "")
	parent.AddCommand(contract.NewCmdNew(f, func(o *contract.NewOptions) error { got = o; return nil }))
	parent.SetArgs([]string{"new", "--repo", "r", "--goal", "g", "--route", "/a", "--route", "/b", "--json", "--out", "f.json",
		"--no-check", "--base", "abc", "--name", "o/n", "--allow", "o/*", "--budget", "49.50", "--data-dir", "/d", "--run-as", "-",
		"--check", "queues", "--temporal-address", "h:1"})
	if err := parent.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Repo != "r" || got.Goal != "g" || strings.Join(got.Routes, ",") != "/a,/b" || !got.JSON || got.Out != "f.json" || !got.NoCheck ||
		got.Base != "abc" || got.Name != "o/n" || strings.Join(got.Allow, ",") != "o/*" || got.Budget != "49.50" || got.DataDir != "/d" || got.RunAs != "-" ||
		got.Check != contract.CheckQueues || got.Conn.Address != "h:1" {
		t.Fatalf("options %+v", got)
	}
}

// TestNewChecksBaseInBrowser runs the real base check: the app in web/ is built
// from its folder of the base commit and the Watchlist criteria run in Chromium.
func TestNewChecksBaseInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the Next.js fixture and drives Chromium; skipped in -short mode")
	}
	mod := moduleRoot(t)
	if err := verify.DefaultConfig().CheckSetup(true); err != nil {
		t.Fatalf("browser setup missing: %v\nrun `%s` from the repository root", err, verify.SetupTask)
	}
	deps := filepath.Join(mod, ".cache", "finance-deps")
	if err := fixtureDepsCurrent(mod, deps); err != nil {
		t.Fatalf("the finance fixture's shared node_modules is missing or stale: run `go tool task fixture:setup` (%v)", err)
	}
	repo := monorepo(t)
	out := filepath.Join(t.TempDir(), "c.json")
	io, stdout, stderr := iostreams.Test()
	o := newOpts(io, filepath.Join(repo, "web"), out)
	o.NoCheck, o.SharedDeps = false, deps
	o.DataDir = filepath.Join(filepath.Dir(repo), "data")
	start := time.Now()
	if err := contract.RunNew(o); err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout, stderr)
	}
	t.Logf("contract new with a base check took %s\n%s", time.Since(start).Round(time.Millisecond), stdout)
	for _, want := range []string{"FAIL   mobile-no-overflow", "scrollWidth = 927, innerWidth = 390", "FAIL   mobile-cards",
		"pass   desktop-table", "not vacuous: 2 of 6", "built the app folder web/", "Contract hash (approve this): "} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "..")
}

func fixtureDepsCurrent(mod, deps string) error {
	h := sha256.New()
	for _, f := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(mod, "fixtures", "finance", f))
		if err != nil {
			return err
		}
		h.Write(b)
	}
	stamp, err := os.ReadFile(filepath.Join(deps, ".stamp"))
	if err != nil {
		return err
	}
	if strings.TrimSpace(string(stamp)) != hex.EncodeToString(h.Sum(nil)) {
		return os.ErrNotExist
	}
	return nil
}

// The quote file written beside the contract is what `contract start` holds the workflow to;
// `contract start` refuses it when it expired, or belongs to another contract or requester,
// before it reads any keys or reaches Temporal.
func TestQuoteFileGuardsStart(t *testing.T) {
	repo := monorepo(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "w.contract.json")
	io, stdout, stderr := iostreams.Test()
	opts := newOpts(io, repo, out)
	// The deployment's published keys: the quote names them by fingerprint.
	var fps []string
	for _, name := range []string{datadir.VerifierKeyFile, datadir.ControlKeyFile} {
		path := filepath.Join(datadir.Paths(opts.DataDir).Keys, name)
		priv, err := signing.LoadOrCreate(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := signing.WritePublic(path, priv); err != nil {
			t.Fatal(err)
		}
		fps = append(fps, contracts.KeyFingerprint(priv.Public().(ed25519.PublicKey)))
	}
	if err := contract.RunNew(opts); err != nil {
		t.Fatalf("%v %s", err, stderr)
	}
	qpath := contract.QuotePath(out)
	if qpath != filepath.Join(dir, "w.quote.json") || !strings.Contains(stdout.String(), "(quote: "+qpath+")") {
		t.Fatalf("quote path %s; output:\n%s", qpath, stdout)
	}
	qf, err := contract.LoadQuote(qpath)
	if err != nil || qf == nil {
		t.Fatalf("quote file: %v", err)
	}
	data, _ := os.ReadFile(out)
	c, err := contracts.Load(data, contracts.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hash, _ := contracts.Hash(*c)
	if qf.ContractHash != hash || qf.Requester != "ann" || !qf.Estimate.ExpiresAt.Equal(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)) || qf.Estimate.Price != c.Price {
		t.Fatalf("quote %+v for contract %s", qf, hash)
	}
	if err := qf.Check(qpath, hash, "ann", qf.Estimate.ExpiresAt.Add(-time.Second)); err != nil {
		t.Fatalf("a valid quote refused: %v", err)
	}
	if qf.VerifierKeyFingerprint != fps[0] || qf.ControlKeyFingerprint != fps[1] {
		t.Fatalf("quote names keys %q and %q, the data dir's are %v", qf.VerifierKeyFingerprint, qf.ControlKeyFingerprint, fps)
	}
	// A quote written before the fingerprints existed still loads and still guards start.
	var old map[string]any
	raw, _ := os.ReadFile(qpath)
	if err := json.Unmarshal(raw, &old); err != nil {
		t.Fatal(err)
	}
	delete(old, "verifier_key_fingerprint")
	delete(old, "control_key_fingerprint")
	oldPath := filepath.Join(dir, "old.quote.json")
	raw, _ = json.Marshal(old)
	if err := os.WriteFile(oldPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if oq, err := contract.LoadQuote(oldPath); err != nil || oq == nil || oq.Check(oldPath, hash, "ann", qf.Estimate.ExpiresAt.Add(-time.Second)) != nil {
		t.Fatalf("a quote without fingerprints: %v", err)
	}

	dial := func(context.Context) (client.Client, error) {
		t.Error("a refused quote reached Temporal")
		return nil, errors.New("no")
	}
	start := func(file, requester, quote string) (int, string) {
		io, _, stderr := iostreams.Test()
		dataDir := filepath.Join(dir, "no-keys-here")
		err := contract.RunStart(context.Background(), &contract.StartOptions{Factory: &cmdutil.Factory{IO: io, Conn: &cmdutil.Conn{}, DataDir: dataDir, Dial: dial},
			File: file, Requester: requester, Quote: quote})
		msg := stderr.String()
		if err != nil {
			msg += err.Error()
		}
		return iostreams.ExitCode(err), msg
	}
	// The quote in the test is dated 2026-03-01: it expired long before the machine's today.
	if code, msg := start(out, "ann", ""); code != 2 || !strings.Contains(msg, "expired at 2026-03-02T09:00:00Z") {
		t.Errorf("expired quote: exit %d %s", code, msg)
	}
	// A fresh quote for ann, then the checks that do not depend on time.
	fresh := *qf
	fresh.Estimate.ExpiresAt = time.Now().Add(time.Hour).UTC()
	writeJSON(t, qpath, fresh)
	if code, msg := start(out, "bob", ""); code != 2 || !strings.Contains(msg, `quoted to "ann"`) {
		t.Errorf("another requester: exit %d %s", code, msg)
	}
	edited := strings.Replace(string(data), c.Goal, c.Goal+" Also the footer.", 1)
	if err := os.WriteFile(out, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, msg := start(out, "ann", ""); code != 2 || !strings.Contains(msg, "changed after it was quoted") {
		t.Errorf("edited contract: exit %d %s", code, msg)
	}
	if code, msg := start(out, "ann", filepath.Join(dir, "missing.quote.json")); code != 2 || !strings.Contains(msg, "no quote file") {
		t.Errorf("missing --quote: exit %d %s", code, msg)
	}
	if err := os.WriteFile(qpath, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, msg := start(out, "ann", ""); code != 2 || !strings.Contains(msg, "not a Signoff quote file") {
		t.Errorf("corrupt quote: exit %d %s", code, msg)
	}
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The per-requester limit holds across `contract new` processes: the window lives in the data
// dir, not in memory.
func TestNewRateLimitSpansProcesses(t *testing.T) {
	repo := monorepo(t)
	dir := t.TempDir()
	t.Setenv("SIGNOFF_RATE_LIMIT", "2")
	run := func(requester string) (int, string) {
		io, _, stderr := iostreams.Test()
		o := newOpts(io, repo, filepath.Join(t.TempDir(), "c.json"))
		o.DataDir, o.Requester, o.Now = filepath.Join(dir, "data"), requester, nil
		var err error
		if o.Settings, err = cmdutil.New(io).Settings(); err != nil {
			return iostreams.ExitCode(err), err.Error()
		}
		err = contract.RunNew(o)
		msg := stderr.String()
		if err != nil {
			msg += err.Error()
		}
		return iostreams.ExitCode(err), msg
	}
	for i := 0; i < 2; i++ {
		if code, msg := run("ann"); code != 0 {
			t.Fatalf("request %d: exit %d %s", i+1, code, msg)
		}
	}
	if code, msg := run("ann"); code != 2 || !strings.Contains(msg, "limit 2") {
		t.Fatalf("third request in the hour: exit %d %s", code, msg)
	}
	if code, msg := run("bob"); code != 0 {
		t.Fatalf("another requester: exit %d %s", code, msg)
	}
	// A limit that does not parse stops the command itself, before any survey.
	t.Setenv("SIGNOFF_RATE_LIMIT", "lots")
	io, _, _ := iostreams.Test()
	cmd := contract.NewCmdNew(cmdutil.New(io), nil)
	cmd.SetArgs([]string{"--repo", repo, "--goal", newGoal, "--no-check", "--out", filepath.Join(t.TempDir(), "c.json")})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	if err := cmd.Execute(); iostreams.ExitCode(err) != 2 || !strings.Contains(err.Error(), "SIGNOFF_RATE_LIMIT") {
		t.Fatalf("bad limit: exit %d %v", iostreams.ExitCode(err), err)
	}
}

// --check queues does not fall back: with no server it exits 1, saying so, and writes nothing.
func TestNewCheckQueuesNeedsAServer(t *testing.T) {
	repo := monorepo(t)
	out := filepath.Join(t.TempDir(), "c.json")
	io, _, stderr := iostreams.Test()
	o := newOpts(io, repo, out)
	o.NoCheck, o.Check, o.Conn.Address = false, contract.CheckQueues, "127.0.0.1:1"
	err := contract.RunNew(o)
	if iostreams.ExitCode(err) != iostreams.ExitFailure || !strings.Contains(stderr.String(), "127.0.0.1:1") {
		t.Fatalf("exit %d: %s", iostreams.ExitCode(err), stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a contract was written without its base check")
	}
}

func readContract(t *testing.T, path string) *contracts.Contract {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := contracts.Load(data, contracts.LoadOptions{})
	if err != nil {
		t.Fatalf("%s does not load: %v", path, err)
	}
	return c
}
