package proofstore

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/policy"
)

// Check names in a Report, in the order VerifyDir runs them.
const (
	CheckBundleDocument   = "bundle_document"
	CheckBundleSignature  = "bundle_signature"
	CheckContractDocument = "contract_document"
	CheckContractHash     = "contract_hash"
	CheckIdentity         = "identity"
	CheckEvidenceDigest   = "evidence_digest"
	CheckEvidenceDocument = "evidence_document"
	CheckEvidenceSig      = "evidence_signature"
	CheckArtifactPrefix   = "artifact "
	CheckArtifactLists    = "artifact_lists"
	CheckUnlisted         = "unlisted_files"
	CheckSymlinks         = "symlinks"
	CheckTimeline         = "timeline"
	CheckVerdict          = "verdict"

	// Cross-verification checks of VerifyContract.
	CheckAttempts       = "attempts"
	CheckTimelinePrefix = "timeline_prefix"
	CheckSettlement     = "settlement"
	CheckSettlementSig  = "settlement_signature"
	// CheckBase is the base commit's check that bundles bind (Bundle.Base): present only
	// when one does.
	CheckBase = "base"
)

// Reason codes the workflow writes without calling policy.Decide: an activity that failed
// (executor, deliverable, preview, verifier or runtime gate) and an attempt that changed
// nothing. They cannot be re-derived offline; the verifier accepts them only in the verdict
// they always carry.
const (
	codeCapabilityFailed = "capability_failed"
	codeNotConfigured    = "not_configured"
	codeEmptyDiff        = "empty_diff"
)

// Check is one thing a verification looked at.
type Check struct {
	Name    string `json:"name"`
	OK      bool   `json:"ok"`
	Message string `json:"message"`
}

// Report is the offline verification of one proof folder: every check, and whether all held.
type Report struct {
	Dir        string `json:"dir"`
	ContractID string `json:"contract_id,omitempty"`
	Attempt    int    `json:"attempt,omitempty"`
	Try        int    `json:"try,omitempty"`
	// Verdict is what the bundle records; Rederived is what the policy gives offline
	// ("" when it could not run, "recorded" for verdicts no policy run produced).
	Verdict   string  `json:"verdict,omitempty"`
	Rederived string  `json:"rederived_verdict,omitempty"`
	OK        bool    `json:"ok"`
	Checks    []Check `json:"checks"`
}

// Failed lists the checks that did not hold.
func (r Report) Failed() []Check {
	var out []Check
	for _, c := range r.Checks {
		if !c.OK {
			out = append(out, c)
		}
	}
	return out
}

func (r *Report) add(name string, ok bool, format string, args ...any) {
	r.Checks = append(r.Checks, Check{Name: name, OK: ok, Message: fmt.Sprintf(format, args...)})
}

// InputError says the verification could not start: the folder or a key is not what it must
// be. It is a usage problem, not a finding about the proof.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

func inputErr(format string, args ...any) error {
	return &InputError{Err: fmt.Errorf(format, args...)}
}

// VerifyDir re-checks one verification folder offline: the bundle's signature (control key)
// and the evidence's (verifier key), that each file is exactly the signed or hashed document,
// that the bundle binds the evidence by digest and the contract by hash, every artifact's
// digest and size, that nothing unlisted sits in the folder, the hash chain and its head, and
// finally re-derives the verdict with policy.Decide and compares verdict and reasons.
//
// It returns an error only for bad input (no such folder, no bundle.json, a key of the wrong
// size); every finding about the proof is a failed check in the report.
func VerifyDir(dir string, verifierPub, controlPub ed25519.PublicKey) (Report, error) {
	r := Report{Dir: dir, Checks: []Check{}}
	if len(verifierPub) != ed25519.PublicKeySize || len(controlPub) != ed25519.PublicKeySize {
		return r, inputErr("verify %s: the verifier and control public keys must be %d-byte ed25519 keys", dir, ed25519.PublicKeySize)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return r, inputErr("verify: %w", err)
	}
	if !st.IsDir() {
		return r, inputErr("verify: %s is not a directory", dir)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return r, inputErr("verify: %w", err)
	}
	defer root.Close()
	bundleBytes, err := readDocumentIn(root, BundleFile)
	if errors.Is(err, fs.ErrNotExist) {
		return r, inputErr("verify: %s has no %s: not a proof folder (want <contract>/attempt-<n>/try-<m>)", dir, BundleFile)
	}
	if a, t, ok := ParseTryDir(dir); ok {
		r.Attempt, r.Try = a, t
	}

	v := &dirVerifier{dir: dir, root: root, r: &r, verifierPub: verifierPub, controlPub: controlPub}
	v.run(bundleBytes, err)
	r.OK = len(r.Failed()) == 0
	return r, nil
}

type dirVerifier struct {
	dir                     string
	root                    *os.Root // dir, opened so that no read follows a symlink out of it
	r                       *Report
	verifierPub, controlPub ed25519.PublicKey

	bundle   *contracts.Bundle
	contract *contracts.Contract
	hash     string
	evidence *contracts.Evidence // nil when the bundle binds none
}

func (v *dirVerifier) run(bundleBytes []byte, readErr error) {
	r := v.r
	if links := symlinksIn(v.root); len(links) > 0 {
		r.add(CheckSymlinks, false, "symbolic links in the folder (a proof holds plain files only; none is followed): %s", strings.Join(links, ", "))
	} else {
		r.add(CheckSymlinks, true, "no symbolic links")
	}
	var b contracts.Bundle
	err := readErr
	if err == nil {
		err = decodeExact(bundleBytes, &b)
	}
	if err != nil {
		r.add(CheckBundleDocument, false, "%s is not the signed bundle document: %v", BundleFile, err)
		// Without a bundle nothing else can be judged against anything.
		return
	}
	v.bundle = &b
	r.ContractID, r.Verdict = b.ContractID, b.Verdict
	if b.SchemaVersion != contracts.BundleSchemaVersion {
		r.add(CheckBundleDocument, false, "schema_version %q, want %q", b.SchemaVersion, contracts.BundleSchemaVersion)
	} else {
		r.add(CheckBundleDocument, true, "%s decodes exactly, with no unknown, duplicate or case-folded members", BundleFile)
	}
	if err := b.VerifySignature(v.controlPub); err != nil {
		r.add(CheckBundleSignature, false, "the bundle signature does not verify under the expected control key %s (%s names no signing key, so the key that did sign it is unknown): %v", contracts.KeyFingerprint(v.controlPub), BundleFile, err)
	} else {
		r.add(CheckBundleSignature, true, "signed by the control key %s", contracts.KeyFingerprint(v.controlPub))
	}

	v.checkContract()
	v.checkEvidence()
	v.checkIdentity()
	v.checkArtifacts()
	v.checkTimeline()
	v.checkVerdict()
}

func (v *dirVerifier) checkContract() {
	r, b := v.r, v.bundle
	data, err := readDocumentIn(v.root, ContractFile)
	if err != nil {
		r.add(CheckContractDocument, false, "%s: %v", ContractFile, err)
		r.add(CheckContractHash, false, "no contract to hash")
		return
	}
	c, err := contracts.Load(data, contracts.LoadOptions{AllowMoreCriteria: true})
	if err != nil {
		r.add(CheckContractDocument, false, "%s is not a valid contract: %s", ContractFile, oneLine(err))
		r.add(CheckContractHash, false, "no contract to hash")
		return
	}
	if err := sameDocument(data, c); err != nil {
		r.add(CheckContractDocument, false, "%s: %v", ContractFile, err)
	} else {
		r.add(CheckContractDocument, true, "%s is a valid contract", ContractFile)
	}
	v.contract = c
	h, err := contracts.Hash(*c)
	if err != nil {
		r.add(CheckContractHash, false, "%v", err)
		return
	}
	v.hash = h
	if h != b.ContractHash {
		r.add(CheckContractHash, false, "%s hashes to %s, the bundle says %s", ContractFile, h, b.ContractHash)
		return
	}
	r.add(CheckContractHash, true, "%s hashes to the bundle's contract_hash %s", ContractFile, h)
}

func (v *dirVerifier) checkEvidence() {
	r, b := v.r, v.bundle
	data, err := readDocumentIn(v.root, EvidenceFile)
	present := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		r.add(CheckEvidenceDigest, false, "%s: %v", EvidenceFile, err)
		r.add(CheckEvidenceDocument, false, "%s: %v", EvidenceFile, err)
		return
	}
	switch {
	case b.EvidenceDigest == "" && !present:
		r.add(CheckEvidenceDigest, true, "the bundle binds no evidence and the folder holds none (the verifier did not run)")
		return
	case b.EvidenceDigest == "":
		r.add(CheckEvidenceDigest, false, "%s is present but the bundle binds no evidence", EvidenceFile)
		return
	case !present:
		r.add(CheckEvidenceDigest, false, "the bundle binds evidence %s but %s is missing", b.EvidenceDigest, EvidenceFile)
		return
	}
	if d := contracts.DigestBytes(data); d != b.EvidenceDigest {
		r.add(CheckEvidenceDigest, false, "%s has sha256 %s, the bundle says %s", EvidenceFile, d, b.EvidenceDigest)
	} else {
		r.add(CheckEvidenceDigest, true, "%s has the bundle's evidence_digest %s", EvidenceFile, d)
	}

	ev, err := contracts.DecodeEvidence(data)
	if err != nil {
		r.add(CheckEvidenceDocument, false, "%s is not valid evidence: %s", EvidenceFile, oneLine(err))
		// The policy judges what it can; a schema failure becomes verification_error there.
		ev = &contracts.Evidence{}
		if json.Unmarshal(data, ev) != nil {
			ev = &contracts.Evidence{}
		}
	} else if err := sameDocument(data, ev); err != nil {
		r.add(CheckEvidenceDocument, false, "%s: %v", EvidenceFile, err)
	} else {
		r.add(CheckEvidenceDocument, true, "%s is valid evidence", EvidenceFile)
	}
	v.evidence = ev
	if err := ev.VerifySignature(v.verifierPub); err != nil {
		r.add(CheckEvidenceSig, false, "the evidence signature does not verify under the expected verifier key %s (%s names no signing key, so the key that did sign it is unknown): %v", contracts.KeyFingerprint(v.verifierPub), EvidenceFile, err)
	} else {
		r.add(CheckEvidenceSig, true, "signed by the verifier key %s", contracts.KeyFingerprint(v.verifierPub))
	}
}

// checkIdentity ties the three documents and the folder to one contract, attempt and try.
func (v *dirVerifier) checkIdentity() {
	r, b := v.r, v.bundle
	var probs []string
	if v.contract != nil {
		if b.ContractID != v.contract.ContractID {
			probs = append(probs, fmt.Sprintf("bundle contract_id %q, contract %q", b.ContractID, v.contract.ContractID))
		}
		if b.Goal != v.contract.Goal {
			probs = append(probs, "the bundle's goal is not the contract's")
		}
		if b.BaseSHA != v.contract.Repo.BaseCommitSHA {
			probs = append(probs, fmt.Sprintf("bundle base_sha %s, contract base_commit_sha %s", b.BaseSHA, v.contract.Repo.BaseCommitSHA))
		}
	}
	if ev := v.evidence; ev != nil {
		if ev.ContractID != b.ContractID {
			probs = append(probs, fmt.Sprintf("evidence contract_id %q, bundle %q", ev.ContractID, b.ContractID))
		}
		if ev.ContractHash != b.ContractHash {
			probs = append(probs, fmt.Sprintf("evidence contract_hash %s, bundle %s", ev.ContractHash, b.ContractHash))
		}
		if ev.Attempt != b.Attempt {
			probs = append(probs, fmt.Sprintf("evidence attempt %d, bundle %d", ev.Attempt, b.Attempt))
		}
	}
	if r.Attempt > 0 && (b.Attempt != r.Attempt || b.Try != r.Try) {
		probs = append(probs, fmt.Sprintf("the bundle is attempt %d try %d but sits in attempt-%d/try-%d", b.Attempt, b.Try, r.Attempt, r.Try))
	}
	if len(probs) > 0 {
		r.add(CheckIdentity, false, "%s", strings.Join(probs, "; "))
		return
	}
	r.add(CheckIdentity, true, "contract %s, attempt %d, try %d agree across the folder, bundle, contract and evidence", b.ContractID, b.Attempt, b.Try)
}

func (v *dirVerifier) checkArtifacts() {
	r, b := v.r, v.bundle
	type listed struct {
		a    contracts.Artifact
		from string
	}
	var all []listed
	if v.evidence != nil {
		for _, a := range v.evidence.Artifacts {
			all = append(all, listed{a, "evidence"})
		}
	}
	for _, a := range b.Artifacts {
		all = append(all, listed{a, "bundle"})
	}
	byName := map[string][]listed{}
	var names []string
	for _, l := range all {
		if _, seen := byName[l.a.Name]; !seen {
			names = append(names, l.a.Name)
		}
		byName[l.a.Name] = append(byName[l.a.Name], l)
	}
	for _, name := range names {
		entries := byName[name]
		sum, size, err := digestIn(v.root, name)
		if err != nil {
			r.add(CheckArtifactPrefix+name, false, "%v", err)
			continue
		}
		// One line per distinct claim, naming every list that makes it.
		var probs []string
		sources := map[string][]string{}
		for _, l := range entries {
			if l.a.SHA256 != sum {
				k := fmt.Sprintf("sha256 %s, the %%s says %s", sum, l.a.SHA256)
				if sources[k] == nil {
					probs = append(probs, k)
				}
				sources[k] = append(sources[k], l.from)
			}
			if l.a.Size != size {
				k := fmt.Sprintf("%d bytes, the %%s says %d", size, l.a.Size)
				if sources[k] == nil {
					probs = append(probs, k)
				}
				sources[k] = append(sources[k], l.from)
			}
		}
		for i, k := range probs {
			probs[i] = fmt.Sprintf(k, strings.Join(sources[k], " and the "))
		}
		if len(probs) > 0 {
			r.add(CheckArtifactPrefix+name, false, "%s", strings.Join(probs, "; "))
			continue
		}
		r.add(CheckArtifactPrefix+name, true, "sha256 %s, %d bytes", sum, size)
	}

	if v.evidence != nil {
		ea, err1 := contracts.CanonicalJSON(nonNil(v.evidence.Artifacts))
		ba, err2 := contracts.CanonicalJSON(nonNil(b.Artifacts))
		if err1 != nil || err2 != nil || !bytes.Equal(ea, ba) {
			r.add(CheckArtifactLists, false, "the bundle lists %d artifact(s) that differ from the evidence's %d", len(b.Artifacts), len(v.evidence.Artifacts))
		} else {
			r.add(CheckArtifactLists, true, "the bundle lists exactly the evidence's %d artifact(s)", len(b.Artifacts))
		}
	} else if len(b.Artifacts) > 0 {
		r.add(CheckArtifactLists, false, "the bundle lists %d artifact(s) but binds no evidence", len(b.Artifacts))
	}

	// A proof folder holds exactly what its signatures cover.
	known := map[string]bool{BundleFile: true, EvidenceFile: true, ContractFile: true}
	for _, n := range names {
		known[filepath.Clean(n)] = true
	}
	var stray []string
	_ = fs.WalkDir(v.root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return nil
		}
		rel := filepath.FromSlash(p)
		// Dot files are interrupted writes (".bundle.json.tmp"): never served, never shown.
		if d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		if !known[rel] {
			stray = append(stray, rel)
		}
		return nil
	})
	sort.Strings(stray)
	if len(stray) > 0 {
		r.add(CheckUnlisted, false, "files no signature covers: %s", strings.Join(stray, ", "))
	} else {
		r.add(CheckUnlisted, true, "every file in the folder is signed, hashed or listed with a digest")
	}
}

func (v *dirVerifier) checkTimeline() {
	r, b := v.r, v.bundle
	head, err := contracts.VerifyChain(b.Timeline)
	switch {
	case err != nil:
		r.add(CheckTimeline, false, "the hash chain is broken: %v", err)
	case head != b.TimelineHead:
		r.add(CheckTimeline, false, "the chain of %d event(s) ends at %s, the bundle's timeline_head is %s", len(b.Timeline), head, b.TimelineHead)
	default:
		r.add(CheckTimeline, true, "%d event(s) chain to the timeline_head %s", len(b.Timeline), head)
	}
}

func (v *dirVerifier) checkVerdict() {
	r, b := v.r, v.bundle
	if v.contract == nil {
		r.add(CheckVerdict, false, "the verdict cannot be re-derived without a valid %s", ContractFile)
		return
	}
	if ok, msg, recorded := v.recordedVerdict(); recorded {
		r.Rederived = "recorded"
		r.add(CheckVerdict, ok, "%s", msg)
		return
	}
	exp := policy.Expectation{
		ContractHash:      b.ContractHash,
		ImplementationSHA: b.ImplementationSHA,
		VerifierPublicKey: v.verifierPub,
		VerifierDigest:    v.contract.Verifier.Digest,
		Build:             b.Build,
		Gate:              b.Gate,
		Timeline:          b.Timeline,
	}
	if v.evidence != nil {
		exp.ArtifactProblems = CheckArtifacts(v.dir, v.evidence.Artifacts)
	}
	d := policy.Decide(*v.contract, exp, v.evidence)
	r.Rederived = d.Verdict
	got, err1 := contracts.CanonicalJSON(nonNil(d.Reasons))
	want, err2 := contracts.CanonicalJSON(nonNil(b.Reasons))
	switch {
	case d.Verdict != b.Verdict:
		r.add(CheckVerdict, false, "the policy gives %s offline, the bundle says %s (%s)", d.Verdict, b.Verdict, d.Summary())
	case err1 != nil || err2 != nil || !bytes.Equal(got, want):
		r.add(CheckVerdict, false, "the policy gives %s with %d reason(s), the bundle records %d different reason(s)", d.Verdict, len(d.Reasons), len(b.Reasons))
	default:
		r.add(CheckVerdict, true, "policy.Decide re-derives %s with the same %d reason(s)", d.Verdict, len(d.Reasons))
	}
}

// recordedVerdict handles the verdicts the workflow writes without a policy run. Each is
// accepted only in its fixed shape, and none can release payment.
func (v *dirVerifier) recordedVerdict() (ok bool, msg string, recorded bool) {
	b := v.bundle
	if len(b.Reasons) != 1 {
		return false, "", false
	}
	rs := b.Reasons[0]
	switch rs.Code {
	case codeCapabilityFailed, codeNotConfigured:
		if b.Verdict != contracts.VerificationError || rs.Rule != policy.RuleIntegrity {
			return false, fmt.Sprintf("a %s reason must carry verification_error under rule 1, the bundle says %s under rule %d", rs.Code, b.Verdict, rs.Rule), true
		}
		return true, fmt.Sprintf("recorded, not re-derivable offline: a capability failed (%s); verification_error never releases payment", rs.Message), true
	case codeEmptyDiff:
		if b.Verdict != contracts.NotSatisfied || rs.Rule != policy.RuleBuild || v.evidence != nil {
			return false, fmt.Sprintf("an empty_diff reason must carry not_satisfied under rule 2 with no evidence, the bundle says %s under rule %d", b.Verdict, rs.Rule), true
		}
		for _, e := range b.Timeline {
			if e.Type == "executed" && e.Data["attempt"] == fmt.Sprint(b.Attempt) && e.Data["empty"] == "true" {
				return true, fmt.Sprintf("recorded: attempt %d changed nothing (timeline event %d), which is not_satisfied", b.Attempt, e.Seq), true
			}
		}
		return false, fmt.Sprintf("the bundle says attempt %d changed nothing but its timeline records no empty execution", b.Attempt), true
	}
	return false, "", false
}

// ContractReport is the verification of every attempt and try of one contract.
type ContractReport struct {
	ContractID string   `json:"contract_id"`
	Dir        string   `json:"dir"`
	OK         bool     `json:"ok"`
	Tries      []Report `json:"tries"`
	// Checks across the tries: numbering and that each timeline extends the one before.
	Checks []Check `json:"checks"`
}

// VerifyContract verifies every attempt-<n>/try-<m> folder of a contract under a proof store
// root, then checks that attempts are numbered without gaps and that each bundle's timeline
// extends the previous one's (a later bundle cannot rewrite earlier history).
func VerifyContract(root, contractID string, verifierPub, controlPub ed25519.PublicKey) (ContractReport, error) {
	dir := filepath.Join(root, contractID)
	if !contractIDPattern.MatchString(contractID) {
		return ContractReport{}, inputErr("verify: contract id %q is not a safe path element", contractID)
	}
	if err := NotSymlink(dir); err != nil {
		return ContractReport{}, inputErr("verify: %w", err)
	}
	return VerifyContractDir(dir, verifierPub, controlPub)
}

// VerifyContractDir is VerifyContract for a contract folder given by path.
func VerifyContractDir(dir string, verifierPub, controlPub ed25519.PublicKey) (ContractReport, error) {
	cr := ContractReport{ContractID: filepath.Base(dir), Dir: dir, Tries: []Report{}, Checks: []Check{}}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		if err == nil {
			err = fmt.Errorf("%s is not a directory", dir)
		}
		return cr, inputErr("verify: %w", err)
	}
	tries, err := TryDirs(dir)
	if err != nil {
		return cr, inputErr("verify: %w", err)
	}
	if len(tries) == 0 {
		return cr, inputErr("verify: %s holds no attempt-<n>/try-<m>/%s", dir, BundleFile)
	}
	var bundles []*contracts.Bundle
	for _, t := range tries {
		rep, err := VerifyDir(t.Path, verifierPub, controlPub)
		if err != nil {
			return cr, err
		}
		cr.Tries = append(cr.Tries, rep)
		bundles = append(bundles, readBundle(t.Path))
	}
	add := func(name string, ok bool, format string, args ...any) {
		cr.Checks = append(cr.Checks, Check{Name: name, OK: ok, Message: fmt.Sprintf(format, args...)})
	}

	var gaps []string
	wantAttempt := 1
	for i, t := range tries {
		if i == 0 || t.Attempt != tries[i-1].Attempt {
			if t.Attempt != wantAttempt {
				gaps = append(gaps, fmt.Sprintf("attempt-%d follows attempt-%d", t.Attempt, wantAttempt-1))
			}
			wantAttempt = t.Attempt + 1
			if t.Try != 1 {
				gaps = append(gaps, fmt.Sprintf("attempt-%d starts at try-%d", t.Attempt, t.Try))
			}
		} else if t.Try != tries[i-1].Try+1 {
			gaps = append(gaps, fmt.Sprintf("attempt-%d: try-%d follows try-%d", t.Attempt, t.Try, tries[i-1].Try))
		}
	}
	if len(gaps) > 0 {
		add(CheckAttempts, false, "%s", strings.Join(gaps, "; "))
	} else {
		add(CheckAttempts, true, "%d verification(s), attempts and tries numbered without gaps", len(tries))
	}

	var broken []string
	for i := 1; i < len(bundles); i++ {
		prev, cur := bundles[i-1], bundles[i]
		if prev == nil || cur == nil {
			broken = append(broken, fmt.Sprintf("%s or %s has no readable bundle", tries[i-1].Rel, tries[i].Rel))
			continue
		}
		if !isPrefix(prev.Timeline, cur.Timeline) {
			broken = append(broken, fmt.Sprintf("the timeline of %s does not extend the one of %s", tries[i].Rel, tries[i-1].Rel))
		}
		if prev.ContractHash != cur.ContractHash {
			broken = append(broken, fmt.Sprintf("%s and %s are for different contract hashes", tries[i-1].Rel, tries[i].Rel))
		}
	}
	if len(broken) > 0 {
		add(CheckTimelinePrefix, false, "%s", strings.Join(broken, "; "))
	} else {
		add(CheckTimelinePrefix, true, "each bundle's timeline extends the previous one's")
	}

	checkSettlement(dir, tries, bundles, controlPub, add)
	checkBase(dir, tries, bundles, verifierPub, add)

	cr.OK = true
	for _, t := range cr.Tries {
		cr.OK = cr.OK && t.OK
	}
	for _, c := range cr.Checks {
		cr.OK = cr.OK && c.OK
	}
	return cr, nil
}

func readBundle(dir string) *contracts.Bundle {
	data, err := ReadDocument(dir, BundleFile)
	if err != nil {
		return nil
	}
	var b contracts.Bundle
	if decodeExact(data, &b) != nil {
		return nil
	}
	return &b
}

func isPrefix(a, b []contracts.Event) bool {
	if len(a) > len(b) {
		return false
	}
	for i := range a {
		if a[i].Hash != b[i].Hash {
			return false
		}
	}
	return true
}

// decodeExact decodes data into v and refuses anything the decoded value does not say exactly:
// unknown members, members that only match case-insensitively, duplicates, trailing data.
// Signatures cover the decoded value, so the file must be that value and nothing else.
func decodeExact(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	return sameDocument(data, v)
}

// sameDocument reports whether the file's JSON value is exactly v's canonical form.
func sameDocument(data []byte, v any) error {
	file, err := contracts.Canonicalize(data)
	if err != nil {
		return err
	}
	decoded, err := contracts.CanonicalJSON(v)
	if err != nil {
		return err
	}
	if !bytes.Equal(file, decoded) {
		return errors.New("the file holds members or values the decoded document does not (unknown, duplicate, case-folded or defaulted)")
	}
	return nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }

// checkSettlement verifies settlement.json, when there is one: the control worker's
// signature, and that it settles on the last verification as written (its bundle's digest,
// verdict and contract hash) with a timeline extending that bundle's. Its absence is not a
// failure: the payment may not have settled yet.
func checkSettlement(dir string, tries []TryDir, bundles []*contracts.Bundle, controlPub ed25519.PublicKey, add func(string, bool, string, ...any)) {
	data, err := ReadDocument(dir, SettlementFile)
	if errors.Is(err, os.ErrNotExist) {
		add(CheckSettlement, true, "no %s: the payment has not settled yet (or settled before settlements were signed)", SettlementFile)
		return
	}
	var s contracts.Settlement
	if err == nil {
		err = decodeExact(data, &s)
	}
	if err != nil {
		add(CheckSettlement, false, "%s is unreadable: %v", SettlementFile, err)
		return
	}
	if err := s.VerifySignature(controlPub); err != nil {
		add(CheckSettlementSig, false, "%s: the signature does not verify under the expected control key %s: %v", SettlementFile, contracts.KeyFingerprint(controlPub), err)
	} else {
		add(CheckSettlementSig, true, "%s is signed by the control key %s", SettlementFile, contracts.KeyFingerprint(controlPub))
	}
	last, b := tries[len(tries)-1], bundles[len(bundles)-1]
	var problems []string
	switch {
	case b == nil:
		problems = append(problems, "the last verification has no readable bundle")
	default:
		if raw, err := ReadDocument(last.Path, BundleFile); err != nil || contracts.DigestBytes(raw) != s.BundleDigest {
			problems = append(problems, fmt.Sprintf("it settles on bundle %s, not the %s of %s", short(s.BundleDigest), BundleFile, last.Rel))
		}
		if s.Attempt != last.Attempt || s.Try != last.Try {
			problems = append(problems, fmt.Sprintf("it names attempt %d try %d, the last verification is %s", s.Attempt, s.Try, last.Rel))
		}
		if s.ContractHash != b.ContractHash || s.ContractID != b.ContractID {
			problems = append(problems, "it is for another contract than the bundles")
		}
		if s.Verdict != b.Verdict {
			problems = append(problems, fmt.Sprintf("it records verdict %q, the last bundle %q", s.Verdict, b.Verdict))
		}
		if !isPrefix(b.Timeline, s.Timeline) {
			problems = append(problems, "its timeline does not extend the last bundle's")
		}
	}
	if head, err := contracts.VerifyChain(s.Timeline); err != nil || head != s.TimelineHead {
		problems = append(problems, fmt.Sprintf("its timeline is not an intact hash chain ending at %s", short(s.TimelineHead)))
	}
	if len(problems) > 0 {
		add(CheckSettlement, false, "%s", strings.Join(problems, "; "))
		return
	}
	add(CheckSettlement, true, "settled %s: payment %s, on the last verification's bundle", s.State, s.Payment.State)
}

// checkBase verifies the base check the bundles bind: base/evidence.json has the digest each
// binding bundle records, is valid evidence signed by the verifier key, for the same contract
// hash, attempt 0 and the bundle's base commit, and every artifact it lists is in the base
// folder with its digest. Bundles that bind none add no check.
func checkBase(dir string, tries []TryDir, bundles []*contracts.Bundle, verifierPub ed25519.PublicKey, add func(string, bool, string, ...any)) {
	var binding []int
	for i, b := range bundles {
		if b != nil && b.Base != nil {
			binding = append(binding, i)
		}
	}
	if len(binding) == 0 {
		return
	}
	baseDir := filepath.Join(dir, BaseDir)
	if err := NotSymlink(baseDir); err != nil {
		add(CheckBase, false, "%s: %v", BaseDir, err)
		return
	}
	data, err := ReadDocument(baseDir, EvidenceFile)
	if err != nil {
		add(CheckBase, false, "%d bundle(s) bind a base check, but %s/%s cannot be read: %s", len(binding), BaseDir, EvidenceFile, oneLine(err))
		return
	}
	digest := contracts.DigestBytes(data)
	var probs []string
	for _, i := range binding {
		if d := bundles[i].Base.EvidenceDigest; d != digest {
			probs = append(probs, fmt.Sprintf("%s binds base evidence %s, %s/%s has sha256 %s", tries[i].Rel, d, BaseDir, EvidenceFile, digest))
		}
	}
	ev, err := contracts.DecodeEvidence(data)
	if err != nil {
		add(CheckBase, false, "%s/%s is not valid evidence: %s", BaseDir, EvidenceFile, oneLine(err))
		return
	}
	if err := ev.VerifySignature(verifierPub); err != nil {
		probs = append(probs, fmt.Sprintf("the base evidence signature does not verify under the verifier key %s: %v", contracts.KeyFingerprint(verifierPub), err))
	}
	if ev.Attempt != 0 {
		probs = append(probs, fmt.Sprintf("the base evidence is for attempt %d, not the base check (0)", ev.Attempt))
	}
	for _, i := range binding {
		b := bundles[i]
		if ev.ContractHash != b.ContractHash || ev.ContractID != b.ContractID {
			probs = append(probs, fmt.Sprintf("the base evidence is for contract %s hash %s, %s for %s hash %s", ev.ContractID, ev.ContractHash, tries[i].Rel, b.ContractID, b.ContractHash))
		}
		if ev.ExpectedSHA != b.BaseSHA {
			probs = append(probs, fmt.Sprintf("the base evidence measured commit %s, the base of %s is %s", ev.ExpectedSHA, tries[i].Rel, b.BaseSHA))
		}
	}
	probs = append(probs, CheckArtifacts(baseDir, ev.Artifacts)...)
	if len(probs) > 0 {
		add(CheckBase, false, "%s", strings.Join(probs, "; "))
		return
	}
	add(CheckBase, true, "%s/%s (sha256 %s), bound by %d bundle(s), is signed by the verifier key %s for the base commit %s; its %d artifact(s) match their digests",
		BaseDir, EvidenceFile, digest, len(binding), contracts.KeyFingerprint(verifierPub), ev.ExpectedSHA, len(ev.Artifacts))
}
