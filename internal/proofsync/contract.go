package proofsync

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/artifacts"
	"github.com/signoff/signoff/internal/proofstore"
)

// tryParts is what the store holds for one verification folder.
type tryParts struct {
	rel               string
	attempt, try      int
	verifier, control bool
	controlBundle     bool // the fetched control part listed bundle.json
	controlContract   bool // and contract.json
}

// FetchContract materialises every part of a contract that is in the store into
// Root/<contract>/ (signoff proof get): each attempt's verifier then control part, by attempt
// and try, then the settlement, then the base part for the contract's hash. The hash is read
// from the fetched bundles' contract_hash, else computed from a fetched contract.json; with
// neither, the base part is taken only if it is the only one. It returns the store names
// fetched, sorted. A contract with no part in the store is an error wrapping
// artifacts.ErrNotFound.
func (s Sync) FetchContract(ctx context.Context, contractID string) ([]string, error) {
	if !contracts.ValidContractID(contractID) {
		return nil, fmt.Errorf("proofsync: fetch contract: contract id %q does not match %s", contractID, contracts.ContractIDPattern)
	}
	fail := func(err error) ([]string, error) {
		return nil, fmt.Errorf("proofsync: fetch contract %s: %w", contractID, err)
	}
	prefix := namePrefix + contractID + "/"
	entries, err := s.Store.List(ctx, prefix)
	if err != nil {
		return fail(err)
	}
	// Other names may share the prefix (single artifacts); only part names are taken.
	tries := map[string]*tryParts{}
	var settlement bool
	var baseParts []string
	for _, e := range entries {
		rest := strings.TrimPrefix(e.Name, prefix)
		if rest == PartSettlement {
			settlement = true
			continue
		}
		if part, ok := strings.CutPrefix(rest, BaseRel+"/"); ok {
			if isBasePart(part) {
				baseParts = append(baseParts, part)
			}
			continue
		}
		i := strings.LastIndexByte(rest, '/')
		if i < 0 {
			continue
		}
		rel, part := rest[:i], rest[i+1:]
		attempt, try, ok := parseTryRel(rel)
		if !ok || (part != PartVerifier && part != PartControl) {
			continue
		}
		t := tries[rel]
		if t == nil {
			t = &tryParts{rel: rel, attempt: attempt, try: try}
			tries[rel] = t
		}
		t.verifier = t.verifier || part == PartVerifier
		t.control = t.control || part == PartControl
	}
	if len(tries) == 0 && !settlement && len(baseParts) == 0 {
		return fail(fmt.Errorf("no proof parts under %s: %w", prefix, artifacts.ErrNotFound))
	}

	ordered := make([]*tryParts, 0, len(tries))
	for _, t := range tries {
		ordered = append(ordered, t)
	}
	sort.Slice(ordered, func(i, j int) bool {
		if ordered[i].attempt != ordered[j].attempt {
			return ordered[i].attempt < ordered[j].attempt
		}
		return ordered[i].try < ordered[j].try
	})

	var fetched []string
	fetch := func(rel, part string) (Manifest, error) {
		m, ok, err := s.fetch(ctx, contractID, rel, part)
		if err != nil {
			return Manifest{}, err
		}
		if ok { // names are never removed, but a store emptied by hand is not a reason to fail
			name, _ := Name(contractID, rel, part)
			fetched = append(fetched, name)
		}
		return m, nil
	}
	for _, t := range ordered {
		if t.verifier {
			if _, err := fetch(t.rel, PartVerifier); err != nil {
				return nil, err
			}
		}
		if t.control {
			m, err := fetch(t.rel, PartControl)
			if err != nil {
				return nil, err
			}
			for _, f := range m.Files {
				t.controlBundle = t.controlBundle || f.Path == proofstore.BundleFile
				t.controlContract = t.controlContract || f.Path == proofstore.ContractFile
			}
		}
	}
	if settlement {
		if _, err := fetch("", PartSettlement); err != nil {
			return nil, err
		}
	}

	base, err := s.chooseBase(contractID, ordered, baseParts)
	if err != nil {
		return fail(err)
	}
	if base != "" {
		if _, err := fetch(BaseRel, base); err != nil {
			return nil, err
		}
	}
	sort.Strings(fetched)
	return fetched, nil
}

// chooseBase picks the base part that belongs to the contract whose attempts were fetched:
// the base folder holds one check's evidence, and a contract id may have had base checks for
// other terms before its quote was accepted. It returns "" when there is none to take.
func (s Sync) chooseBase(contractID string, tries []*tryParts, baseParts []string) (string, error) {
	if len(baseParts) == 0 {
		return "", nil
	}
	hash, err := s.contractHash(contractID, tries)
	if err != nil {
		return "", err
	}
	if hash == "" {
		if len(baseParts) == 1 {
			return baseParts[0], nil
		}
		return "", nil // several checks and nothing says which one is this contract's
	}
	part, err := BasePart(hash)
	if err != nil {
		return "", err
	}
	if !slices.Contains(baseParts, part) {
		return "", nil // no base check ran for these terms
	}
	return part, nil
}

// contractHash reads the contract hash from the bundles just fetched, else from a contract.json
// just fetched; "" when neither was. Bundles of one contract that disagree are an error: the
// base folder can hold only one check, and picking one would hide the disagreement.
func (s Sync) contractHash(contractID string, tries []*tryParts) (string, error) {
	var hash, from string
	for _, t := range tries {
		if !t.controlBundle {
			continue
		}
		h, err := s.bundleHash(contractID, t.rel)
		if err != nil {
			return "", err
		}
		switch {
		case hash == "":
			hash, from = h, t.rel
		case h != hash:
			return "", fmt.Errorf("the bundles of %s and %s name different contract hashes (%s, %s)", from, t.rel, hash, h)
		}
	}
	if hash != "" {
		return hash, nil
	}
	for _, t := range tries {
		if t.controlContract {
			return s.contractFileHash(contractID, t.rel)
		}
	}
	return "", nil
}

func (s Sync) bundleHash(contractID, rel string) (string, error) {
	data, err := s.readDocument(contractID, rel, proofstore.BundleFile, contracts.MaxBundleBytes)
	if err != nil {
		return "", err
	}
	var b struct {
		ContractHash string `json:"contract_hash"`
	}
	if err := json.Unmarshal(data, &b); err != nil {
		return "", fmt.Errorf("%s/%s: %w", rel, proofstore.BundleFile, err)
	}
	if b.ContractHash == "" {
		return "", fmt.Errorf("%s/%s names no contract_hash", rel, proofstore.BundleFile)
	}
	return b.ContractHash, nil
}

// contractFileHash hashes contract.json as the control worker does; its terms were accepted
// when it was quoted, so the criteria-count bound for new contracts does not apply.
func (s Sync) contractFileHash(contractID, rel string) (string, error) {
	data, err := s.readDocument(contractID, rel, proofstore.ContractFile, contracts.MaxContractBytes)
	if err != nil {
		return "", err
	}
	h, err := contracts.HashJSON(data, contracts.LoadOptions{AllowMoreCriteria: true})
	if err != nil {
		return "", fmt.Errorf("%s/%s: %w", rel, proofstore.ContractFile, err)
	}
	return h, nil
}

// readDocument reads a JSON document from a folder fetched a moment ago, through an os.Root
// and under the document's size and depth limits.
func (s Sync) readDocument(contractID, rel, name string, maxBytes int64) ([]byte, error) {
	dir, err := s.openFolder(contractID, rel, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	defer func() { _ = dir.Close() }()
	f, err := dir.Open(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	defer func() { _ = f.Close() }()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s/%s is not a regular file", rel, name)
	}
	return contracts.ReadJSON(f, rel+"/"+name, maxBytes, contracts.MaxJSONDepth)
}
