package proof

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/internal/proofstore"
)

// Keys say which public keys a proof is checked with. A proof cannot vouch for itself, so the
// keys come from the reader: named by path (--keys, --verifier-key, --control-key), pinned by
// fingerprint, or the deployment's data dir, and never from inside or beside the proof.
type Keys struct {
	DataDir             string
	KeysDir             string
	VerifierKey         string
	ControlKey          string
	VerifierFingerprint string
	ControlFingerprint  string
}

func (k *Keys) addFlags(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&k.KeysDir, "keys", "", "a folder holding verifier.key.pub and control.key.pub (or a data dir with them in keys/); refused only when inside the proof folder")
	fs.StringVar(&k.VerifierKey, "verifier-key", "", "the verifier's public key: a PEM file, or base64/hex in a file")
	fs.StringVar(&k.ControlKey, "control-key", "", "the control worker's public key, as --verifier-key")
	fs.StringVar(&k.VerifierFingerprint, "verifier-fingerprint", "", "sha256:<hex> of the verifier's raw public key (see 'signoff keys'); the key used must match it")
	fs.StringVar(&k.ControlFingerprint, "control-fingerprint", "", "sha256:<hex> of the control worker's raw public key; the key used must match it")
}

// TrustedKeys are the keys a proof was checked with: where they came from and their
// fingerprints, printed with every verification so the reader can compare them.
type TrustedKeys struct {
	Verifier            ed25519.PublicKey `json:"-"`
	Control             ed25519.PublicKey `json:"-"`
	VerifierPath        string            `json:"verifier_public_key"`
	ControlPath         string            `json:"control_public_key"`
	VerifierFingerprint string            `json:"verifier_fingerprint"`
	ControlFingerprint  string            `json:"control_fingerprint"`
	Source              string            `json:"source"`
}

// UntrustedError says keys were found but may not check this proof: they lie inside or
// beside it, or they are not the keys the reader pinned. It is a "no" about the proof's
// trust (exit 1), not a usage error.
type UntrustedError struct{ Problems []string }

func (e *UntrustedError) Error() string {
	return "not verified: " + strings.Join(e.Problems, "; ")
}

// Key sources, as TrustedKeys.Source and in messages.
const (
	sourceFlag    = "--verifier-key/--control-key"
	sourceKeysDir = "--keys"
	sourceDataDir = "the data dir"
)

// keyRole is one of the two keys as the resolution sees it.
type keyRole struct {
	name, file, flag, pinFlag, pin string
	path, source                   string
	pub                            ed25519.PublicKey
}

// trust returns the keys to check the proof at proofDir with. (nil, nil) means no keys
// were named and the data dir has none; *UntrustedError means keys were found and refused;
// any other error is bad input.
func (k *Keys) trust(proofDir string) (*TrustedKeys, error) {
	tree, err := proofFolder(proofDir)
	if err != nil {
		return nil, iostreams.BadInput(err)
	}
	roles := []*keyRole{
		{name: "verifier", file: datadir.VerifierKeyFile, flag: "--verifier-key", pinFlag: "--verifier-fingerprint", path: k.VerifierKey},
		{name: "control", file: datadir.ControlKeyFile, flag: "--control-key", pinFlag: "--control-fingerprint", path: k.ControlKey},
	}
	for i, pin := range []string{k.VerifierFingerprint, k.ControlFingerprint} {
		if pin == "" {
			continue
		}
		fp, err := contracts.ParseKeyFingerprint(pin)
		if err != nil {
			return nil, iostreams.BadInput(fmt.Errorf("%s: %w", roles[i].pinFlag, err))
		}
		roles[i].pin = fp
	}
	var bad []error
	missing := 0
	for _, r := range roles {
		if err := k.locate(r); err != nil {
			bad = append(bad, err)
			continue
		}
		if r.path == "" {
			missing++
			continue
		}
		pub, err := loadKey(r.path, r.flag)
		if err != nil {
			bad = append(bad, err)
			continue
		}
		r.pub = pub
	}
	if len(bad) > 0 {
		return nil, iostreams.BadInput(errors.Join(bad...))
	}
	if missing > 0 {
		dir := datadir.Paths(k.DataDir).Keys
		if missing == len(roles) && k.VerifierFingerprint == "" && k.ControlFingerprint == "" {
			return nil, nil
		}
		return nil, iostreams.BadInput(fmt.Errorf("no %s public key: %s holds no %s.pub (pass --keys DIR, or --verifier-key and --control-key)",
			missingNames(roles), dir, missingFile(roles)))
	}
	var problems []string
	for _, r := range roles {
		problems = append(problems, k.refusals(r, tree)...)
	}
	if len(problems) > 0 {
		return nil, &UntrustedError{Problems: problems}
	}
	v, c := roles[0], roles[1]
	src := v.source
	if c.source != v.source {
		src = v.source + " (verifier), " + c.source + " (control)"
	}
	return &TrustedKeys{Verifier: v.pub, Control: c.pub, VerifierPath: v.path, ControlPath: c.path,
		VerifierFingerprint: contracts.KeyFingerprint(v.pub), ControlFingerprint: contracts.KeyFingerprint(c.pub), Source: src}, nil
}

// locate sets r.path and r.source: the flag's file, else --keys, else the data dir's file
// when it exists (empty path: none).
func (k *Keys) locate(r *keyRole) error {
	switch {
	case r.path != "":
		r.source = sourceFlag
		return nil
	case k.KeysDir != "":
		r.source = sourceKeysDir
		for _, p := range []string{filepath.Join(k.KeysDir, r.file+".pub"), filepath.Join(datadir.Paths(k.KeysDir).Keys, r.file+".pub")} {
			if isFile(p) {
				r.path = p
				return nil
			}
		}
		return fmt.Errorf("--keys %s: no %s.pub in it or in its keys/ folder", k.KeysDir, r.file)
	}
	r.source = sourceDataDir
	p := filepath.Join(datadir.Paths(k.DataDir).Keys, r.file+".pub")
	if _, err := os.Stat(p); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("%s public key %s: %w", r.name, p, err)
	}
	r.path = p
	return nil
}

// refusals says why r's key may not check the proof in tree. A key inside the proof is
// always refused: whoever made the proof made that key. A data dir's key is also refused when
// the data dir holds the proof, sits beside it (its parent holds the proof), or is relative
// to a working directory that holds or is inside the proof: such a key could have been
// shipped with the proof. A reader who pinned the key's fingerprint has named it, so only
// the pin decides then; a reader who passed --keys or a key file has named it by path.
func (k *Keys) refusals(r *keyRole, tree string) []string {
	fp := contracts.KeyFingerprint(r.pub)
	real := realPath(r.path)
	if within(tree, real) {
		return []string{fmt.Sprintf("the %s key %s (%s) lies inside the proof folder %s: a proof cannot supply the keys it is checked with", r.name, r.path, fp, tree)}
	}
	if r.pin != "" {
		if fp != r.pin {
			return []string{fmt.Sprintf("the %s key %s is %s, not the expected %s (%s)", r.name, r.path, fp, r.pin, r.pinFlag)}
		}
		return nil
	}
	if r.source != sourceDataDir {
		return nil
	}
	dataDir := realPath(k.DataDir)
	remedy := fmt.Sprintf("compare it with the deployment's published fingerprint and pass --keys %s, or pin %s", filepath.Dir(r.path), r.pinFlag)
	switch {
	case within(tree, dataDir):
		return []string{fmt.Sprintf("the %s key %s (%s) is in the data dir %s, which is inside the proof folder %s; %s", r.name, r.path, fp, k.DataDir, tree, remedy)}
	case within(filepath.Dir(dataDir), tree):
		return []string{fmt.Sprintf("the %s key %s (%s) is in the data dir %s, which holds or sits beside the proof folder %s, so it could have come with the proof; %s", r.name, r.path, fp, k.DataDir, tree, remedy)}
	}
	if !filepath.IsAbs(k.DataDir) {
		if wd, err := os.Getwd(); err == nil {
			wd = realPath(wd)
			if within(wd, tree) || within(tree, wd) {
				return []string{fmt.Sprintf("the %s key %s (%s) is in the data dir %s, relative to the working directory %s, which holds or is inside the proof folder %s; %s", r.name, r.path, fp, k.DataDir, wd, tree, remedy)}
			}
		}
	}
	return nil
}

// proofFolder is the folder a proof's maker controls: the folder given, or for one
// verification (attempt-<n>/try-<m>) its contract folder, with symlinks resolved.
func proofFolder(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("proof folder %s: %w", dir, err)
	}
	if _, err := os.Stat(abs); err != nil {
		return "", fmt.Errorf("proof folder: %w", err)
	}
	abs = realPath(abs)
	if _, _, ok := proofstore.ParseTryDir(abs); ok && isFile(filepath.Join(abs, proofstore.BundleFile)) {
		return filepath.Dir(filepath.Dir(abs)), nil
	}
	return abs, nil
}

// realPath is p made absolute with symlinks resolved as far as they exist, so a link cannot
// hide that a key lives inside the proof.
func realPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	return abs
}

// within reports whether p is dir or below it.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func missingNames(roles []*keyRole) string {
	var n []string
	for _, r := range roles {
		if r.path == "" {
			n = append(n, r.name)
		}
	}
	return strings.Join(n, " or ")
}

func missingFile(roles []*keyRole) string {
	for _, r := range roles {
		if r.path == "" {
			return r.file
		}
	}
	return ""
}

// describe is the one line naming the keys a proof was checked with.
func (t *TrustedKeys) describe() string {
	return fmt.Sprintf("keys from %s: verifier %s (%s), control %s (%s)", t.Source, t.VerifierFingerprint, t.VerifierPath, t.ControlFingerprint, t.ControlPath)
}

// keysHelp is the trust rule, as every proof command's help states it.
const keysHelp = "Keys: the signatures are checked with keys the reader names, never keys the proof brings.\n" +
	"--keys DIR (verifier.key.pub and control.key.pub, or a data dir holding keys/), or\n" +
	"--verifier-key and --control-key files, are used as given unless they lie inside the proof\n" +
	"folder. Otherwise the data dir's keys/*.pub are used (--data-dir, default $SIGNOFF_DATA_DIR or\n" +
	".signoff in the working directory), but refused when the data dir is inside the proof folder,\n" +
	"holds or sits beside it, or is relative to a working directory that holds or is inside it.\n" +
	"--verifier-fingerprint and --control-fingerprint (sha256:<hex> of the raw ed25519 key, as\n" +
	"`signoff keys`, the PR comment and the quote print them) pin the keys: the keys found must\n" +
	"match, wherever they are outside the proof folder. The fingerprints used are printed."
