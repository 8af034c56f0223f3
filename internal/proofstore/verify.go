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
	// CheckReadsOnOrigin: every read the evidence records was of a page on the preview's
	// origin.
	CheckReadsOnOrigin  = "reads_on_origin"
	CheckArtifactPrefix = "artifact "
	CheckArtifactLists  = "artifact_lists"
	CheckUnlisted       = "unlisted_files"
	CheckSymlinks       = "symlinks"
	CheckTimeline       = "timeline"
	CheckVerdict        = "verdict"

	// Cross-verification checks of VerifyContract.
	CheckAttempts       = "attempts"
	CheckTimelinePrefix = "timeline_prefix"
	CheckSettlement     = "settlement"
	CheckSettlementSig  = "settlement_signature"
	// CheckBase is the base commit's check that bundles bind (Bundle.Base): present only
	// when one does.
	CheckBase = "base"
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
	if off := readsOffOrigin(ev); off != "" {
		r.add(CheckReadsOnOrigin, false, "a read was of %s, not of a page on the preview's origin %s", off, ev.PreviewURL)
	} else {
		r.add(CheckReadsOnOrigin, true, "every recorded read is of a page on the preview's origin")
	}
}

// readsOffOrigin is the first read URL the evidence records outside its preview's origin ("" when
// none): what was measured must be the commit's page as the preview serves it.
func readsOffOrigin(ev *contracts.Evidence) string {
	want := contracts.Origin(ev.PreviewURL)
	for _, res := range ev.Results {
		for _, rd := range res.Reads {
			if rd.URL != "" && (want == "" || contracts.Origin(rd.URL) != want) {
				return rd.URL
			}
		}
	}
	return ""
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
	case policy.CodeCapabilityFailed, policy.CodeNotConfigured:
		if b.Verdict != contracts.VerificationError || rs.Rule != policy.RuleIntegrity {
			return false, fmt.Sprintf("a %s reason must carry verification_error under rule 1, the bundle says %s under rule %d", rs.Code, b.Verdict, rs.Rule), true
		}
		return true, fmt.Sprintf("recorded, not re-derivable offline: a capability failed (%s); verification_error never releases payment", rs.Message), true
	case policy.CodeEmptyDiff:
		if b.Verdict != contracts.NotSatisfied || rs.Rule != policy.RuleBuild || v.evidence != nil {
			return false, fmt.Sprintf("an empty_diff reason must carry not_satisfied under rule 2 with no evidence, the bundle says %s under rule %d", b.Verdict, rs.Rule), true
		}
		for _, e := range b.Timeline {
			if e.Type == contracts.EventExecuted && e.Data[contracts.DataAttempt] == fmt.Sprint(b.Attempt) && e.Data[contracts.DataEmpty] == "true" {
				return true, fmt.Sprintf("recorded: attempt %d changed nothing (timeline event %d), which is not_satisfied", b.Attempt, e.Seq), true
			}
		}
		return false, fmt.Sprintf("the bundle says attempt %d changed nothing but its timeline records no empty execution", b.Attempt), true
	}
	return false, "", false
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
