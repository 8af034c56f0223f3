package proofpage

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/proofstore"
	"github.com/signoff/signoff/internal/proofstore/prooftest"
)

func render(t *testing.T, root, slug string, o Options, links Links) string {
	t.Helper()
	p, err := Build(root, slug, o)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := RenderPage(&b, p, links); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// text strips tags and unescapes the few entities html/template writes, for substring checks.
func text(html string) string {
	s := regexp.MustCompile(`<[^>]*>`).ReplaceAllString(html, "")
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&#34;", `"`, "&#39;", "'", "&amp;", "&", "&#43;", "+").Replace(s)
}

func TestPageW1AndW2(t *testing.T) {
	r := buildRuns(t, nil)
	w1 := text(render(t, r.root, r.w1.Contract.ContractID, keys(), Links{}))
	for _, want := range []string{"Satisfied", r.w1.Hash, r.w1.Contract.Repo.BaseCommitSHA, r.w1.Bundles[0].ImplementationSHA,
		r.w1.Evidence[0].RuntimeSHA, "3 file(s), +64 -5", LocalPaymentLabel, "6 of 6 criteria passed", "checks hold"} {
		if !strings.Contains(w1, want) {
			t.Errorf("W1 page lacks %q", want)
		}
	}
	w2html := render(t, r.root, w2ID, keys(), Links{})
	w2 := text(w2html)
	for _, want := range []string{"Not satisfied", "on attempt 3 of 3", "scrollWidth = 927, innerWidth = 390",
		"scroll_width = 927", "inner_width = 390", "No base screenshot", "checks hold"} {
		if !strings.Contains(w2, want) {
			t.Errorf("W2 page lacks %q", want)
		}
	}
	// The failed criterion is marked failed in every attempt's table.
	if n := strings.Count(w2html, `data-criterion="mobile-no-overflow" data-result="fail"`); n != 3 {
		t.Errorf("mobile-no-overflow marked failed in %d attempt tables, want 3", n)
	}
	// Each criterion's trace is one click from its row, in every attempt's table.
	if n := strings.Count(w2html, `data-row-trace="trace-mobile-no-overflow.zip"`); n != 3 {
		t.Errorf("mobile-no-overflow's trace linked from %d rows, want 3", n)
	}
	if err := os.WriteFile(filepath.Join(outDir(t), "w2-unit.html"), []byte(w2html), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A failed build has no evidence: the page says the verifier did not run, and still verifies.
func TestPageBuildFailed(t *testing.T) {
	root := t.TempDir()
	c := prooftest.W1(t)
	c.ContractID = "w9-build-fails"
	prooftest.Build(t, root, prooftest.Spec{Contract: c, Attempts: []prooftest.Attempt{{BuildFailed: true}}})
	page := text(render(t, root, c.ContractID, keys(), Links{}))
	for _, want := range []string{"Not satisfied", "the build failed at: build", "No screenshots: the verifier did not run",
		"none: the verifier did not run", "checks hold", "not run"} {
		if !strings.Contains(page, want) {
			t.Errorf("build-failed page lacks %q", want)
		}
	}
}

// A tampered artifact turns the page's verification section into a failure notice.
func TestPageShowsFailedVerification(t *testing.T) {
	r := buildRuns(t, nil)
	name := r.w1.Evidence[0].Artifacts[0].Name
	path := filepath.Join(r.w1.Dirs[0], name)
	data, _ := os.ReadFile(path)
	data[len(data)/2] ^= 1
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	page := text(render(t, r.root, r.w1.Contract.ContractID, keys(), Links{}))
	if !strings.Contains(page, "checks failed") || !strings.Contains(page, "Do not rely on this proof") || !strings.Contains(page, "artifact "+name) {
		t.Fatalf("tampered artifact not reported on the page")
	}
}

// The signed settlement shows how the contract ended and whether it verifies; the timeline
// runs to the payment's end.
func TestPageShowsTheSignedSettlement(t *testing.T) {
	r := buildRuns(t, nil)
	s := prooftest.Settlement(t, r.w1, "payment_captured", "captured")
	prooftest.Settle(t, r.w1, s, prooftest.ControlKey)
	page := text(render(t, r.root, r.w1.Contract.ContractID, keys(), Links{}))
	for _, want := range []string{"Settlement", "payment_captured; payment captured", "signature and link to the last bundle verified", "payment_captured", "checks hold"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if !strings.Contains(page, s.TimelineHead) {
		t.Error("the timeline does not run to the settlement's head")
	}
	prooftest.Settle(t, r.w1, s, ed25519.NewKeyFromSeed(make([]byte, 32)))
	if page := text(render(t, r.root, r.w1.Contract.ContractID, keys(), Links{})); !strings.Contains(page, "does NOT verify") {
		t.Error("a settlement signed by another key is not flagged")
	}
}

// notShown declares bundle and evidence leaves the page does not show. Every other leaf must
// change the page when it changes.
var notShown = map[string][]string{
	proofstore.BundleFile:   {},
	proofstore.EvidenceFile: {},
}

// TestEveryLeafChangesThePage changes each leaf of bundle.json and evidence.json in turn (W1
// satisfied and W2 not_satisfied) and checks the rendered page differs. The page is built
// without keys, so a difference comes from the leaf itself, not from a failed signature.
func TestEveryLeafChangesThePage(t *testing.T) {
	r := buildRuns(t, nil)
	// A one-attempt W2 proof: its bundle carries failure reasons with observed values.
	root := t.TempDir()
	src := filepath.Join(r.root, w2ID, "attempt-1")
	if err := os.CopyFS(filepath.Join(root, w2ID, "attempt-1"), os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ root, slug, dir string }{
		{r.root, r.w1.Contract.ContractID, r.w1.Dirs[0]},
		{root, w2ID, filepath.Join(root, w2ID, "attempt-1", "try-1")},
	}
	counts := map[string]int{}
	for _, c := range cases {
		base := render(t, c.root, c.slug, Options{}, Links{})
		for _, file := range []string{proofstore.BundleFile, proofstore.EvidenceFile} {
			counts[file] += prooftest.ChangeEachLeaf(t, filepath.Join(c.dir, file), func(ptr string) {
				p, err := Build(c.root, c.slug, Options{})
				if err != nil {
					t.Fatalf("%s %s: %v", file, ptr, err)
				}
				var b bytes.Buffer
				if err := RenderPage(&b, p, Links{}); err != nil {
					t.Fatalf("%s %s: page does not render: %v", file, ptr, err)
				}
				if b.String() == base && !declared(file, ptr) {
					t.Errorf("%s %s%s: changing it leaves the page unchanged and it is not declared not-shown", c.slug, file, ptr)
				}
			})
		}
	}
	t.Logf("leaves changed, each changing the page: bundle.json %d, evidence.json %d; declared not shown: %v",
		counts[proofstore.BundleFile], counts[proofstore.EvidenceFile], notShown)
}

func declared(file, ptr string) bool {
	for _, p := range notShown[file] {
		if p == ptr {
			return true
		}
	}
	return false
}

func TestPRCommentAndChatSummary(t *testing.T) {
	r := buildRuns(t, nil)
	w1 := LoadAttempt(r.w1.Dirs[0])
	w2 := LoadAttempt(r.w2.Dirs[2])
	signers := Signers{VerifierFingerprint: contracts.KeyFingerprint(prooftest.VerifierPublicKey()), ControlFingerprint: contracts.KeyFingerprint(prooftest.ControlPublicKey())}
	pr1, err := PRComment(w1, "http://127.0.0.1:7233/proofs/w1-watchlist-mobile/", signers)
	if err != nil {
		t.Fatal(err)
	}
	pr2, err := PRComment(w2, "", Signers{})
	if err != nil {
		t.Fatal(err)
	}
	chat1, _ := ChatSummary(w1, "http://127.0.0.1:7233/proofs/w1-watchlist-mobile/")
	chat2, _ := ChatSummary(w2, "")
	for name, c := range map[string]struct {
		got  string
		want []string
	}{
		"W1 comment": {pr1, []string{"## Signoff: Satisfied (attempt 1 of 3)", "Criteria: 6 of 6 passed", "`" + r.w1.Hash + "`", LocalPaymentLabel, "[Proof page](http://127.0.0.1:7233/proofs/w1-watchlist-mobile/)",
			"| Verifier key (signs the evidence) | `" + signers.VerifierFingerprint + "` |", "| Control key (signs this bundle) | `" + signers.ControlFingerprint + "` |",
			"`signoff proof verify proofs/w1-watchlist-mobile/attempt-1/try-1 --keys keys --verifier-fingerprint " + signers.VerifierFingerprint + " --control-fingerprint " + signers.ControlFingerprint + "`"}},
		"W2 comment": {pr2, []string{"## Signoff: Not satisfied (attempt 3 of 3)", "scrollWidth = 927, innerWidth = 390", "`scroll_width = 927`", "(`<= inner_width = 390`)", "**fail**",
			"| Verifier key (signs the evidence) | not readable on the control worker", "--keys keys`"}},
		"W1 chat": {chat1, []string{"w1-watchlist-mobile: satisfied on attempt 1 of 3", "6 of 6 criteria passed", "Payment authorized (" + LocalPaymentLabel + ")", "Proof: http://127.0.0.1:7233/proofs/w1-watchlist-mobile/"}},
		"W2 chat": {chat2, []string{"not satisfied on attempt 3 of 3", "4 of 6 criteria passed", "scrollWidth = 927, innerWidth = 390", "more)"}},
	} {
		for _, w := range c.want {
			if !strings.Contains(c.got, w) {
				t.Errorf("%s lacks %q:\n%s", name, w, c.got)
			}
		}
		for _, bad := range []string{"escrow", "refund"} {
			if strings.Contains(strings.ToLower(c.got), bad) {
				t.Errorf("%s says %q", name, bad)
			}
		}
	}
	if strings.Contains(chat2, "\n") || len(chat2) > 600 {
		t.Errorf("chat summary is not short and on one line (%d bytes): %q", len(chat2), chat2)
	}
	// The Markdown table keeps its shape: every criteria row has the header's six pipes.
	for _, line := range strings.Split(pr2, "\n") {
		if strings.HasPrefix(line, "| ") && strings.Contains(line, "**") {
			if n := strings.Count(line, "|") - strings.Count(line, `\|`); n != 6 {
				t.Errorf("table row has %d cell separators: %s", n, line)
			}
		}
	}
	// With the page's address, the comment and the chat show the page's first screen: the
	// same sentence, and per viewport the base and implementation pictures linked to the page.
	pageURL := "http://127.0.0.1:7233/proofs/" + w2ID + "/"
	pr2u, err := PRComment(w2, pageURL, signers)
	if err != nil {
		t.Fatal(err)
	}
	chat2u, _ := ChatSummary(w2, pageURL)
	pg, err := Build(r.root, w2ID, keys())
	if err != nil {
		t.Fatal(err)
	}
	sentence := buildPageView(pg, Links{}).Lead.Sentence()
	if !strings.Contains(pr2u, "**"+mdText(sentence)+"**") || !strings.Contains(chat2u, w2ID+": "+strings.ToLower(sentence[:13])+sentence[13:]) {
		t.Errorf("the comment or the chat does not open with the page's sentence %q:\n%s\n%s", sentence, pr2u, chat2u)
	}
	for _, want := range []string{
		"| mobile 390×844: `mobile-no-overflow` **fail** | [![base, mobile 390×844](" + pageURL + "base/shot-mobile-no-overflow-390x844.png)](" + pageURL + "#pictures) | [![implementation, mobile 390×844](" + pageURL + "attempt-3/try-1/shot-mobile-no-overflow-390x844.png)](" + pageURL + "#pictures) |",
		"| desktop 1440×1000: `desktop-table` **pass** |",
	} {
		if !strings.Contains(pr2u, want) {
			t.Errorf("W2 comment lacks %q:\n%s", want, pr2u)
		}
	}
	// The pictures table has its header's four pipes; the criteria table keeps its six.
	pictures, criteria, _ := strings.Cut(pr2u, "### Criteria")
	for table, n := range map[string]int{pictures: 4, criteria: 6} {
		for _, line := range strings.Split(table, "\n") {
			if strings.HasPrefix(line, "| ") && strings.Contains(line, "**") {
				if got := strings.Count(line, "|") - strings.Count(line, `\|`); got != n {
					t.Errorf("table row has %d cell separators, want %d: %s", got, n, line)
				}
			}
		}
	}
	if !strings.Contains(chat2u, "Pictures, base | implementation: 390×844 "+pageURL+"base/shot-mobile-no-overflow-390x844.png | "+pageURL+"attempt-3/try-1/shot-mobile-no-overflow-390x844.png;") {
		t.Errorf("W2 chat does not link the first screen's pictures: %s", chat2u)
	}
	// A bundle alone (the control worker's view) still renders.
	if s, err := ChatSummaryOf(r.w2.Bundles[0], ""); err != nil || !strings.Contains(s, "not satisfied on attempt 1") {
		t.Errorf("ChatSummaryOf: %q, %v", s, err)
	}
	_ = os.WriteFile(filepath.Join(outDir(t), "w2-pr-comment.md"), []byte(pr2), 0o644)
	t.Logf("W2 chat summary (%d chars): %s", len(chat2), chat2)
}

func TestMarkdownEscaping(t *testing.T) {
	if got := mdText("a|b `c` *d* [e](f) <g>\nh"); got != "a\\|b \\`c\\` \\*d\\* \\[e\\](f) \\<g\\> h" {
		t.Errorf("mdText: %q", got)
	}
	if got := mdCode("x`y|z"); got != "``x`y\\|z``" {
		t.Errorf("mdCode: %q", got)
	}
}

// TestNoForbiddenWords scans this package's templates and Go string literals: Signoff
// authorizes, captures, or cancels an authorization; it holds no funds and returns none.
func TestNoForbiddenWords(t *testing.T) {
	scanned := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, "_test.go") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var texts []string
		if strings.HasSuffix(path, ".go") {
			f, err := parser.ParseFile(token.NewFileSet(), path, data, 0)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					texts = append(texts, lit.Value)
				}
				return true
			})
		} else {
			texts = []string{string(data)}
		}
		scanned++
		for _, s := range texts {
			for _, w := range []string{"escrow", "refund"} {
				if strings.Contains(strings.ToLower(s), w) {
					t.Errorf("%s says %q", path, w)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned < 5 {
		t.Fatalf("scanned %d files", scanned)
	}
}

// The headline says "unverified" unless the page was checked with the reader's keys and every
// check held: without keys (saying why), under other keys, and with a check failing.
func TestHeadlineSaysUnverified(t *testing.T) {
	r := buildRuns(t, nil)
	id := r.w1.Contract.ContractID
	headline := func(html string) string {
		t.Helper()
		start, end := strings.Index(html, "<header>"), strings.Index(html, "</header>")
		if start < 0 || end < start {
			t.Fatal("no header on the page")
		}
		return html[start:end]
	}
	good := render(t, r.root, id, keys(), Links{})
	h := headline(good)
	if strings.Contains(h, "unverified") || strings.Contains(h, "Unverified") ||
		!strings.Contains(h, contracts.KeyFingerprint(prooftest.VerifierPublicKey())) || !strings.Contains(h, contracts.KeyFingerprint(prooftest.ControlPublicKey())) {
		t.Errorf("a verified page's headline:\n%s", h)
	}
	other := ed25519.NewKeyFromSeed(make([]byte, 32)).Public().(ed25519.PublicKey)
	for name, o := range map[string]Options{
		"no keys":        {},
		"refused keys":   {KeyNote: "the control key k (sha256:abc) lies inside the proof folder"},
		"other control":  {VerifierKey: prooftest.VerifierPublicKey(), ControlKey: other},
		"other verifier": {VerifierKey: other, ControlKey: prooftest.ControlPublicKey()},
	} {
		html := render(t, r.root, id, o, Links{})
		h := headline(html)
		// Checked under other keys, the proof fails verification and the headline says that.
		word, title := "Unverified", " (unverified)"
		if o.VerifierKey != nil {
			word, title = "This proof fails verification", " (fails verification)"
		}
		if !strings.Contains(h, `id="unverified"`) || !strings.Contains(h, word) || !strings.Contains(html, "<title>"+id+title) {
			t.Errorf("%s: the headline does not say unverified:\n%s", name, h)
		}
		if o.KeyNote != "" && !strings.Contains(text(html), o.KeyNote) {
			t.Errorf("%s: the page does not say why it is unverified", name)
		}
	}
}

// An attempt that changed nothing says so and shows the results that still stand, never
// "0 of N criteria passed"; the offline verification still holds.
func TestPageAttemptThatChangedNothing(t *testing.T) {
	root := t.TempDir()
	c := prooftest.W1(t)
	c.ContractID = "w2-changes-nothing"
	p := prooftest.Build(t, root, prooftest.Spec{Contract: c, Base: []string{"mobile-no-overflow"}, Attempts: []prooftest.Attempt{
		{Override: w2Override()}, {Override: w2Override()}, {Empty: true}}})
	html := render(t, root, c.ContractID, keys(), Links{})
	page := text(html)
	second := p.Bundles[1]
	want := fmt.Sprintf("Not satisfied on attempt 3 of 3: it changed nothing, so attempt 2's results stand (commit %s): 4 of 6 criteria passed; %s",
		second.ImplementationSHA[:12], strings.TrimSuffix(second.Reasons[0].Message, "."))
	for _, w := range []string{want, "Attempt 3 changed nothing, so nothing was verified again", "Attempt 2's results stand: 4 of 6 criteria passed", "checks hold"} {
		if !strings.Contains(strings.Join(strings.Fields(page), " "), w) {
			t.Errorf("page lacks %q", w)
		}
	}
	if strings.Contains(page, "0 of 6") {
		t.Error(`the page says "0 of 6" for an attempt that changed nothing`)
	}
	// The first screen shows attempt 2's pictures.
	lead := html[strings.Index(html, `id="pictures"`):strings.Index(html, `aria-labelledby="attempt-3-try-1"`)]
	if !strings.Contains(lead, `src="attempt-2/try-1/shot-mobile-no-overflow-390x844.png"`) || strings.Contains(lead, "attempt-3/") {
		t.Errorf("the first screen does not show attempt 2's screenshots:\n%s", lead)
	}
}

// No path of the machines that made the proof reaches the page: build logs are named by their
// file names, the local remote by its last element.
func TestPageShowsNoWorkerPath(t *testing.T) {
	r := buildRuns(t, nil)
	for _, id := range []string{r.w1.Contract.ContractID, w2ID} {
		html := render(t, r.root, id, keys(), Links{})
		for _, bad := range []string{prooftest.WorkerPreviews, r.root, "file:///remotes", filepath.Dir(r.root)} {
			if strings.Contains(html, bad) || strings.Contains(text(html), bad) {
				t.Errorf("%s: the page shows the path %s", id, bad)
			}
		}
		for _, want := range []string{"log <code>build.log</code>", "file://…/finance.git#signoff/" + id} {
			if !strings.Contains(html, want) {
				t.Errorf("%s: the page lacks %q", id, want)
			}
		}
	}
}

// A re-verification that started the app from an earlier try's build says so beside the
// build's steps; a build of its own says nothing of the kind.
func TestPageNamesAReusedBuild(t *testing.T) {
	root := t.TempDir()
	c := prooftest.W1(t)
	prooftest.Build(t, root, prooftest.Spec{Contract: c, Attempts: []prooftest.Attempt{{ReusedBuild: "slot-c-4939e857759af2f538b0701e-cb29beb00671"}}})
	page := text(render(t, root, c.ContractID, keys(), Links{}))
	want := "Not built again: this verification started the app from the build of preview slot-c-4939e857759af2f538b0701e-cb29beb00671"
	if !strings.Contains(page, want) {
		t.Errorf("the page does not say the build was reused (%q)", want)
	}
	other := t.TempDir()
	prooftest.Build(t, other, prooftest.Spec{Contract: c, Attempts: []prooftest.Attempt{{}}})
	if page := text(render(t, other, c.ContractID, keys(), Links{})); strings.Contains(page, "Not built again") {
		t.Error("a build of its own is said to be reused")
	}
}
