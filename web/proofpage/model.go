// Package proofpage renders proof bundles for people: an HTML page per contract (served on the
// loopback listener under /proofs/, or written to a static folder), and, from the same data
// through one text template set, the PR comment and the short chat summary. Every sentence on
// them is a value from the signed bundle, the signed evidence or the hashed contract, and the
// page can show the offline verification of all three (proofstore.VerifyDir).
package proofpage

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/proofstore"
)

// Page is one contract's proof: every verification folder under its contract folder.
type Page struct {
	Slug     string // the contract folder's name, the URL path element
	Dir      string
	Contract *contracts.Contract // from the latest verification's contract.json
	Attempts []*Attempt          // by attempt, then try
	// BaseShots maps the base commit's screenshot names to their paths relative to the
	// contract folder: those the base check's evidence lists (when <contract>/base holds one),
	// else every screenshot found there.
	BaseShots map[string]string
	// BaseEvidence is the base check's evidence (<contract>/base/evidence.json), signed by the
	// verifier, and BaseDigest its sha256; bundles bind it by that digest (Bundle.Base).
	BaseEvidence *contracts.Evidence
	BaseDigest   string
	// Verified is the offline verification, when the page was built with the public keys.
	Verified *proofstore.ContractReport
	// VerifyNote says why there is no verification (no keys, or the verification could not run).
	VerifyNote string
	// VerifierFingerprint and ControlFingerprint name the keys Verified was checked with.
	VerifierFingerprint, ControlFingerprint string
	// Status is the contract index's current entry: not signed, shown as such.
	Status *capability.IndexEntry
	// Settlement is the signed record of how the contract ended (settlement.json), if any.
	Settlement *contracts.Settlement
}

// Attempt is one verification folder as loaded: lenient, so a damaged proof still renders and
// the verification section says what is wrong.
type Attempt struct {
	proofstore.TryDir
	Bundle   *contracts.Bundle
	Evidence *contracts.Evidence
	Contract *contracts.Contract
	Problems []string // files that could not be read
	Report   *proofstore.Report
}

// Latest is the last verification, or nil.
func (p *Page) Latest() *Attempt {
	if len(p.Attempts) == 0 {
		return nil
	}
	return p.Attempts[len(p.Attempts)-1]
}

// slugRe is what a contract folder name must look like to be served: contract ids, and copies
// renamed by hand. Names starting with "_" are reserved (the trace viewer lives at _trace).
var slugRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// ValidSlug reports whether a folder name can be a contract page's path element.
func ValidSlug(s string) bool { return slugRe.MatchString(s) && s != "." && s != ".." }

// Resolve turns a folder given on the command line into a proof store root and the contract
// folders to show: a verification folder (attempt-<n>/try-<m>, or a loose folder holding a
// bundle.json) shows its contract; a contract folder shows itself; a root shows every contract.
func Resolve(dir string) (root string, slugs []string, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", nil, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", nil, err
	}
	if !st.IsDir() {
		return "", nil, fmt.Errorf("%s is not a directory", dir)
	}
	if isFile(filepath.Join(abs, proofstore.BundleFile)) {
		if _, _, ok := proofstore.ParseTryDir(abs); ok {
			c := filepath.Dir(filepath.Dir(abs))
			return filepath.Dir(c), []string{filepath.Base(c)}, checkSlug(filepath.Base(c))
		}
		return filepath.Dir(abs), []string{filepath.Base(abs)}, checkSlug(filepath.Base(abs))
	}
	if tries, _ := proofstore.TryDirs(abs); len(tries) > 0 {
		return filepath.Dir(abs), []string{filepath.Base(abs)}, checkSlug(filepath.Base(abs))
	}
	slugs, err = ListContracts(abs)
	if err != nil {
		return "", nil, err
	}
	if len(slugs) == 0 {
		return "", nil, fmt.Errorf("%s holds no proof: no bundle.json in it, in attempt-<n>/try-<m> below it, or in contract folders below it", dir)
	}
	return abs, slugs, nil
}

func checkSlug(s string) error {
	if !ValidSlug(s) {
		return fmt.Errorf("contract folder name %q cannot be served (use letters, digits, '.', '_' and '-')", s)
	}
	return nil
}

// ListContracts lists the contract folders under a proof store root, sorted.
func ListContracts(root string) ([]string, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() || !ValidSlug(e.Name()) {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if tries, _ := proofstore.TryDirs(dir); len(tries) > 0 || isFile(filepath.Join(dir, proofstore.BundleFile)) {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// Load reads a contract folder's proof. The folder is root/slug.
func Load(root, slug string) (*Page, error) {
	if !ValidSlug(slug) {
		return nil, fmt.Errorf("proof page: %q is not a contract folder name", slug)
	}
	dir := filepath.Join(root, slug)
	// A symlinked contract folder would serve a folder from anywhere on the machine.
	if err := proofstore.NotSymlink(dir); err != nil {
		return nil, fmt.Errorf("proof page: %w", err)
	}
	tries, err := proofstore.TryDirs(dir)
	if err != nil {
		return nil, err
	}
	if len(tries) == 0 && isFile(filepath.Join(dir, proofstore.BundleFile)) {
		tries = []proofstore.TryDir{{Rel: ".", Path: dir}}
	}
	if len(tries) == 0 {
		return nil, fmt.Errorf("proof page: %s holds no bundle.json", dir)
	}
	p := &Page{Slug: slug, Dir: dir, BaseShots: map[string]string{}}
	for _, t := range tries {
		p.Attempts = append(p.Attempts, loadAttempt(t))
	}
	for i := len(p.Attempts) - 1; i >= 0 && p.Contract == nil; i-- {
		p.Contract = p.Attempts[i].Contract
	}
	if data, err := proofstore.ReadDocument(dir, proofstore.SettlementFile); err == nil {
		var st contracts.Settlement
		if json.Unmarshal(data, &st) == nil {
			p.Settlement = &st
		}
	}
	loadBase(p)
	return p, nil
}

// loadBase reads the base commit's check from <contract>/base: its evidence when there is
// one (only the screenshots it lists are shown), else the screenshots found there.
func loadBase(p *Page) {
	dir := filepath.Join(p.Dir, proofstore.BaseDir)
	if data, err := proofstore.ReadDocument(dir, proofstore.EvidenceFile); err == nil {
		var ev contracts.Evidence
		if json.Unmarshal(data, &ev) == nil {
			p.BaseEvidence, p.BaseDigest = &ev, contracts.DigestBytes(data)
			for _, a := range ev.Artifacts {
				if a.Kind == contracts.ArtifactScreenshot && fileNameRe.MatchString(a.Name) && isFile(filepath.Join(dir, a.Name)) {
					p.BaseShots[a.Name] = proofstore.BaseDir + "/" + a.Name
				}
			}
			return
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.Type().IsRegular() && fileNameRe.MatchString(e.Name()) && strings.HasSuffix(e.Name(), ".png") {
			p.BaseShots[e.Name()] = proofstore.BaseDir + "/" + e.Name()
		}
	}
}

// LoadAttempt reads one verification folder on its own (the PR comment and chat summary use
// it; they need no other attempt).
func LoadAttempt(dir string) *Attempt {
	t := proofstore.TryDir{Rel: ".", Path: dir}
	if a, tr, ok := proofstore.ParseTryDir(dir); ok {
		t.Attempt, t.Try = a, tr
	}
	return loadAttempt(t)
}

func loadAttempt(t proofstore.TryDir) *Attempt {
	a := &Attempt{TryDir: t}
	read := func(name string, v any) bool {
		data, err := proofstore.ReadDocument(t.Path, name)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) || name == proofstore.BundleFile {
				a.Problems = append(a.Problems, fmt.Sprintf("%s: %v", name, err))
			}
			return false
		}
		if err := json.Unmarshal(data, v); err != nil {
			a.Problems = append(a.Problems, fmt.Sprintf("%s: %v", name, err))
			return false
		}
		return true
	}
	var b contracts.Bundle
	if read(proofstore.BundleFile, &b) {
		a.Bundle = &b
	}
	var ev contracts.Evidence
	if read(proofstore.EvidenceFile, &ev) {
		a.Evidence = &ev
	}
	var c contracts.Contract
	if read(proofstore.ContractFile, &c) {
		a.Contract = &c
	}
	return a
}

var fileNameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$`)

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
