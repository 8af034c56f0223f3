package proofstore_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/proofstore"
	"github.com/signoff/signoff/internal/proofstore/prooftest"
)

func verify(t *testing.T, dir string) proofstore.Report {
	t.Helper()
	r, err := proofstore.VerifyDir(dir, prooftest.VerifierPublicKey(), prooftest.ControlPublicKey())
	if err != nil {
		t.Fatalf("VerifyDir: %v", err)
	}
	return r
}

func failedNames(r proofstore.Report) []string {
	var out []string
	for _, c := range r.Failed() {
		out = append(out, c.Name)
	}
	return out
}

func mustOK(t *testing.T, r proofstore.Report) {
	t.Helper()
	if !r.OK {
		for _, c := range r.Failed() {
			t.Errorf("check %s failed: %s", c.Name, c.Message)
		}
		t.FailNow()
	}
}

func TestVerifyDirUnchanged(t *testing.T) {
	root := t.TempDir()
	w1 := prooftest.Build(t, root, prooftest.Spec{Contract: prooftest.W1(t), Attempts: []prooftest.Attempt{{}}})
	r := verify(t, w1.Dirs[0])
	mustOK(t, r)
	if r.Verdict != contracts.Satisfied || r.Rederived != contracts.Satisfied {
		t.Fatalf("verdict %q rederived %q, want satisfied for passing observations", r.Verdict, r.Rederived)
	}
	// One check per artifact, and the document checks.
	artifacts := 0
	for _, c := range r.Checks {
		if strings.HasPrefix(c.Name, proofstore.CheckArtifactPrefix) {
			artifacts++
		}
	}
	if artifacts != len(w1.Evidence[0].Artifacts) || artifacts == 0 {
		t.Fatalf("%d artifact checks for %d artifacts", artifacts, len(w1.Evidence[0].Artifacts))
	}
	for _, name := range []string{proofstore.CheckBundleSignature, proofstore.CheckEvidenceSig, proofstore.CheckEvidenceDigest,
		proofstore.CheckContractHash, proofstore.CheckTimeline, proofstore.CheckVerdict, proofstore.CheckUnlisted} {
		found := false
		for _, c := range r.Checks {
			found = found || c.Name == name
		}
		if !found {
			t.Errorf("no %s check in the report", name)
		}
	}
}

func TestVerifyDirNotSatisfiedReasonsMatch(t *testing.T) {
	root := t.TempDir()
	c := prooftest.W1(t)
	c.ContractID = "w2-watchlist-header"
	w2 := prooftest.Build(t, root, prooftest.Spec{Contract: c, Attempts: []prooftest.Attempt{{Override: prooftest.W2Override()}}})
	r := verify(t, w2.Dirs[0])
	mustOK(t, r)
	if r.Rederived != contracts.NotSatisfied {
		t.Fatalf("rederived %q for an overflowing table", r.Rederived)
	}
	if !strings.Contains(mustJSON(t, w2.Bundles[0].Reasons), "scrollWidth = 927, innerWidth = 390") {
		t.Fatalf("reasons do not name the observed values: %s", mustJSON(t, w2.Bundles[0].Reasons))
	}
}

func TestVerifyDirBuildFailedHasNoEvidence(t *testing.T) {
	root := t.TempDir()
	p := prooftest.Build(t, root, prooftest.Spec{Contract: prooftest.W1(t), Attempts: []prooftest.Attempt{{BuildFailed: true}}})
	if _, err := os.Stat(filepath.Join(p.Dirs[0], proofstore.EvidenceFile)); err == nil {
		t.Fatal("a failed build wrote evidence")
	}
	r := verify(t, p.Dirs[0])
	mustOK(t, r)
	if r.Rederived != contracts.NotSatisfied {
		t.Fatalf("rederived %q for a failed build", r.Rederived)
	}

	// Evidence dropped into a folder whose bundle binds none is refused.
	if err := os.WriteFile(filepath.Join(p.Dirs[0], proofstore.EvidenceFile), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := verify(t, p.Dirs[0]); r.OK {
		t.Fatal("stray evidence.json accepted")
	}
}

func TestVerifyDirRejectsStrayFile(t *testing.T) {
	root := t.TempDir()
	p := prooftest.Build(t, root, prooftest.Spec{Contract: prooftest.W1(t), Attempts: []prooftest.Attempt{{}}})
	if err := os.WriteFile(filepath.Join(p.Dirs[0], "shot-extra-390x844.png"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := verify(t, p.Dirs[0])
	if r.OK || !contains(failedNames(r), proofstore.CheckUnlisted) {
		t.Fatalf("unlisted file accepted: failed %v", failedNames(r))
	}
}

func TestVerifyDirBadInput(t *testing.T) {
	root := t.TempDir()
	for name, dir := range map[string]string{"missing": filepath.Join(root, "nope"), "no bundle": root} {
		_, err := proofstore.VerifyDir(dir, prooftest.VerifierPublicKey(), prooftest.ControlPublicKey())
		var ie *proofstore.InputError
		if !asInput(err, &ie) {
			t.Errorf("%s: err %v, want an InputError", name, err)
		}
	}
	p := prooftest.Build(t, root, prooftest.Spec{Contract: prooftest.W1(t), Attempts: []prooftest.Attempt{{}}})
	if _, err := proofstore.VerifyDir(p.Dirs[0], nil, prooftest.ControlPublicKey()); err == nil {
		t.Error("a missing verifier key was accepted")
	}
}

// TestVerifyDirFlippedBytes flips one byte at the start, middle and end of every artifact,
// and of the three documents, and expects the verification to fail each time.
func TestVerifyDirFlippedBytes(t *testing.T) {
	root := t.TempDir()
	c := prooftest.W1(t)
	p := prooftest.Build(t, root, prooftest.Spec{Contract: c, Attempts: []prooftest.Attempt{{}}})
	dir := p.Dirs[0]
	files := []string{proofstore.EvidenceFile, proofstore.BundleFile, proofstore.ContractFile}
	for _, a := range p.Evidence[0].Artifacts {
		files = append(files, a.Name)
	}
	flips, caught := 0, 0
	for _, name := range files {
		path := filepath.Join(dir, name)
		orig, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, pos := range []int{0, len(orig) / 2, len(orig) - 1} {
			mod := bytes.Clone(orig)
			mod[pos] ^= 0x01
			if err := os.WriteFile(path, mod, 0o644); err != nil {
				t.Fatal(err)
			}
			flips++
			if r := verify(t, dir); r.OK {
				t.Errorf("%s: a flipped byte at %d of %d passed verification", name, pos, len(orig))
			} else {
				caught++
			}
		}
		if err := os.WriteFile(path, orig, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustOK(t, verify(t, dir))
	t.Logf("flipped bytes: %d of %d caught across %d files (%d artifacts + 3 documents)", caught, flips, len(files), len(files)-3)
}

// TestVerifyDirEveryLeaf changes every leaf of evidence.json and of bundle.json in turn, for a
// satisfied, a not_satisfied and a failed-build proof.
func TestVerifyDirEveryLeaf(t *testing.T) {
	root := t.TempDir()
	c := prooftest.W1(t)
	c2 := c
	c2.ContractID = "w2-watchlist-header"
	c3 := c
	c3.ContractID = "w9-build-fails"
	proofs := []*prooftest.Proof{
		prooftest.Build(t, root, prooftest.Spec{Contract: c2, Attempts: []prooftest.Attempt{{Override: prooftest.W2Override()}}}),
	}
	if !testing.Short() { // -short walks the not_satisfied proof only
		proofs = append(proofs,
			prooftest.Build(t, root, prooftest.Spec{Contract: c, Attempts: []prooftest.Attempt{{}}}),
			prooftest.Build(t, root, prooftest.Spec{Contract: c3, Attempts: []prooftest.Attempt{{BuildFailed: true}}}))
	}
	total := map[string]int{}
	for _, p := range proofs {
		dir := p.Dirs[0]
		mustOK(t, verify(t, dir))
		for _, file := range []string{proofstore.EvidenceFile, proofstore.BundleFile} {
			path := filepath.Join(dir, file)
			if _, err := os.Stat(path); err != nil {
				continue // no evidence after a failed build
			}
			total[file] += prooftest.ChangeEachLeaf(t, path, func(ptr string) {
				if r := verify(t, dir); r.OK {
					t.Errorf("%s %s%s: changed leaf passed verification", p.Contract.ContractID, file, ptr)
				}
			})
		}
		mustOK(t, verify(t, dir))
	}
	if total[proofstore.EvidenceFile] == 0 || total[proofstore.BundleFile] == 0 {
		t.Fatalf("no leaves walked: %v", total)
	}
	t.Logf("leaves changed (each failed verification): evidence.json %d, bundle.json %d", total[proofstore.EvidenceFile], total[proofstore.BundleFile])
}

// signedOnly are the bundle leaves only the control key attests: the control worker's own
// records of the PR, the payment, the build steps and their sandbox, and the gate's source.
// A control worker that signs a lie about them is not caught offline; every other leaf is
// re-derived or cross-checked.
var signedOnly = []string{"/payment/", "/pr/", "/build/steps/", "/build/sandbox", "/gate/source", "/signature"}

// TestVerifyDirResignedLeaf models a control worker that signs a changed bundle: the checks
// beyond the signature (hash, identity, digests, chain, re-derived verdict) must still catch
// every leaf that is not the control worker's own record.
func TestVerifyDirResignedLeaf(t *testing.T) {
	root := t.TempDir()
	c := prooftest.W1(t)
	c.ContractID = "w2-watchlist-header"
	p := prooftest.Build(t, root, prooftest.Spec{Contract: c, Attempts: []prooftest.Attempt{{Override: prooftest.W2Override()}}})
	dir := p.Dirs[0]
	path := filepath.Join(dir, proofstore.BundleFile)
	caught, uncaught, n := 0, []string{}, 0
	n = prooftest.ChangeEachLeaf(t, path, func(ptr string) {
		data, _ := os.ReadFile(path)
		var b contracts.Bundle
		if err := json.Unmarshal(data, &b); err != nil {
			t.Fatal(err)
		}
		if err := b.Sign(prooftest.ControlKey); err != nil {
			t.Fatal(err)
		}
		out, _ := json.MarshalIndent(b, "", "  ")
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		if r := verify(t, dir); !r.OK {
			caught++
			return
		}
		uncaught = append(uncaught, ptr)
		for _, prefix := range signedOnly {
			if strings.HasPrefix(ptr, prefix) {
				return
			}
		}
		t.Errorf("re-signed bundle with a changed %s passed verification", ptr)
	})
	t.Logf("re-signed bundle: %d of %d leaves caught beyond the signature; attested by the control key alone: %v", caught, n, uncaught)
}

// rewrite applies fn to the bundle in dir, rebuilds its hash chain and signs it again, as a
// workflow recording that outcome would have.
func rewrite(t *testing.T, dir string, fn func(b *contracts.Bundle)) {
	t.Helper()
	path := filepath.Join(dir, proofstore.BundleFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var b contracts.Bundle
	if err := json.Unmarshal(data, &b); err != nil {
		t.Fatal(err)
	}
	fn(&b)
	var chain contracts.Chain
	for _, e := range b.Timeline {
		if _, err := chain.Append(e.Type, e.At, e.Data); err != nil {
			t.Fatal(err)
		}
	}
	b.Timeline, b.TimelineHead = chain.Events, chain.Head()
	if err := b.Sign(prooftest.ControlKey); err != nil {
		t.Fatal(err)
	}
	out, _ := json.MarshalIndent(b, "", "  ")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Verdicts the workflow records without a policy run are accepted only in their fixed shape.
func TestVerifyDirRecordedVerdicts(t *testing.T) {
	root := t.TempDir()
	p := prooftest.Build(t, root, prooftest.Spec{Contract: prooftest.W1(t), Attempts: []prooftest.Attempt{{BuildFailed: true}}})
	dir := p.Dirs[0]
	one := func(verdict string, r contracts.Reason) func(b *contracts.Bundle) {
		return func(b *contracts.Bundle) { b.Verdict, b.Reasons = verdict, []contracts.Reason{r} }
	}
	capability := contracts.Reason{Rule: 1, Code: "capability_failed", Message: "preview: start timed out"}
	emptyDiff := contracts.Reason{Rule: 2, Code: "empty_diff", Message: "attempt 1 changed nothing"}
	markEmpty := func(b *contracts.Bundle) {
		for i, e := range b.Timeline {
			if e.Type == "executed" {
				b.Timeline[i].Data["empty"] = "true"
			}
		}
	}
	for _, c := range []struct {
		name string
		fn   func(b *contracts.Bundle)
		ok   bool
	}{
		{"capability failure", one(contracts.VerificationError, capability), true},
		{"capability failure claiming satisfied", one(contracts.Satisfied, capability), false},
		{"empty diff without an empty execution", one(contracts.NotSatisfied, emptyDiff), false},
		{"empty diff", func(b *contracts.Bundle) { one(contracts.NotSatisfied, emptyDiff)(b); markEmpty(b) }, true},
		{"empty diff claiming satisfied", func(b *contracts.Bundle) { one(contracts.Satisfied, emptyDiff)(b); markEmpty(b) }, false},
	} {
		fresh := filepath.Join(t.TempDir(), "w1-watchlist-mobile", "attempt-1", "try-1")
		if err := os.CopyFS(fresh, os.DirFS(dir)); err != nil {
			t.Fatal(err)
		}
		rewrite(t, fresh, c.fn)
		r := verify(t, fresh)
		if r.OK != c.ok {
			t.Errorf("%s: ok %v, want %v (failed %v)", c.name, r.OK, c.ok, failedNames(r))
		}
	}
}

func TestVerifyContract(t *testing.T) {
	root := t.TempDir()
	c := prooftest.W1(t)
	c.ContractID = "w2-watchlist-header"
	p := prooftest.Build(t, root, prooftest.Spec{Contract: c, Attempts: []prooftest.Attempt{
		{Override: prooftest.W2Override()}, {Override: prooftest.W2Override()}, {Override: prooftest.W2Override()}}})
	cr, err := proofstore.VerifyContract(root, c.ContractID, prooftest.VerifierPublicKey(), prooftest.ControlPublicKey())
	if err != nil {
		t.Fatal(err)
	}
	if !cr.OK || len(cr.Tries) != 3 {
		t.Fatalf("ok %v, %d tries: %+v", cr.OK, len(cr.Tries), cr.Checks)
	}
	// Swap two attempts' bundles: each verifies alone, but history no longer extends.
	a, b := filepath.Join(p.Dirs[0], proofstore.BundleFile), filepath.Join(p.Dirs[2], proofstore.BundleFile)
	ab, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	_ = os.WriteFile(a, bb, 0o644)
	_ = os.WriteFile(b, ab, 0o644)
	cr, err = proofstore.VerifyContract(root, c.ContractID, prooftest.VerifierPublicKey(), prooftest.ControlPublicKey())
	if err != nil {
		t.Fatal(err)
	}
	if cr.OK {
		t.Fatal("swapped attempts accepted")
	}
	if _, err := proofstore.VerifyContract(root, "../etc", prooftest.VerifierPublicKey(), prooftest.ControlPublicKey()); err == nil {
		t.Fatal("unsafe contract id accepted")
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func asInput(err error, target **proofstore.InputError) bool {
	if err == nil {
		return false
	}
	ie, ok := err.(*proofstore.InputError)
	if ok {
		*target = ie
	}
	return ok
}

// A settlement signed by the control key, on the last verification's bundle, verifies; one
// edited, signed by another key, or settling on another bundle does not; none is fine.
func TestVerifySettlement(t *testing.T) {
	root := t.TempDir()
	c := prooftest.W1(t)
	c.ContractID = "w2-watchlist-header"
	p := prooftest.Build(t, root, prooftest.Spec{Contract: c, Attempts: []prooftest.Attempt{
		{Override: prooftest.W2Override()}, {Override: prooftest.W2Override()}}})
	verify := func() proofstore.ContractReport {
		t.Helper()
		cr, err := proofstore.VerifyContract(root, c.ContractID, prooftest.VerifierPublicKey(), prooftest.ControlPublicKey())
		if err != nil {
			t.Fatal(err)
		}
		return cr
	}
	check := func(cr proofstore.ContractReport, name string) proofstore.Check {
		for _, ch := range cr.Checks {
			if ch.Name == name {
				return ch
			}
		}
		t.Fatalf("no %s check in %+v", name, cr.Checks)
		return proofstore.Check{}
	}
	if cr := verify(); !cr.OK || !check(cr, proofstore.CheckSettlement).OK {
		t.Fatalf("no settlement yet should verify: %+v", cr.Checks)
	}

	good := prooftest.Settlement(t, p, "payment_cancelled", "canceled")
	write := func(s contracts.Settlement, key ed25519.PrivateKey) { t.Helper(); prooftest.Settle(t, p, s, key) }
	write(good, prooftest.ControlKey)
	if cr := verify(); !cr.OK || !strings.Contains(check(cr, proofstore.CheckSettlement).Message, "payment canceled") {
		t.Fatalf("a good settlement fails: %+v", cr.Checks)
	}

	// Claiming a capture after the fact breaks the signature.
	path := filepath.Join(root, c.ContractID, proofstore.SettlementFile)
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), `"canceled"`, `"captured"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if cr := verify(); cr.OK || check(cr, proofstore.CheckSettlementSig).OK {
		t.Fatalf("an edited settlement verifies: %+v", cr.Checks)
	}
	// Signed by another key.
	write(good, ed25519.NewKeyFromSeed(make([]byte, 32)))
	if cr := verify(); cr.OK || check(cr, proofstore.CheckSettlementSig).OK {
		t.Fatal("a settlement signed by another key verifies")
	}
	// Signed, but settling on an earlier verification.
	early := good
	early.Attempt, early.BundleDigest = 1, contracts.DigestBytes([]byte("attempt 1"))
	write(early, prooftest.ControlKey)
	if cr := verify(); cr.OK || !strings.Contains(check(cr, proofstore.CheckSettlement).Message, "not the bundle.json of attempt-2") {
		t.Fatalf("a settlement on another bundle verifies: %+v", cr.Checks)
	}
}

// The base check a bundle binds verifies with the contract: its evidence is the one bound,
// signed by the verifier, and lists the base screenshots with their digests. A changed base
// screenshot, base evidence replaced by another, or a base check the bundles do not bind
// are each told apart.
func TestVerifyContractBase(t *testing.T) {
	build := func(t *testing.T, s prooftest.Spec) (string, *prooftest.Proof) {
		root := t.TempDir()
		s.Contract = prooftest.W1(t)
		s.Attempts = []prooftest.Attempt{{Override: prooftest.W2Override()}, {}}
		return root, prooftest.Build(t, root, s)
	}
	check := func(t *testing.T, root string, id string) (proofstore.ContractReport, *proofstore.Check) {
		t.Helper()
		cr, err := proofstore.VerifyContract(root, id, prooftest.VerifierPublicKey(), prooftest.ControlPublicKey())
		if err != nil {
			t.Fatal(err)
		}
		for i := range cr.Checks {
			if cr.Checks[i].Name == proofstore.CheckBase {
				return cr, &cr.Checks[i]
			}
		}
		return cr, nil
	}
	root, p := build(t, prooftest.Spec{BaseAll: true})
	id := p.Contract.ContractID
	for _, b := range p.Bundles {
		if b.Base == nil || b.Base.EvidenceDigest == "" {
			t.Fatalf("attempt %d's bundle does not bind the base check", b.Attempt)
		}
	}
	cr, c := check(t, root, id)
	if !cr.OK || c == nil || !c.OK {
		t.Fatalf("intact base check: ok %v, check %+v, all %+v", cr.OK, c, cr.Checks)
	}
	shot := filepath.Join(p.ContractDir, proofstore.BaseDir, prooftest.ShotName("mobile-no-overflow", contracts.Viewport{Width: 390, Height: 844}))
	orig, _ := os.ReadFile(shot)
	_ = os.WriteFile(shot, append(append([]byte{}, orig...), 0), 0o644)
	if cr, c := check(t, root, id); cr.OK || c == nil || c.OK || !strings.Contains(c.Message, filepath.Base(shot)) {
		t.Errorf("a changed base screenshot: ok %v, check %+v", cr.OK, c)
	}
	_ = os.WriteFile(shot, orig, 0o644)

	// Base evidence replaced by a forger's: re-signed with another key, or left out.
	evPath := filepath.Join(p.ContractDir, proofstore.BaseDir, proofstore.EvidenceFile)
	data, _ := os.ReadFile(evPath)
	var ev contracts.Evidence
	if err := json.Unmarshal(data, &ev); err != nil {
		t.Fatal(err)
	}
	ev.Results[0].Status = contracts.StatusFail
	if err := ev.Sign(ed25519.NewKeyFromSeed(make([]byte, 32))); err != nil {
		t.Fatal(err)
	}
	forged, _ := json.MarshalIndent(ev, "", "  ")
	_ = os.WriteFile(evPath, forged, 0o644)
	if cr, c := check(t, root, id); cr.OK || c == nil || c.OK || !strings.Contains(c.Message, "binds base evidence") || !strings.Contains(c.Message, "signature does not verify") {
		t.Errorf("forged base evidence: ok %v, check %+v", cr.OK, c)
	}
	_ = os.Remove(evPath)
	if cr, c := check(t, root, id); cr.OK || c == nil || c.OK {
		t.Errorf("missing base evidence: ok %v, check %+v", cr.OK, c)
	}

	// Screenshots alone (no evidence) are not bound, and add no check.
	root, p = build(t, prooftest.Spec{BaseAll: true, BaseLoose: true})
	if p.Bundles[0].Base != nil {
		t.Error("a bundle binds a base folder that holds no evidence")
	}
	if cr, c := check(t, root, p.Contract.ContractID); !cr.OK || c != nil {
		t.Errorf("unbound base shots: ok %v, check %+v", cr.OK, c)
	}
}

// BaseRef binds only the base check of this contract hash and base commit.
func TestBaseRef(t *testing.T) {
	root := t.TempDir()
	c := prooftest.W1(t)
	p := prooftest.Build(t, root, prooftest.Spec{Contract: c, BaseAll: true})
	s := proofstore.Store{Root: root}
	ref, err := s.BaseRef(c.ContractID, p.Hash, c.Repo.BaseCommitSHA)
	data, _ := os.ReadFile(filepath.Join(p.ContractDir, proofstore.BaseDir, proofstore.EvidenceFile))
	if err != nil || ref == nil || ref.EvidenceDigest != contracts.DigestBytes(data) {
		t.Fatalf("BaseRef: %+v, %v", ref, err)
	}
	for name, args := range map[string][3]string{
		"other hash":     {c.ContractID, strings.Repeat("0", 64), c.Repo.BaseCommitSHA},
		"other base":     {c.ContractID, p.Hash, prooftest.SHA(9)},
		"other contract": {"c-without-base", p.Hash, c.Repo.BaseCommitSHA},
	} {
		if ref, err := s.BaseRef(args[0], args[1], args[2]); err != nil || ref != nil {
			t.Errorf("%s: %+v, %v", name, ref, err)
		}
	}
	if _, err := s.BaseRef("../x", p.Hash, c.Repo.BaseCommitSHA); err == nil {
		t.Error("an unsafe contract id was accepted")
	}
}
