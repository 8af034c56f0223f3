// Package prooftest builds real proof folders for tests: a contract, evidence signed with the
// policy's test verifier key, real PNG screenshots and zip traces whose digests the evidence
// lists, and bundles signed with a test control key, whose verdicts and reasons come from
// policy.Decide the way the workflow computes them. Nothing here states a verdict: tests shape
// the observed values and read the verdict the policy gives.
package prooftest

import (
	"archive/zip"
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/contracts/contractstest"
	"github.com/signoff/signoff/internal/proofstore"
	"github.com/signoff/signoff/policy"
	"github.com/signoff/signoff/policy/policytest"
)

// ControlKey is a fixed test key for bundles; the seed is not a secret.
var ControlKey = ed25519.NewKeyFromSeed([]byte("signoff-proof-test-control-key!!"))

// ControlPublicKey is ControlKey's public half.
func ControlPublicKey() ed25519.PublicKey { return ControlKey.Public().(ed25519.PublicKey) }

// VerifierPublicKey is the policy test verifier's public key, which signs the evidence.
func VerifierPublicKey() ed25519.PublicKey { return policytest.VerifierPublicKey() }

// Attempt shapes one attempt's verification.
type Attempt struct {
	// Override sets observed values per criterion (see policytest.Options).
	Override map[string]map[string]any
	// BuildFailed: the preview's build failed, so the verifier never ran.
	BuildFailed bool
	// Empty: the executor changed nothing. As the workflow does, the attempt is recorded
	// not_satisfied with one empty_diff reason, nothing is published, built or verified.
	Empty bool
	// Diff is the executor's diff summary, recorded in the "executed" timeline event.
	Diff string
	// Trace, when set, is the content of every trace artifact (e.g. a real Playwright trace);
	// otherwise a small zip.
	Trace []byte
	// Shade tints the screenshots, so attempts look different.
	Shade color.RGBA
	// ReusedBuild names the preview whose build this verification started the app from (a
	// re-verification of the same commit).
	ReusedBuild string
}

// Spec is a contract's run.
type Spec struct {
	Contract contracts.Contract
	Attempts []Attempt
	// Base writes base-commit screenshots into <contract>/base for these criteria ids (all
	// criteria when BaseAll is set).
	Base    []string
	BaseAll bool
	// BaseOverride sets the base check's observed values (by default every check passes).
	BaseOverride map[string]map[string]any
	// BaseLoose writes the base screenshots alone, with no evidence: a folder from before
	// the base check was bound, or one copied by hand.
	BaseLoose bool
	PR        contracts.PRRef
	Payment   contracts.PaymentRef
	// VerifierKey and ControlKey sign the evidence and bundles instead of the test keys: a
	// forger's proof, complete and self-consistent under keys of its own.
	VerifierKey, ControlKey ed25519.PrivateKey
}

// Proof is what Build wrote.
type Proof struct {
	Root        string
	ContractDir string
	Dirs        []string // one per attempt (try 1)
	Bundles     []contracts.Bundle
	Evidence    []*contracts.Evidence // nil where the verifier did not run
	Contract    contracts.Contract
	Hash        string
}

// W1 returns the prepared W1 contract.
func W1(t testing.TB) contracts.Contract {
	t.Helper()
	c, err := contracts.Load(contractstest.ReadW1(t), contracts.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return *c
}

// W2Override is the W2 run's header-only change: the table still overflows at 390 px and no
// cards appear.
func W2Override() map[string]map[string]any {
	return map[string]map[string]any{
		"mobile-no-overflow": {
			"390x844/scroll_width": 927.0, "390x844/document_scroll_width": 927.0, "390x844/inner_width": 390.0,
			"390x844/clipped_elements":  0.0,
			"390x844/clipped_offenders": []any{},
		},
		"mobile-cards": {"390x844/0.count": 1.0, "390x844/1.text.0.visible": false, "390x844/1.text.1.visible": false, "390x844/1.text.2.visible": false},
	}
}

// WorkerPreviews is where the fixture's execute worker keeps its previews: build steps name
// their logs by absolute paths under it, as a real worker's do. Nothing of it belongs on a
// page a reviewer reads.
const WorkerPreviews = "/srv/signoff-worker/previews"

// SHA returns a stable fake commit SHA for an attempt.
func SHA(attempt int) string { return fmt.Sprintf("%040x", 0xa11ce000+attempt) }

// Build writes the contract's proof folder under root and returns what it wrote.
func Build(t testing.TB, root string, s Spec) *Proof {
	t.Helper()
	c := s.Contract
	hash, err := contracts.Hash(c)
	if err != nil {
		t.Fatal(err)
	}
	store := proofstore.Store{Root: root}
	p := &Proof{Root: root, ContractDir: filepath.Join(root, c.ContractID), Contract: c, Hash: hash}
	var chain contracts.Chain
	at := func(sec int) string { return fmt.Sprintf("2026-11-29T10:%02d:%02dZ", sec/60%60, sec%60) }
	clock := 0
	ev := func(typ string, data map[string]string) {
		clock += 7
		if _, err := chain.Append(typ, at(clock), data); err != nil {
			t.Fatal(err)
		}
	}
	payment := s.Payment
	if payment.Provider == "" {
		payment = contracts.PaymentRef{Provider: "local", CheckoutSessionID: "cs_local_" + c.ContractID, PaymentIntentID: "pi_local_" + c.ContractID,
			State: "authorized", Local: true}
	}
	pr := s.PR
	if pr.Branch == "" {
		pr = contracts.PRRef{URL: "file:///remotes/signoff-fixtures/finance.git#signoff/" + c.ContractID, Branch: "signoff/" + c.ContractID, Status: "draft"}
	}
	ev(contracts.EventQuoted, map[string]string{contracts.DataHash: hash, contracts.DataRequester: "test", contracts.DataGoal: c.Goal})
	ev(contracts.EventApproved, map[string]string{contracts.DataHash: hash, contracts.DataApprover: "test", contracts.DataChannel: "cli", contracts.DataMessageID: "m1"})
	ev(contracts.EventPaymentRequested, map[string]string{contracts.DataProvider: payment.Provider, contracts.DataSession: payment.CheckoutSessionID, contracts.DataLocal: fmt.Sprint(payment.Local)})
	ev(contracts.EventPaymentAuthorized, map[string]string{contracts.DataPaymentIntent: payment.PaymentIntentID})
	parent := c.Repo.BaseCommitSHA

	verifierKey, controlKey := policytest.VerifierKey, ControlKey
	if s.VerifierKey != nil {
		verifierKey = s.VerifierKey
	}
	if s.ControlKey != nil {
		controlKey = s.ControlKey
	}
	if s.BaseAll || len(s.Base) > 0 {
		p.base(t, s, verifierKey)
	}
	for i, a := range s.Attempts {
		n := i + 1
		sha := SHA(n)
		diff := a.Diff
		if diff == "" {
			diff = fmt.Sprintf("%d file(s), +%d -%d", n, 10*n, 2*n)
		}
		ev(contracts.EventAttemptStarted, map[string]string{contracts.DataAttempt: fmt.Sprint(n), contracts.DataParent: parent})
		if a.Empty {
			p.empty(t, store, &chain, ev, n, parent, payment, pr, controlKey)
			continue
		}
		ev(contracts.EventExecuted, map[string]string{contracts.DataAttempt: fmt.Sprint(n), contracts.DataCommit: sha, contracts.DataEmpty: "false", contracts.DataDiff: diff})
		ev(contracts.EventPublished, map[string]string{contracts.DataCommit: sha, contracts.DataBranch: pr.Branch, contracts.DataPR: pr.URL})
		build := contracts.BuildResult{Passed: !a.BuildFailed, Steps: []contracts.BuildStep{
			{Name: "install", Passed: true, DurationMS: 1200 + int64(n)},
			{Name: "build", Passed: !a.BuildFailed, DurationMS: 5400 + int64(n), Log: fmt.Sprintf("%s/%s/attempt-%d/logs/build.log", WorkerPreviews, c.ContractID, n)},
		}, Sandbox: "bubblewrap 0.8.0: namespaces user+pid+net+ipc+uts+cgroup+mount, as uid 999", ReusedBuild: a.ReusedBuild}
		ev(contracts.EventPreviewBuilt, map[string]string{contracts.DataAttempt: fmt.Sprint(n), contracts.DataBuildPassed: fmt.Sprint(build.Passed)})
		dir, err := store.Dir(c.ContractID, n, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		gate := contracts.GateResult{Source: "page-errors", Errors: []string{}}
		exp := policy.Expectation{ContractHash: hash, ImplementationSHA: sha, VerifierPublicKey: verifierKey.Public().(ed25519.PublicKey),
			VerifierDigest: c.Verifier.Digest, Build: build, Gate: gate}
		var evidence *contracts.Evidence
		digest := ""
		artifacts := []contracts.Artifact{}
		if !a.BuildFailed {
			ev(contracts.EventVerifying, map[string]string{contracts.DataAttempt: fmt.Sprint(n), contracts.DataTry: "1"})
			evidence, err = policytest.Evidence(c, sha, policytest.Options{Attempt: n, Override: a.Override})
			if err != nil {
				t.Fatal(err)
			}
			shade := a.Shade
			if shade == (color.RGBA{}) {
				shade = color.RGBA{uint8(40 * n), 120, 200, 255}
			}
			evidence.Artifacts = []contracts.Artifact{}
			for ri := range evidence.Results {
				res := &evidence.Results[ri]
				cr := c.Criteria[ri]
				res.Artifacts = []string{}
				for _, vp := range cr.Viewports() {
					name := ShotName(cr.ID, vp)
					overflow := vp.Width < 640 && a.Override["mobile-no-overflow"] != nil
					writeFile(t, dir, name, PNG(t, vp, shade, overflow))
					evidence.Artifacts = append(evidence.Artifacts, artifact(t, dir, name, contracts.ArtifactScreenshot, cr.ID))
					res.Artifacts = append(res.Artifacts, name)
				}
				name := "trace-" + cr.ID + ".zip"
				trace := a.Trace
				if trace == nil {
					trace = Zip(t, map[string]string{"trace.trace": fmt.Sprintf(`{"criterion":%q,"attempt":%d}`, cr.ID, n)})
				}
				writeFile(t, dir, name, trace)
				evidence.Artifacts = append(evidence.Artifacts, artifact(t, dir, name, contracts.ArtifactTrace, cr.ID))
				res.Artifacts = append(res.Artifacts, name)
				res.DurationMS = int64(800 + 37*ri + n)
			}
			evidence.StartedAt, evidence.FinishedAt = at(clock), at(clock+9)
			evidence.Browser = contracts.Browser{Name: "chromium", Version: "156.0.7710.0", Mode: "local"}
			if err := evidence.Sign(verifierKey); err != nil {
				t.Fatal(err)
			}
			if digest, err = store.WriteEvidence(dir, evidence); err != nil {
				t.Fatal(err)
			}
			artifacts = evidence.Artifacts
			exp.ArtifactProblems = proofstore.CheckArtifacts(dir, evidence.Artifacts)
			exp.Timeline = append([]contracts.Event(nil), chain.Events...)
		}
		d := policy.Decide(c, exp, evidence)
		ev(contracts.EventVerdict, map[string]string{contracts.DataAttempt: fmt.Sprint(n), contracts.DataTry: "1", contracts.DataCommit: sha, contracts.DataVerdict: d.Verdict, contracts.DataSummary: d.Summary()})
		b := contracts.Bundle{SchemaVersion: contracts.BundleSchemaVersion, ContractID: c.ContractID, ContractHash: hash, Goal: c.Goal,
			Attempt: n, Try: 1, BaseSHA: c.Repo.BaseCommitSHA, ImplementationSHA: sha, EvidenceDigest: digest,
			Build: build, Gate: gate, Verdict: d.Verdict, Reasons: d.Reasons,
			Timeline: append([]contracts.Event(nil), chain.Events...), TimelineHead: chain.Head(),
			Payment: payment, PR: pr, Artifacts: artifacts}
		// As the control worker does: bind the base check when its evidence is there.
		if b.Base, err = store.BaseRef(c.ContractID, hash, c.Repo.BaseCommitSHA); err != nil {
			t.Fatal(err)
		}
		if err := b.Sign(controlKey); err != nil {
			t.Fatal(err)
		}
		if _, err := store.WriteBundle(c, b); err != nil {
			t.Fatal(err)
		}
		p.Dirs = append(p.Dirs, dir)
		p.Bundles = append(p.Bundles, b)
		p.Evidence = append(p.Evidence, evidence)
		parent = sha
	}
	return p
}

// empty records an attempt that changed nothing the way the workflow does: the commit stays
// the parent, and the verdict is written without a policy run (the offline verification
// accepts exactly this shape).
func (p *Proof) empty(t testing.TB, store proofstore.Store, chain *contracts.Chain, ev func(string, map[string]string), n int, parent string,
	payment contracts.PaymentRef, pr contracts.PRRef, key ed25519.PrivateKey) {
	t.Helper()
	c := p.Contract
	ev(contracts.EventExecuted, map[string]string{contracts.DataAttempt: fmt.Sprint(n), contracts.DataCommit: parent, contracts.DataEmpty: "true", contracts.DataDiff: "0 file(s), +0 -0"})
	reasons := []contracts.Reason{{Rule: policy.RuleBuild, Code: policy.CodeEmptyDiff, Message: fmt.Sprintf("attempt %d changed nothing", n)}}
	summary := policy.Decision{Verdict: contracts.NotSatisfied, Reasons: reasons}.Summary()
	ev(contracts.EventVerdict, map[string]string{contracts.DataAttempt: fmt.Sprint(n), contracts.DataTry: "1", contracts.DataCommit: parent, contracts.DataVerdict: contracts.NotSatisfied, contracts.DataSummary: summary})
	b := contracts.Bundle{SchemaVersion: contracts.BundleSchemaVersion, ContractID: c.ContractID, ContractHash: p.Hash, Goal: c.Goal,
		Attempt: n, Try: 1, BaseSHA: c.Repo.BaseCommitSHA, ImplementationSHA: parent,
		Build: contracts.BuildResult{Steps: []contracts.BuildStep{}}, Verdict: contracts.NotSatisfied, Reasons: reasons,
		Timeline: append([]contracts.Event(nil), chain.Events...), TimelineHead: chain.Head(),
		Payment: payment, PR: pr, Artifacts: []contracts.Artifact{}}
	var err error
	if b.Base, err = store.BaseRef(c.ContractID, p.Hash, c.Repo.BaseCommitSHA); err != nil {
		t.Fatal(err)
	}
	if err := b.Sign(key); err != nil {
		t.Fatal(err)
	}
	if _, err := store.WriteBundle(c, b); err != nil {
		t.Fatal(err)
	}
	dir, err := store.Dir(c.ContractID, n, 1)
	if err != nil {
		t.Fatal(err)
	}
	p.Dirs = append(p.Dirs, dir)
	p.Bundles = append(p.Bundles, b)
	p.Evidence = append(p.Evidence, nil)
}

// base writes the base commit's check into <contract>/base as the verify worker does for
// attempt 0: a screenshot per viewport of the chosen criteria and, unless BaseLoose, the
// verifier's signed evidence listing them by digest.
func (p *Proof) base(t testing.TB, s Spec, verifierKey ed25519.PrivateKey) {
	t.Helper()
	c := p.Contract
	dir := filepath.Join(p.ContractDir, proofstore.BaseDir)
	want := map[string]bool{}
	for _, id := range s.Base {
		want[id] = true
	}
	ev, err := policytest.Evidence(c, c.Repo.BaseCommitSHA, policytest.Options{Attempt: 0, Override: s.BaseOverride})
	if err != nil {
		t.Fatal(err)
	}
	ev.Artifacts = []contracts.Artifact{}
	for i, cr := range c.Criteria {
		ev.Results[i].Artifacts = []string{}
		if !s.BaseAll && !want[cr.ID] {
			continue
		}
		for _, vp := range cr.Viewports() {
			name := ShotName(cr.ID, vp)
			writeFile(t, dir, name, PNG(t, vp, color.RGBA{200, 200, 200, 255}, true))
			ev.Artifacts = append(ev.Artifacts, artifact(t, dir, name, contracts.ArtifactScreenshot, cr.ID))
			ev.Results[i].Artifacts = append(ev.Results[i].Artifacts, name)
		}
	}
	if s.BaseLoose {
		return
	}
	if err := ev.Sign(verifierKey); err != nil {
		t.Fatal(err)
	}
	if _, err := (proofstore.Store{Root: p.Root}).WriteEvidence(dir, ev); err != nil {
		t.Fatal(err)
	}
}

// ShotName is the verifier's screenshot name for a criterion at a viewport.
func ShotName(criterion string, vp contracts.Viewport) string {
	return fmt.Sprintf("shot-%s-%dx%d.png", criterion, vp.Width, vp.Height)
}

func artifact(t testing.TB, dir, name, kind, criterion string) contracts.Artifact {
	t.Helper()
	sum, size, err := proofstore.FileDigest(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return contracts.Artifact{Name: name, Kind: kind, Criterion: criterion, SHA256: sum, Size: size}
}

func writeFile(t testing.TB, dir, name string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// PNG draws a page-like picture at a viewport's size: a header, rows, and (when overflow) a
// red band running off the right edge like W2's wide table. Pictures are kept by what they
// show: a proof folder holds one per criterion, viewport and attempt, and encoding them again
// each time made the unit tier slow under -race.
func PNG(t testing.TB, vp contracts.Viewport, shade color.RGBA, overflow bool) []byte {
	t.Helper()
	key := pngKey{vp.Width, vp.Height, shade, overflow}
	if b, ok := pngs.Load(key); ok {
		return bytes.Clone(b.([]byte))
	}
	img := image.NewRGBA(image.Rect(0, 0, vp.Width, vp.Height))
	fill := func(x0, y0, x1, y1 int, c color.RGBA) {
		draw.Draw(img, image.Rect(x0, y0, x1, y1), &image.Uniform{C: c}, image.Point{}, draw.Src)
	}
	fill(0, 0, vp.Width, vp.Height, color.RGBA{255, 255, 255, 255})
	fill(0, 0, vp.Width, 64, shade)
	for i := 0; i < 4; i++ {
		y := 96 + i*72
		fill(16, y, vp.Width-16, y+56, color.RGBA{230, 236, 245, 255})
	}
	if overflow {
		fill(16, 96, vp.Width, 152, color.RGBA{200, 30, 30, 255})
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	pngs.Store(key, bytes.Clone(buf.Bytes()))
	return buf.Bytes()
}

type pngKey struct {
	w, h     int
	shade    color.RGBA
	overflow bool
}

// pngs holds the pictures PNG drew, by pngKey.
var pngs sync.Map

// Zip returns a zip archive of the files.
func Zip(t testing.TB, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Settlement is the settlement of p after its last attempt, unsigned: the workflow's final
// state and what became of the payment, on the last bundle, with the payment's event
// appended to that bundle's timeline.
func Settlement(t testing.TB, p *Proof, state, payment string) contracts.Settlement {
	t.Helper()
	last := p.Bundles[len(p.Bundles)-1]
	raw, err := os.ReadFile(filepath.Join(p.Dirs[len(p.Dirs)-1], proofstore.BundleFile))
	if err != nil {
		t.Fatal(err)
	}
	var chain contracts.Chain
	chain.Events = append(chain.Events, last.Timeline...)
	typ := contracts.EventPaymentCancelled
	if payment == "captured" {
		typ = contracts.EventPaymentCaptured
	}
	if _, err := chain.Append(typ, "2026-11-30T10:00:00Z", map[string]string{contracts.DataState: state}); err != nil {
		t.Fatal(err)
	}
	return contracts.Settlement{SchemaVersion: contracts.SettlementSchema, ContractID: p.Contract.ContractID, ContractHash: p.Hash,
		Verdict: last.Verdict, State: state, Payment: contracts.PaymentRef{Provider: "stripe-test-double", State: payment, Local: true},
		Attempt: last.Attempt, Try: 1, BundleDigest: contracts.DigestBytes(raw), Timeline: chain.Events, TimelineHead: chain.Head()}
}

// Settle signs s with key and writes it into p's contract folder.
func Settle(t testing.TB, p *Proof, s contracts.Settlement, key ed25519.PrivateKey) {
	t.Helper()
	if err := s.Sign(key); err != nil {
		t.Fatal(err)
	}
	if _, err := (proofstore.Store{Root: p.Root}).WriteSettlement(s); err != nil {
		t.Fatal(err)
	}
}

// ChangeEachLeaf changes every leaf of the JSON file at path in turn (to another value of the
// same JSON type), writes it back, and calls check with the leaf's JSON pointer; the file is
// restored afterwards. It returns the number of leaves changed. Proof verification and proof
// pages both use it to show that no recorded value goes unnoticed. Under -short (the unit
// tier, where -race makes each verification slow) it changes one leaf per shape, the first
// whose pointer reads the same with array indices left out, so every kind of field is still
// changed once; the full suite changes them all.
func ChangeEachLeaf(t testing.TB, path string, check func(ptr string)) int {
	t.Helper()
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(orig, &doc); err != nil {
		t.Fatal(err)
	}
	leaves := jsonLeaves(doc, "")
	if testing.Short() {
		leaves = onePerShape(leaves)
	}
	for _, l := range leaves {
		var fresh any
		_ = json.Unmarshal(orig, &fresh)
		fresh = contractstest.Edit(t, fresh, l.ptr, changedLeaf(l.val), false)
		data, err := json.MarshalIndent(fresh, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		check(l.ptr)
	}
	if err := os.WriteFile(path, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	return len(leaves)
}

type jsonLeaf struct {
	ptr string
	val any
}

// onePerShape keeps the first leaf of each shape: its pointer with array indices as "*".
func onePerShape(leaves []jsonLeaf) []jsonLeaf {
	seen := map[string]bool{}
	var out []jsonLeaf
	for _, l := range leaves {
		parts := strings.Split(l.ptr, "/")
		for i, s := range parts {
			if _, err := strconv.Atoi(s); err == nil {
				parts[i] = "*"
			}
		}
		if shape := strings.Join(parts, "/"); !seen[shape] {
			seen[shape] = true
			out = append(out, l)
		}
	}
	return out
}

// jsonLeaves lists a document's leaves by RFC 6901 pointer, in key order.
func jsonLeaves(v any, ptr string) []jsonLeaf {
	var out []jsonLeaf
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = append(out, jsonLeaves(x[k], ptr+"/"+strings.NewReplacer("~", "~0", "/", "~1").Replace(k))...)
		}
	case []any:
		for i, e := range x {
			out = append(out, jsonLeaves(e, fmt.Sprintf("%s/%d", ptr, i))...)
		}
	default:
		out = append(out, jsonLeaf{ptr, v})
	}
	return out
}

// changedLeaf is another value of the same JSON type.
func changedLeaf(v any) any {
	switch x := v.(type) {
	case string:
		return x + "x"
	case float64:
		return x + 1
	case bool:
		return !x
	}
	return "x"
}
