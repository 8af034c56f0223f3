package proofstore

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/signoff/signoff/contracts"
)

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
	if !contracts.ValidContractID(contractID) {
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
			problems = append(problems, fmt.Sprintf("it settles on bundle %s, not the %s of %s", contracts.ShortSHA(s.BundleDigest), BundleFile, last.Rel))
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
		problems = append(problems, fmt.Sprintf("its timeline is not an intact hash chain ending at %s", contracts.ShortSHA(s.TimelineHead)))
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
