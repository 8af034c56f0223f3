package e2e_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/e2e/signoffproc"
	"github.com/signoff/signoff/fixtures/fixturerepo"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/preview"
	"github.com/signoff/signoff/internal/realapps"
	"github.com/signoff/signoff/workers"
	"github.com/signoff/signoff/workflows/contractapi"
)

// The user's own addition to a generated app: a pricing page whose three plan cards sit in a
// row of fixed-width cards, so a phone scrolls sideways. Nothing here is for Signoff.
const (
	pricingPage = `import styles from "./pricing.module.css";

const plans = [
  { name: "Starter", price: "$9", blurb: "For a side project" },
  { name: "Team", price: "$29", blurb: "For a small team" },
  { name: "Business", price: "$99", blurb: "For a growing company" },
];

export default function Pricing() {
  return (
    <main className={styles.main}>
      <h1>Pricing</h1>
      <div className={styles.plans}>
        {plans.map((p) => (
          <section key={p.name} className={styles.plan}>
            <h2>{p.name}</h2>
            <p className={styles.price}>{p.price} a month</p>
            <p>{p.blurb}</p>
          </section>
        ))}
      </div>
    </main>
  );
}
`
	pricingCSS = `.main { padding: 32px; }
.plans { display: flex; gap: 24px; }
.plan { flex: 0 0 320px; border: 1px solid #ccc; border-radius: 12px; padding: 24px; }
.price { font-size: 28px; font-weight: 600; }
`
	// Both fixes give each plan the test hook the contract declares. The plausible wrong one
	// shrinks the cards side by side, so a phone no longer scrolls but nothing stacks.
	pricingCSSWrong = pricingCSS + `@media (max-width: 640px) {
  .main { padding: 16px; }
  .plans { gap: 8px; }
  .plan { flex: 1 1 0; min-width: 0; padding: 8px; }
  .plan h2, .price { font-size: 16px; }
}
`
	// The right one: below 640px the plans stack and take the width there is.
	pricingCSSRight = pricingCSS + `@media (max-width: 640px) {
  .main { padding: 16px; }
  .plans { flex-direction: column; }
  .plan { flex: none; }
}
`
	realAppGoal = "Make the pricing cards stack vertically on phones so they fit a 390px screen"
)

// fixingCLI is the coding CLI of this test, a labelled stand-in for a real one: a bash line
// that writes the wrong fix on its first run and, given the verifier's feedback, the right one
// on the next. It runs inside the executor's sandbox like any coding CLI.
func fixingCLI() string {
	enc := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	page := strings.Replace(pricingPage, `<section key={p.name} className={styles.plan}>`,
		`<section key={p.name} className={styles.plan} data-testid="pricing-card">`, 1)
	script := fmt.Sprintf(`cd app/pricing && echo %s | base64 -d > page.tsx && if grep -q "flex: 1 1 0" pricing.module.css; then echo %s | base64 -d > pricing.module.css; echo "stacked the plans below 640px"; else echo %s | base64 -d > pricing.module.css; echo "shrank the plans to fit"; fi`,
		enc(page), enc(pricingCSSRight), enc(pricingCSSWrong))
	return "bash -c '" + script + "' fix {prompt_file}"
}

// TestRealAppsEndToEnd runs Signoff as a user would on apps nobody on the project wrote:
// create-next-app's output (npm and pnpm in the suite; with cacheComponents off and bun
// too under stress) plus the
// user's pricing page, with no /__verification route and no change made for Signoff. On each:
// `contract new` surveys it (the package manager the lockfile names), drafts criteria and
// checks them on the base commit on the queues of a running `signoff dev`; the contract is
// approved and paid; the coding CLI's first fix (cards shrunk side by side: nothing scrolls,
// nothing stacks) is not_satisfied, its repair (stacked cards) satisfied; the payment is captured and `proof verify` accepts the
// proof. On the first app the goal is quoted a second time: a contract of its own, which
// leaves the first's state, proof and payment as they were, and the first cannot be started
// again.
func TestRealAppsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("generates real Next.js apps from the npm registry, builds each three times and drives Chromium")
	}
	root := signoffproc.RepoRoot()
	signoffproc.RequireSetup(t, filepath.Join(root, ".cache", "pw-driver", "1.64.1", "package", "cli.js"), "go tool task browser:setup")
	tools := preview.FindPackageManagers("")
	for _, r := range realapps.Recipes {
		if _, ok := tools[r.PM]; !ok && r.PM != "npm" {
			t.Fatalf("%s is not installed: run `go tool task pm:setup`", r.PM)
		}
	}
	var roots []string
	for _, bin := range tools {
		roots = append(roots, preview.InstallRoot(bin))
	}
	maker, err := realapps.NewMaker(root, preview.DefaultUser, tools, roots, t.Logf)
	if err != nil {
		t.Fatal(err)
	}

	dataDir := t.TempDir()
	port := signoffproc.FreePort(t)
	conn := []string{"--data-dir", dataDir, "--temporal-address", "127.0.0.1:" + port}
	dev := signoffproc.Start(t, []string{workers.EnvExecutorCommand + "=" + fixingCLI(), workers.EnvExecutorNetwork + "=none"},
		"dev", "--data-dir", dataDir, "--temporal-port", port, "--ui-port", "0", "--loopback", "127.0.0.1:0",
		"--public", "127.0.0.1:0", "--no-chat", "--allow", "acme/*")
	signoffproc.WaitOutput(t, dev, "Ctrl-C stops.", 2*time.Minute)

	for i, r := range realapps.Recipes {
		// The suite carries two package managers end to end (npm, pnpm); internal/preview
		// still builds every recipe, and `go tool task stress` (SIGNOFF_STRESS=1) runs them all.
		if os.Getenv("SIGNOFF_STRESS") == "" && r.Name != "cna-npm" && r.Name != "cna-pnpm" {
			t.Logf("%s: end to end only under go tool task stress", r.Name)
			continue
		}
		t.Run(r.Name, func(t *testing.T) {
			begin := time.Now()
			tree, err := maker.Make(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			app, err := realapps.Files(tree)
			if err != nil {
				t.Fatal(err)
			}
			app["app/pricing/page.tsx"] = &fstest.MapFile{Data: []byte(pricingPage), Mode: 0o644}
			app["app/pricing/pricing.module.css"] = &fstest.MapFile{Data: []byte(pricingCSS), Mode: 0o644}
			if _, ok := app["app/api/verification/route.ts"]; ok {
				t.Fatal("the generated app has a verification route of its own")
			}
			repo := filepath.Join(t.TempDir(), r.Name)
			base, err := fixturerepo.MaterializeFS(app, repo)
			if err != nil {
				t.Fatal(err)
			}
			name := "acme/" + r.Name
			out := filepath.Join(t.TempDir(), "pricing.contract.json")
			first := quoteRealApp(t, conn, repo, name, out, true)
			if first.contract.Stack.PackageManager != r.PM {
				t.Errorf("the contract installs with %q, the lockfile says %s", first.contract.Stack.PackageManager, r.PM)
			}
			t.Logf("%s: quoted %s after a base check on %s (%s)", r.Name, first.contract.ContractID, base[:8], time.Since(begin).Round(time.Second))

			id := first.contract.ContractID
			signoffproc.CLI(t, append([]string{"contract", "start", out, "--requester", "alice"}, conn...)...)
			signoffproc.CLI(t, append([]string{"contract", "approve", id, first.hash, "--as", "alice"}, conn...)...)
			signoffproc.CLI(t, append([]string{"payment", "authorize", id}, conn...)...)
			signoffproc.CLI(t, append([]string{"contract", "watch", id}, conn...)...)
			st := realAppStatus(t, conn, id)
			if st.Verdict != contracts.Satisfied || st.Payment.State != capability.PaymentCaptured || !st.MergeEligible || len(st.Attempts) < 2 {
				t.Fatalf("%s: verdict %q, payment %q, merge eligible %v, %d attempts\n%s", r.Name, st.Verdict, st.Payment.State, st.MergeEligible, len(st.Attempts), dev.Output())
			}
			if a := st.Attempts[0]; a.Verdict != contracts.NotSatisfied || !strings.Contains(fmt.Sprint(a.Reasons), "stacked-pricing-cards") ||
				strings.Contains(fmt.Sprint(a.Reasons), "mobile-no-overflow") {
				t.Errorf("the wrong fix fits the phone but does not stack: want only the stacking criterion failed, got %s %+v", a.Verdict, a.Reasons)
			}
			if a := st.Attempts[len(st.Attempts)-1]; a.Verdict != contracts.Satisfied {
				t.Errorf("the right fix: %s %+v", a.Verdict, a.Reasons)
			}
			proofDir := filepath.Join(dataDir, "proofs", id)
			if code, msg := cliExit(t, "proof", "verify", proofDir, "--keys", filepath.Join(dataDir, "keys")); code != 0 {
				t.Fatalf("proof verify %s: exit %d\n%s", proofDir, code, msg)
			}
			t.Logf("%s: %s, %d attempts, payment %s, proof verified (%s in all)", r.Name, st.Verdict, len(st.Attempts), st.Payment.State, time.Since(begin).Round(time.Second))

			if i > 0 {
				return
			}
			// The same goal quoted again is another contract; the settled one stays settled.
			proofBefore := treeDigests(t, proofDir)
			again := filepath.Join(t.TempDir(), "again.contract.json")
			second := quoteRealApp(t, conn, repo, name, again, false)
			if second.contract.ContractID == id {
				t.Fatalf("quoting the goal again gave the same contract id %s", id)
			}
			if code, msg := cliExit(t, append([]string{"contract", "start", out, "--requester", "alice"}, conn...)...); code == 0 || !strings.Contains(msg, id) {
				t.Fatalf("starting the settled contract again: exit %d\n%s", code, msg)
			}
			signoffproc.CLI(t, append([]string{"contract", "start", again, "--requester", "alice"}, conn...)...)
			signoffproc.CLI(t, append([]string{"contract", "cancel", second.contract.ContractID}, conn...)...)
			after := realAppStatus(t, conn, id)
			if after.State != st.State || after.Verdict != st.Verdict || after.Payment != st.Payment || len(after.Timeline) != len(st.Timeline) {
				t.Errorf("the first contract moved: %s/%s/%+v, was %s/%s/%+v", after.State, after.Verdict, after.Payment, st.State, st.Verdict, st.Payment)
			}
			if got := treeDigests(t, proofDir); fmt.Sprint(got) != fmt.Sprint(proofBefore) {
				t.Error("the first contract's proof folder changed")
			}
		})
	}
}

type realAppQuote struct {
	contract contracts.Contract
	hash     string
}

// quoteRealApp runs `contract new` and returns the contract it wrote; with check, the base
// check runs on the queues and must fail the change the goal asks for.
func quoteRealApp(t *testing.T, conn []string, repo, name, out string, check bool) realAppQuote {
	t.Helper()
	where := "none"
	if check {
		where = "queues"
	}
	stdout := signoffproc.CLI(t, append([]string{"contract", "new", "--repo", repo, "--name", name, "--allow", "acme/*", "--requester", "alice",
		"--goal", realAppGoal, "--check", where, "--out", out, "--json"}, conn...)...)
	var rep struct {
		Offered   bool   `json:"offered"`
		Hash      string `json:"contract_hash"`
		BaseCheck struct {
			Checked bool     `json:"checked"`
			Failing []string `json:"failing"`
		} `json:"discrimination"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if !rep.Offered || len(rep.Hash) != 64 {
		t.Fatalf("not offered: %s", stdout)
	}
	if failing := strings.Join(rep.BaseCheck.Failing, ","); check && (!rep.BaseCheck.Checked ||
		!strings.Contains(failing, "mobile-no-overflow") || !strings.Contains(failing, "stacked-pricing-cards")) {
		t.Fatalf("the base check does not fail what the goal is about (the overflow and the stacking): %s", stdout)
	}
	var c contracts.Contract
	readJSON(t, out, &c)
	return realAppQuote{contract: c, hash: rep.Hash}
}

func realAppStatus(t *testing.T, conn []string, id string) contractapi.Status {
	t.Helper()
	var st contractapi.Status
	if err := json.Unmarshal([]byte(signoffproc.CLI(t, append([]string{"contract", "status", id, "--json"}, conn...)...)), &st); err != nil {
		t.Fatal(err)
	}
	return st
}
