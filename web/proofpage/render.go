package proofpage

import (
	"crypto/ed25519"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/proofstore"
)

//go:embed templates/*.html templates/*.tmpl
var templateFS embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"dict": func(kv ...any) (map[string]any, error) {
		if len(kv)%2 != 0 {
			return nil, errors.New("dict: odd number of arguments")
		}
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			k, ok := kv[i].(string)
			if !ok {
				return nil, fmt.Errorf("dict: key %v is not a string", kv[i])
			}
			m[k] = kv[i+1]
		}
		return m, nil
	},
}).ParseFS(templateFS, "templates/*.html"))

// StatusSource is the contract index (internal/index.Index): the current state of a
// contract, shown on the page as unsigned.
type StatusSource interface {
	Get(contractID string) (capability.IndexEntry, bool, error)
}

// Options say what a page is built with beyond the proof folder.
type Options struct {
	// VerifierKey and ControlKey, when both set, make every page show the offline
	// verification of its proof (proofstore.VerifyContractDir).
	VerifierKey, ControlKey ed25519.PublicKey
	// KeyNote says why no keys were given (none found, or the ones found were refused); the
	// page shows it where the verification would be.
	KeyNote string
	// Index, when set, adds the contract's current state.
	Index StatusSource
}

// Build loads root/slug and, with keys, verifies it.
func Build(root, slug string, o Options) (*Page, error) {
	p, err := Load(root, slug)
	if err != nil {
		return nil, err
	}
	switch {
	case len(o.VerifierKey) == 0 || len(o.ControlKey) == 0:
		p.VerifyNote = "Not verified here: no verifier and control public keys were given. Run `signoff proof verify` on this folder with the deployment's keys (`signoff keys` prints their fingerprints)."
		if o.KeyNote != "" {
			p.VerifyNote = "Not verified here: " + o.KeyNote + "."
		}
	case len(p.Attempts) == 1 && p.Attempts[0].Rel == ".":
		rep, err := proofstore.VerifyDir(p.Dir, o.VerifierKey, o.ControlKey)
		if err != nil {
			p.VerifyNote = "The verification could not run: " + err.Error()
		} else {
			p.Verified = &proofstore.ContractReport{ContractID: rep.ContractID, Dir: p.Dir, OK: rep.OK, Tries: []proofstore.Report{rep}}
		}
	default:
		cr, err := proofstore.VerifyContractDir(p.Dir, o.VerifierKey, o.ControlKey)
		if err != nil {
			p.VerifyNote = "The verification could not run: " + err.Error()
		} else {
			p.Verified = &cr
		}
	}
	if p.Verified != nil {
		p.VerifierFingerprint, p.ControlFingerprint = contracts.KeyFingerprint(o.VerifierKey), contracts.KeyFingerprint(o.ControlKey)
	}
	if o.Index != nil && p.Contract != nil {
		if e, ok, err := o.Index.Get(p.Contract.ContractID); err == nil && ok {
			p.Status = &e
		}
	}
	return p, nil
}

// RenderPage writes the contract's HTML page.
func RenderPage(w io.Writer, p *Page, links Links) error {
	if len(p.Attempts) == 0 {
		return errors.New("proof page: no verification to show")
	}
	return pages.ExecuteTemplate(w, "contract.html", buildPageView(p, links))
}

type listRow struct {
	Slug, Href, Goal, Verdict, Word, CSS, Problem string
	Count                                         int
}

// RenderList writes the page listing contracts; hrefs are relative ("<slug>/").
func RenderList(w io.Writer, root string, slugs []string, indexURL string) error {
	return renderList(w, root, slugs, indexURL, "/")
}

func renderList(w io.Writer, root string, slugs []string, indexURL, hrefSuffix string) error {
	rows := make([]listRow, 0, len(slugs))
	for _, s := range slugs {
		row := listRow{Slug: s, Href: s + hrefSuffix}
		p, err := Load(root, s)
		if err != nil {
			row.Problem = err.Error()
		} else {
			row.Count = len(p.Attempts)
			if p.Contract != nil {
				row.Goal = p.Contract.Goal
			}
			if l := p.Latest(); l != nil && l.Bundle != nil {
				row.Verdict, row.Word, row.CSS = l.Bundle.Verdict, verdictWord(l.Bundle.Verdict), verdictCSS(l.Bundle.Verdict)
			} else {
				row.Problem = "no readable bundle"
			}
		}
		rows = append(rows, row)
	}
	return pages.ExecuteTemplate(w, "list.html", map[string]any{"Rows": rows, "IndexURL": indexURL})
}

// SiteResult says what RenderSite wrote.
type SiteResult struct {
	Out       string   `json:"out"`
	Contracts []string `json:"contracts"`
	Pages     []string `json:"pages"`
	Files     int      `json:"files_copied"`
	Verified  *bool    `json:"verified,omitempty"` // nil: no keys given
}

// RenderSite writes a static site: out/index.html listing the contracts, and per contract
// out/<slug>/index.html with its proof files copied beside it under the same relative paths,
// so the folder can be opened from disk or put on any static host. Traces are linked as raw
// files (the trace viewer needs a served origin: use `signoff proof serve`).
func RenderSite(root string, slugs []string, out string, o Options) (SiteResult, error) {
	res := SiteResult{Out: out, Contracts: slugs}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return res, err
	}
	allOK := true
	for _, slug := range slugs {
		p, err := Build(root, slug, o)
		if err != nil {
			return res, err
		}
		if p.Verified != nil {
			allOK = allOK && p.Verified.OK
		}
		dst := filepath.Join(out, slug)
		n, err := copyProof(p, dst)
		if err != nil {
			return res, err
		}
		res.Files += n
		page := filepath.Join(dst, "index.html")
		if err := writeWith(page, func(w io.Writer) error { return RenderPage(w, p, Links{Index: "../index.html"}) }); err != nil {
			return res, err
		}
		res.Pages = append(res.Pages, page)
	}
	idx := filepath.Join(out, "index.html")
	// Pages link <slug>/index.html, which opens from disk as well as from a static host.
	if err := writeWith(idx, func(w io.Writer) error { return renderList(w, root, slugs, "", "/index.html") }); err != nil {
		return res, err
	}
	res.Pages = append(res.Pages, idx)
	if len(o.VerifierKey) > 0 && len(o.ControlKey) > 0 {
		res.Verified = &allOK
	}
	return res, nil
}

// copyProof copies what the page links: the three documents and the listed artifacts of
// every verification, and the base check (its evidence, screenshots and traces). Only regular files inside the folder.
func copyProof(p *Page, dst string) (int, error) {
	n := 0
	cp := func(rel string) error {
		src, err := proofstore.Contained(p.Dir, filepath.FromSlash(rel))
		if err != nil {
			// A name leading out of the folder (a symlink, say) is not copied; the page's
			// verification names it and the site is written, flagged, not abandoned.
			return nil
		}
		st, err := os.Lstat(src)
		if err != nil || !st.Mode().IsRegular() {
			return nil // listed but absent: the page and the verification say so
		}
		to := filepath.Join(dst, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		if err := copyFile(src, to); err != nil {
			return err
		}
		n++
		return nil
	}
	for _, a := range p.Attempts {
		names := []string{proofstore.BundleFile, proofstore.EvidenceFile, proofstore.ContractFile}
		if a.Evidence != nil {
			for _, art := range a.Evidence.Artifacts {
				names = append(names, art.Name)
			}
		}
		if a.Bundle != nil {
			for _, art := range a.Bundle.Artifacts {
				names = append(names, art.Name)
			}
		}
		seen := map[string]bool{}
		for _, name := range names {
			if seen[name] || !fileNameRe.MatchString(name) {
				continue
			}
			seen[name] = true
			if err := cp(join(a.Rel, name)); err != nil {
				return n, err
			}
		}
	}
	base := []string{}
	for _, rel := range p.BaseShots {
		base = append(base, rel)
	}
	// The base check's evidence and what it lists, so the copy's base pictures verify too.
	if ev := p.BaseEvidence; ev != nil {
		base = append(base, proofstore.BaseDir+"/"+proofstore.EvidenceFile)
		for _, a := range ev.Artifacts {
			if fileNameRe.MatchString(a.Name) {
				base = append(base, proofstore.BaseDir+"/"+a.Name)
			}
		}
	}
	sort.Strings(base)
	for i, rel := range base {
		if i > 0 && base[i-1] == rel {
			continue
		}
		if err := cp(rel); err != nil {
			return n, err
		}
	}
	return n, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func writeWith(path string, fn func(io.Writer) error) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := fn(f); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}
