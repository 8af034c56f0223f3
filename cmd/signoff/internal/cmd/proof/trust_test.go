package proof_test

import (
	"crypto/ed25519"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/internal/proofstore/prooftest"
)

// The forger's keys: a complete proof, self-consistent under them.
var (
	forgedVerifier = ed25519.NewKeyFromSeed([]byte("signoff-test-forged-verifier-key"))
	forgedControl  = ed25519.NewKeyFromSeed([]byte("signoff-test-forged-control-key!"))
)

func pub(k ed25519.PrivateKey) ed25519.PublicKey { return k.Public().(ed25519.PublicKey) }

// forge builds a W1 proof signed with the forger's keys under root.
func forge(t *testing.T, root string) *prooftest.Proof {
	t.Helper()
	return prooftest.Build(t, root, prooftest.Spec{Contract: prooftest.W1(t), Attempts: []prooftest.Attempt{{}},
		VerifierKey: forgedVerifier, ControlKey: forgedControl})
}

// defaultDataDir makes the proof commands' default data dir the relative ".signoff" again,
// whatever the environment says.
func defaultDataDir(t *testing.T) {
	t.Helper()
	t.Setenv("SIGNOFF_DATA_DIR", "")
	ios, _, _ := iostreams.Test()
	if d := cmdutil.New(ios).DataDir; d != ".signoff" {
		t.Fatalf("default data dir %q", d)
	}
}

// A forged proof that carries its own keys, inside it or in a data dir beside it, in the
// working directory or holding it, is never verified: verify exits 1 naming the keys'
// fingerprints, render exits 1 and heads the page unverified.
func TestForgedProofCarryingItsKeysIsRefused(t *testing.T) {
	defaultDataDir(t)
	forgedV, forgedC := contracts.KeyFingerprint(pub(forgedVerifier)), contracts.KeyFingerprint(pub(forgedControl))
	type layout struct {
		cwd  string   // where the victim runs
		dir  string   // the proof folder named
		args []string // extra flags
	}
	cases := map[string]func(t *testing.T) layout{
		// cd into the contract folder, `proof verify .`: the default .signoff is inside the proof.
		"keys inside the proof, cwd is the proof": func(t *testing.T) layout {
			root := t.TempDir()
			p := forge(t, root)
			writeKeys(t, filepath.Join(p.ContractDir, ".signoff"), pub(forgedVerifier), pub(forgedControl))
			return layout{cwd: p.ContractDir, dir: "."}
		},
		// --keys pointing into the proof is refused even though it is explicit.
		"--keys inside the proof": func(t *testing.T) layout {
			p := forge(t, t.TempDir())
			keys := filepath.Join(p.ContractDir, "keys")
			writeKeys(t, keys, pub(forgedVerifier), pub(forgedControl))
			return layout{cwd: t.TempDir(), dir: p.Dirs[0], args: []string{"--keys", datadir.Paths(keys).Keys}}
		},
		// A tarball holding the proof and a .signoff beside it; the victim runs in it.
		"data dir beside the proof, in the cwd": func(t *testing.T) layout {
			base := t.TempDir()
			p := forge(t, base)
			writeKeys(t, filepath.Join(base, ".signoff"), pub(forgedVerifier), pub(forgedControl))
			return layout{cwd: base, dir: filepath.Join(filepath.Base(p.ContractDir), "attempt-1", "try-1")}
		},
		// The same tarball, opened from its parent: the data dir named explicitly, absolute.
		"explicit data dir beside the proof": func(t *testing.T) layout {
			base := t.TempDir()
			p := forge(t, filepath.Join(base, "proofs"))
			data := filepath.Join(base, "data")
			writeKeys(t, data, pub(forgedVerifier), pub(forgedControl))
			return layout{cwd: t.TempDir(), dir: p.Dirs[0], args: []string{"--data-dir", data}}
		},
		// A data dir that holds the proof (its own proofs/ store), named explicitly.
		"data dir holding the proof": func(t *testing.T) layout {
			data := t.TempDir()
			p := forge(t, datadir.Paths(data).Proofs)
			writeKeys(t, data, pub(forgedVerifier), pub(forgedControl))
			return layout{cwd: t.TempDir(), dir: p.ContractDir, args: []string{"--data-dir", data}}
		},
		// The relative default data dir in a cwd that holds the proof deeper down.
		"relative data dir, cwd holds the proof": func(t *testing.T) layout {
			base := t.TempDir()
			forge(t, filepath.Join(base, "a", "b"))
			writeKeys(t, filepath.Join(base, ".signoff"), pub(forgedVerifier), pub(forgedControl))
			return layout{cwd: base, dir: filepath.Join("a", "b")}
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			l := mk(t)
			t.Chdir(l.cwd)
			out, code := run(t, append([]string{"verify", l.dir}, l.args...)...)
			if code != 1 || !strings.Contains(out, "NOT VERIFIED") || strings.Contains(out, "verified: all") ||
				!strings.Contains(out, forgedV) || !strings.Contains(out, forgedC) {
				t.Errorf("verify: exit %d, want 1 naming %s and %s\n%s", code, forgedV, forgedC, out)
			}
			site := filepath.Join(t.TempDir(), "site")
			out, code = run(t, append([]string{"render", l.dir, "--out", site}, l.args...)...)
			if code != 1 || !strings.Contains(out, "NOT VERIFIED") || !strings.Contains(out, forgedV) {
				t.Errorf("render: exit %d, want 1\n%s", code, out)
			}
			page, err := os.ReadFile(filepath.Join(site, "w1-watchlist-mobile", "index.html"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(page), `id="unverified"`) || !strings.Contains(string(page), "<strong class=\"bad\">Unverified</strong>") ||
				strings.Contains(string(page), "All 0 checks hold") || !strings.Contains(string(page), forgedC) {
				t.Errorf("the forged proof's page is not headed unverified with the refused key named")
			}
		})
	}
}

// Checked with the genuine keys, the forged proof fails both signatures, naming the expected
// fingerprints; pinned fingerprints against the forger's keys fail naming both.
func TestForgedProofUnderGenuineKeys(t *testing.T) {
	defaultDataDir(t)
	genuine := filepath.Join(t.TempDir(), "deployment")
	writeKeys(t, genuine, prooftest.VerifierPublicKey(), prooftest.ControlPublicKey())
	wantV, wantC := contracts.KeyFingerprint(prooftest.VerifierPublicKey()), contracts.KeyFingerprint(prooftest.ControlPublicKey())
	gotV, gotC := contracts.KeyFingerprint(pub(forgedVerifier)), contracts.KeyFingerprint(pub(forgedControl))
	base := t.TempDir()
	p := forge(t, base)
	writeKeys(t, filepath.Join(base, ".signoff"), pub(forgedVerifier), pub(forgedControl))

	out, code := run(t, "verify", p.Dirs[0], "--keys", genuine)
	if code != 1 || !strings.Contains(out, "FAILED bundle_signature: the bundle signature does not verify under the expected control key "+wantC) ||
		!strings.Contains(out, "FAILED evidence_signature: the evidence signature does not verify under the expected verifier key "+wantV) {
		t.Errorf("forged proof under --keys: exit %d\n%s", code, out)
	}
	// Pins of the genuine keys: the forger's keys beside the proof are found and do not match.
	t.Chdir(base)
	out, code = run(t, "verify", p.Dirs[0], "--verifier-fingerprint", wantV, "--control-fingerprint", strings.ToUpper(wantC))
	for _, fp := range []string{wantV, wantC, gotV, gotC} {
		if !strings.Contains(out, fp) {
			t.Errorf("pinned verify does not name %s", fp)
		}
	}
	if code != 1 || !strings.Contains(out, "is "+gotV+", not the expected "+wantV) {
		t.Errorf("pinned verify of the forger's keys: exit %d\n%s", code, out)
	}
}

// The genuine proof verifies with --keys (the keys folder or the data dir), with pinned
// fingerprints, and from the deployment's own store only when named explicitly; a wrong pin
// fails naming both fingerprints.
func TestVerifyWithNamedKeys(t *testing.T) {
	defaultDataDir(t)
	f := newFixture(t)
	wantV, wantC := contracts.KeyFingerprint(prooftest.VerifierPublicKey()), contracts.KeyFingerprint(prooftest.ControlPublicKey())
	ok := func(name string, args ...string) {
		t.Helper()
		out, code := run(t, args...)
		if code != 0 || !strings.Contains(out, "verified: all") || !strings.Contains(out, wantV) || !strings.Contains(out, wantC) {
			t.Errorf("%s: exit %d\n%s", name, code, out)
		}
	}
	keysDir := datadir.Paths(f.dataDir).Keys
	ok("--keys keys folder", "verify", f.w1.Dirs[0], "--keys", keysDir)
	ok("--keys data dir", "verify", f.w2.ContractDir, "--keys", f.dataDir)
	ok("pinned data dir", "verify", f.root, "--data-dir", f.dataDir, "--verifier-fingerprint", wantV, "--control-fingerprint", wantC)

	// A data dir beside the proof is refused, but a pin names its keys, so they are used.
	beside := filepath.Join(filepath.Dir(f.root), "data")
	writeKeys(t, beside, prooftest.VerifierPublicKey(), prooftest.ControlPublicKey())
	if out, code := run(t, "verify", f.w1.Dirs[0], "--data-dir", beside); code != 1 || !strings.Contains(out, "pass --keys "+datadir.Paths(beside).Keys) {
		t.Errorf("unpinned data dir beside the proof: exit %d\n%s", code, out)
	}
	ok("pinned data dir beside the proof", "verify", f.w1.Dirs[0], "--data-dir", beside, "--verifier-fingerprint", wantV, "--control-fingerprint", wantC)

	// A wrong pin fails, naming the expected and the found fingerprint.
	other := contracts.KeyFingerprint(pub(forgedVerifier))
	out, code := run(t, "verify", f.w1.Dirs[0], "--keys", keysDir, "--verifier-fingerprint", other)
	if code != 1 || !strings.Contains(out, "is "+wantV+", not the expected "+other) {
		t.Errorf("wrong pin: exit %d\n%s", code, out)
	}
	site := filepath.Join(t.TempDir(), "site")
	if out, code := run(t, "render", f.w1.Dirs[0], "--out", site, "--keys", keysDir, "--control-fingerprint", other); code != 1 || !strings.Contains(out, "not the expected "+other) {
		t.Errorf("render with a wrong pin: exit %d\n%s", code, out)
	}
	for name, args := range map[string][]string{
		"malformed pin":       {"verify", f.w1.Dirs[0], "--keys", keysDir, "--verifier-fingerprint", "abc"},
		"--keys without keys": {"verify", f.w1.Dirs[0], "--keys", t.TempDir()},
		"pin without keys":    {"verify", f.w1.Dirs[0], "--data-dir", t.TempDir(), "--verifier-fingerprint", wantV},
	} {
		if out, code := run(t, args...); code != 2 {
			t.Errorf("%s: exit %d, want 2\n%s", name, code, out)
		}
	}

	// The deployment's own store (data dir/proofs) is checked with its keys only when they
	// are named: the data dir holds the proof, so found implicitly they could be the proof's.
	own := t.TempDir()
	writeKeys(t, own, prooftest.VerifierPublicKey(), prooftest.ControlPublicKey())
	p := prooftest.Build(t, datadir.Paths(own).Proofs, prooftest.Spec{Contract: prooftest.W1(t), Attempts: []prooftest.Attempt{{}}})
	if out, code := run(t, "verify", p.Dirs[0], "--data-dir", own); code != 1 || !strings.Contains(out, "holds or sits beside the proof folder") {
		t.Errorf("own store, implicit keys: exit %d\n%s", code, out)
	}
	ok("own store, --keys", "verify", p.Dirs[0], "--keys", datadir.Paths(own).Keys)
}
