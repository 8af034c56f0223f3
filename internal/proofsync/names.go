package proofsync

import (
	"fmt"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/proofstore"
)

// Parts: each is written by one queue and published as one manifest, so a reader never sees
// half of one.
const (
	PartVerifier   = "verifier"   // evidence.json and the artifacts it lists (verify queue)
	PartControl    = "control"    // bundle.json and contract.json (control queue)
	PartSettlement = "settlement" // settlement.json (control queue)
)

// BaseRel is the rel of the base check folder. Its verifier part is BasePart(contractHash):
// the base check runs before a quote is accepted, possibly more than once for one contract
// id, and each run's evidence must keep its own immutable name.
const BaseRel = proofstore.BaseDir

// namePrefix is the store folder all proof parts live under.
const namePrefix = "proofs/"

// Limits on a path inside a part. A segment of 255 bytes is what common file systems take;
// the whole path stays well inside PATH_MAX once joined to the proof root.
const (
	maxSegmentLen = 255
	maxPathLen    = 1024
)

var hashHexPattern = regexp.MustCompile(`^[0-9a-f]{1,64}$`)

// BasePart is the name of the base check's verifier part for a contract hash ("verifier-"
// and its hex, with any "sha256:" prefix dropped). The hash becomes part of a store name, so
// it must be lowercase hex of at most 64 digits.
func BasePart(contractHash string) (string, error) {
	h := strings.TrimPrefix(contractHash, "sha256:")
	if !hashHexPattern.MatchString(h) {
		return "", fmt.Errorf("proofsync: contract hash %q is not 1 to 64 lowercase hex digits", contractHash)
	}
	return PartVerifier + "-" + h, nil
}

// VerifierPart is the folder (rel) and part a verification's evidence is published under,
// for its attempt (0: the base check) and try. The verify worker publishes under it and the
// control worker fetches from it, so both derive it here.
func VerifierPart(contractHash string, attempt, try int) (rel, part string, err error) {
	if attempt == 0 {
		part, err = BasePart(contractHash)
		return BaseRel, part, err
	}
	return TryRel(attempt, max(try, 1)), PartVerifier, nil
}

// TryRel is the rel of one verification's folder, as the proof store lays it out.
func TryRel(attempt, try int) string {
	return fmt.Sprintf("attempt-%d/try-%d", attempt, try)
}

// Name is the store name of a part: "proofs/<contract>/<rel>/<part>", or
// "proofs/<contract>/<part>" for rel "". Only the parts the proof folder layout has are
// accepted: the settlement beside the attempts, the verifier and control parts of a try,
// and a base part in the base folder.
func Name(contractID, rel, part string) (string, error) {
	if err := checkName(contractID, rel, part); err != nil {
		return "", fmt.Errorf("proofsync: %w", err)
	}
	if rel == "" {
		return namePrefix + contractID + "/" + part, nil
	}
	return namePrefix + contractID + "/" + rel + "/" + part, nil
}

func checkName(contractID, rel, part string) error {
	if !contracts.ValidContractID(contractID) {
		return fmt.Errorf("contract id %q does not match %s", contractID, contracts.ContractIDPattern)
	}
	switch {
	case rel == "":
		if part != PartSettlement {
			return fmt.Errorf("part %q in the contract folder: only %q lives there", part, PartSettlement)
		}
	case rel == BaseRel:
		if !isBasePart(part) {
			return fmt.Errorf("part %q in the base folder: want %s-<contract hash>", part, PartVerifier)
		}
	case isTryRel(rel):
		if part != PartVerifier && part != PartControl {
			return fmt.Errorf("part %q in %s: want %q or %q", part, rel, PartVerifier, PartControl)
		}
	default:
		return fmt.Errorf("folder %q is neither %q, %q nor attempt-<n>/try-<m>", rel, "", BaseRel)
	}
	return nil
}

func isBasePart(part string) bool {
	h, ok := strings.CutPrefix(part, PartVerifier+"-")
	return ok && hashHexPattern.MatchString(h)
}

// parseTryRel returns the attempt and try numbers of a try folder's rel: the proof store's
// attempt-<n>/try-<m> and nothing around it.
func parseTryRel(rel string) (attempt, try int, ok bool) {
	attempt, try, ok = proofstore.ParseTryDir(rel)
	return attempt, try, ok && rel == TryRel(attempt, try)
}

func isTryRel(rel string) bool {
	_, _, ok := parseTryRel(rel)
	return ok
}

// checkPath refuses any path that could leave the part's folder, collide with a temporary
// file (those start with a dot) or mean different things on different hosts. Paths in a
// manifest come from whoever wrote the store, so this runs on fetch as well as on publish.
func checkPath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("empty path")
	case len(p) > maxPathLen:
		return fmt.Errorf("path of %d bytes, more than %d", len(p), maxPathLen)
	case !utf8.ValidString(p):
		// JSON would replace the invalid bytes, so the manifest would name another file.
		return fmt.Errorf("path %q is not valid UTF-8", p)
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("path %q is absolute", p)
	case strings.Contains(p, `\`):
		return fmt.Errorf("path %q holds a backslash", p)
	}
	for _, c := range p {
		if c < 0x20 || c == 0x7f {
			return fmt.Errorf("path %q holds control character %U", p, c)
		}
	}
	for seg := range strings.SplitSeq(p, "/") {
		switch {
		case seg == "":
			return fmt.Errorf("path %q has an empty segment", p)
		case seg == "." || seg == "..":
			return fmt.Errorf("path %q has a %q segment", p, seg)
		case strings.HasPrefix(seg, "."):
			return fmt.Errorf("path %q has a segment starting with a dot", p)
		case len(seg) > maxSegmentLen:
			return fmt.Errorf("path %q has a segment of %d bytes, more than %d", p, len(seg), maxSegmentLen)
		}
	}
	return nil
}

// checkPaths checks a part's file list: how many, each path, no duplicates, and no path that
// is also the folder of another (one of them could not be written).
func checkPaths(part string, paths []string) error {
	if len(paths) == 0 {
		return fmt.Errorf("no files")
	}
	if len(paths) > MaxFiles {
		return fmt.Errorf("%d files, more than %d", len(paths), MaxFiles)
	}
	seen := make(map[string]bool, len(paths))
	for _, p := range paths {
		if err := checkPath(p); err != nil {
			return err
		}
		if seen[p] {
			return fmt.Errorf("path %q listed twice", p)
		}
		seen[p] = true
		if err := checkPartFile(part, p); err != nil {
			return err
		}
	}
	for _, p := range paths {
		for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
			if seen[dir] {
				return fmt.Errorf("path %q is listed both as a file and as the folder of %q", dir, p)
			}
		}
	}
	return nil
}

// checkPartFile keeps each part to the files its queue writes, so one worker's part can
// never overwrite another's documents when both are fetched into the same folder.
func checkPartFile(part, p string) error {
	switch part {
	case PartControl:
		if p != proofstore.BundleFile && p != proofstore.ContractFile {
			return fmt.Errorf("%q in a %s part: it holds only %s and %s", p, part, proofstore.BundleFile, proofstore.ContractFile)
		}
	case PartSettlement:
		if p != proofstore.SettlementFile {
			return fmt.Errorf("%q in a %s part: it holds only %s", p, part, proofstore.SettlementFile)
		}
	default: // a verifier part, of a try or of the base check
		if p == proofstore.BundleFile || p == proofstore.ContractFile || p == proofstore.SettlementFile {
			return fmt.Errorf("%q in a verifier part: the control worker writes it", p)
		}
	}
	return nil
}
