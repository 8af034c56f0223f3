// Package proofstore keeps proof bundles on disk: one directory per contract attempt and
// verification try, holding evidence.json (signed by the verifier), bundle.json (signed by the
// control worker), screenshots, traces and logs, each addressed by its sha256 digest.
package proofstore

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
)

// File names inside a proof directory.
const (
	ContractFile = "contract.json"
	EvidenceFile = "evidence.json"
	BundleFile   = "bundle.json"
	// SettlementFile is the signed settlement, in the contract's folder beside its attempts.
	SettlementFile = "settlement.json"
)

// Store is a proof store rooted at a directory.
type Store struct {
	Root string
}

// Dir is the proof directory of one verification. Contract ids are checked again here, so a
// hostile id cannot reach outside the root.
func (s Store) Dir(contractID string, attempt, try int) (string, error) {
	if !contracts.ValidContractID(contractID) {
		return "", fmt.Errorf("proof store: contract id %q is not a safe path element", contractID)
	}
	if attempt < 0 || try < 1 {
		return "", fmt.Errorf("proof store: attempt %d try %d", attempt, try)
	}
	if attempt == 0 { // the base commit, checked before the quote is offered
		// A settled contract's proof is final: its base evidence is never rewritten.
		if _, err := os.Lstat(filepath.Join(s.Root, contractID, SettlementFile)); err == nil {
			return "", fmt.Errorf("proof store: contract %s is settled; its proof folder is not rewritten (quote again for a new contract)", contractID)
		}
		return filepath.Join(s.Root, contractID, BaseDir), nil
	}
	return filepath.Join(s.Root, contractID, fmt.Sprintf("attempt-%d", attempt), fmt.Sprintf("try-%d", try)), nil
}

// WriteBundle writes bundle.json, and the contract it judges, into the verification's
// directory.
func (s Store) WriteBundle(c contracts.Contract, b contracts.Bundle) (capability.RecordResult, error) {
	try := b.Try
	if try == 0 {
		try = 1
	}
	dir, err := s.Dir(b.ContractID, b.Attempt, try)
	if err != nil {
		return capability.RecordResult{}, err
	}
	cdata, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return capability.RecordResult{}, err
	}
	if err := writeFile(dir, ContractFile, cdata); err != nil {
		return capability.RecordResult{}, err
	}
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return capability.RecordResult{}, err
	}
	if err := writeFile(dir, BundleFile, data); err != nil {
		return capability.RecordResult{}, err
	}
	return capability.RecordResult{ProofDir: dir, BundleDigest: contracts.DigestBytes(data)}, nil
}

// WriteSettlement writes settlement.json into the contract's folder and returns its path.
func (s Store) WriteSettlement(st contracts.Settlement) (string, error) {
	if !contracts.ValidContractID(st.ContractID) {
		return "", fmt.Errorf("proof store: contract id %q is not a safe path element", st.ContractID)
	}
	dir := filepath.Join(s.Root, st.ContractID)
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return "", err
	}
	if err := writeFile(dir, SettlementFile, data); err != nil {
		return "", err
	}
	return filepath.Join(dir, SettlementFile), nil
}

// BaseRef names the base check's evidence (<contract>/base/evidence.json) for a bundle to
// bind: only evidence of this contract hash, for attempt 0, measured on the base commit. No
// evidence there, or another contract's, gives nil; an unreadable file is an error, so a
// bundle never silently drops a base check that ran. The evidence's signature is the
// verifier's and is checked offline (VerifyContractDir), like an attempt's.
func (s Store) BaseRef(contractID, contractHash, baseSHA string) (*contracts.BaseRef, error) {
	dir, err := s.Dir(contractID, 0, 1)
	if err != nil {
		return nil, err
	}
	data, err := ReadDocument(dir, EvidenceFile)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	}
	var ev contracts.Evidence
	if err := json.Unmarshal(data, &ev); err != nil {
		return nil, fmt.Errorf("proof store: base evidence: %w", err)
	}
	if ev.ContractHash != contractHash || ev.Attempt != 0 || ev.ExpectedSHA != baseSHA {
		return nil, nil
	}
	return &contracts.BaseRef{EvidenceDigest: contracts.DigestBytes(data)}, nil
}

// WriteEvidence writes evidence.json and returns its digest.
func (s Store) WriteEvidence(dir string, ev *contracts.Evidence) (string, error) {
	data, err := json.MarshalIndent(ev, "", "  ")
	if err != nil {
		return "", err
	}
	if err := writeFile(dir, EvidenceFile, data); err != nil {
		return "", err
	}
	return contracts.DigestBytes(data), nil
}

func writeFile(dir, name string, data []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("proof store: %w", err)
	}
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("proof store: %w", err)
	}
	return os.Rename(tmp, filepath.Join(dir, name))
}

// cleanName checks that an artifact name is a relative path that stays below its folder.
func cleanName(name string) (string, error) {
	if name == "" || filepath.IsAbs(name) || strings.Contains(name, "\\") {
		return "", fmt.Errorf("artifact name %q is not a relative path", name)
	}
	clean := filepath.Clean(name)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("artifact name %q escapes the proof directory", name)
	}
	return clean, nil
}

// Contained resolves an artifact name inside dir, refusing names that escape it. Readers of
// hostile folders use OpenContained, which cannot race a symlink swapped in afterwards.
func Contained(dir, name string) (string, error) {
	clean, err := cleanName(name)
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, clean)
	real, err := filepath.EvalSymlinks(p)
	if err == nil {
		root, rerr := filepath.EvalSymlinks(dir)
		if rerr == nil && !strings.HasPrefix(real, root+string(filepath.Separator)) {
			return "", fmt.Errorf("artifact %q resolves outside the proof directory", name)
		}
	}
	return p, nil
}

// CheckArtifacts recomputes every artifact digest the evidence lists and reports each
// missing, resized or altered file. The policy turns any problem into verification_error.
func CheckArtifacts(dir string, artifacts []contracts.Artifact) []string {
	problems := []string{}
	for _, a := range artifacts {
		p, err := Contained(dir, a.Name)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		sum, size, err := FileDigest(p)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s: %v", a.Name, err))
		case size != a.Size:
			problems = append(problems, fmt.Sprintf("%s: %d bytes, evidence says %d", a.Name, size, a.Size))
		case sum != a.SHA256:
			problems = append(problems, fmt.Sprintf("%s: sha256 %s, evidence says %s", a.Name, contracts.ShortSHA(sum), contracts.ShortSHA(a.SHA256)))
		}
	}
	return problems
}

// FileDigest is the hex sha256 and size of a file.
func FileDigest(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
