package workers

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/artifacts"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/localgit"
	"github.com/signoff/signoff/internal/proofstore"
	"github.com/signoff/signoff/internal/proofsync"
)

// The control worker's proof store on a host of its own: it has nothing of the verifier's
// until it fetches the published part, then writes and publishes its own.
func TestControlProofsAcrossHosts(t *testing.T) {
	ctx := context.Background()
	store, err := artifacts.Open(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	verifyRoot, controlRoot := t.TempDir(), t.TempDir()
	const id = "c-shared"
	hash := "sha256:" + strings.Repeat("ab", 32)
	base := strings.Repeat("0", 40)

	// What the verify host wrote and published: an attempt and the base check.
	verifier := proofsync.Sync{Store: store, Root: verifyRoot}
	write := func(rel, name, body string) {
		t.Helper()
		dir := filepath.Join(verifyRoot, id, rel)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("attempt-1/try-1", "shot.png", "png bytes")
	write("attempt-1/try-1", proofstore.EvidenceFile, `{"contract_hash":"`+hash+`","attempt":1}`)
	if _, err := verifier.Publish(ctx, id, proofsync.TryRel(1, 1), proofsync.PartVerifier, []string{"shot.png", proofstore.EvidenceFile}); err != nil {
		t.Fatal(err)
	}
	baseEvidence := `{"contract_hash":"` + hash + `","attempt":0,"expected_sha":"` + base + `"}`
	write(proofsync.BaseRel, proofstore.EvidenceFile, baseEvidence)
	part, _ := proofsync.BasePart(hash)
	if _, err := verifier.Publish(ctx, id, proofsync.BaseRel, part, []string{proofstore.EvidenceFile}); err != nil {
		t.Fatal(err)
	}

	p := ControlProofs{Local: proofstore.Store{Root: controlRoot}, Share: &proofsync.Sync{Store: store, Root: controlRoot}}
	ref, err := p.BaseRef(ctx, id, hash, base)
	if err != nil || ref == nil || ref.EvidenceDigest != contracts.DigestBytes([]byte(baseEvidence)) {
		t.Fatalf("BaseRef: %+v, %v; want the published base evidence bound", ref, err)
	}
	res, err := p.WriteBundle(ctx, contracts.Contract{ContractID: id}, contracts.Bundle{ContractID: id, ContractHash: hash, Attempt: 1, Try: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"shot.png", proofstore.EvidenceFile, proofstore.BundleFile, proofstore.ContractFile} {
		if _, err := os.Stat(filepath.Join(res.ProofDir, name)); err != nil {
			t.Errorf("control's folder lacks %s: %v", name, err)
		}
	}
	if _, err := p.WriteSettlement(ctx, contracts.Settlement{ContractID: id}); err != nil {
		t.Fatal(err)
	}
	// A third host gets the whole proof from the store alone.
	reader := proofsync.Sync{Store: store, Root: t.TempDir()}
	parts, err := reader.FetchContract(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"proofs/c-shared/attempt-1/try-1/control", "proofs/c-shared/attempt-1/try-1/verifier",
		"proofs/c-shared/base/" + part, "proofs/c-shared/settlement"}
	if strings.Join(parts, " ") != strings.Join(want, " ") {
		t.Errorf("parts in the store: %v, want %v", parts, want)
	}

	// Without a store the folder is all there is, and nothing is fetched.
	alone := ControlProofs{Local: proofstore.Store{Root: t.TempDir()}}
	if ref, err := alone.BaseRef(ctx, id, hash, base); err != nil || ref != nil {
		t.Errorf("BaseRef without a store: %+v, %v; want none", ref, err)
	}
}

// A verification's build logs reach the store under its attempt and try, each named by its
// digest, so a retried build adds its logs rather than colliding with the first's.
func TestBuildLogsGoToTheStore(t *testing.T) {
	ctx := context.Background()
	store, err := artifacts.Open(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	dir := t.TempDir()
	install, build := filepath.Join(dir, "install.log"), filepath.Join(dir, "build step.log")
	for path, body := range map[string]string{install: "added 312 packages", build: "compiled"} {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := sharedPreviews{git: localgit.Shared{Store: store}}
	req := capability.PreviewRequest{ContractID: "c-logs", Attempt: 2, Try: 1}
	steps := contracts.BuildResult{Steps: []contracts.BuildStep{{Name: "install", Log: install}, {Name: "build", Log: build},
		{Name: "relative", Log: "not/absolute.log"}}}
	p.putBuildLogs(ctx, req, steps)
	p.putBuildLogs(ctx, req, steps) // a retried start stores nothing twice
	entries, err := store.List(ctx, BuildLogPrefix("c-logs", 2, 1))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Fatalf("stored %v, want the two absolute logs once each", entries)
	}
	for _, e := range entries {
		rc, err := store.Get(ctx, e.Digest)
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.HasSuffix(e.Name, "-install.log") && string(data) == "added 312 packages":
		case strings.HasSuffix(e.Name, "-build_step.log") && string(data) == "compiled":
		default:
			t.Errorf("%s holds %q", e.Name, data)
		}
	}
}

// The control worker signs a bundle only beside the evidence the verifier reported: evidence
// that reached the store some other way is refused.
func TestControlProofsRefuseEvidenceTheVerifierDidNotReport(t *testing.T) {
	ctx := context.Background()
	store, err := artifacts.Open(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	verifyRoot := t.TempDir()
	const id = "c-planted"
	dir := filepath.Join(verifyRoot, id, "attempt-1", "try-1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	planted := []byte(`{"contract_hash":"sha256:aa","attempt":1}`)
	if err := os.WriteFile(filepath.Join(dir, proofstore.EvidenceFile), planted, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (proofsync.Sync{Store: store, Root: verifyRoot}).Publish(ctx, id, proofsync.TryRel(1, 1), proofsync.PartVerifier, []string{proofstore.EvidenceFile}); err != nil {
		t.Fatal(err)
	}
	controlRoot := t.TempDir()
	p := ControlProofs{Local: proofstore.Store{Root: controlRoot}, Share: &proofsync.Sync{Store: store, Root: controlRoot}}
	b := contracts.Bundle{ContractID: id, Attempt: 1, Try: 1, EvidenceDigest: contracts.DigestBytes([]byte("what the verifier reported"))}
	if _, err := p.WriteBundle(ctx, contracts.Contract{ContractID: id}, b); err == nil || !strings.Contains(err.Error(), "is not the one the verifier reported") {
		t.Fatalf("bundle written beside evidence the verifier did not report: %v", err)
	}
	if _, err := os.Stat(filepath.Join(controlRoot, id, "attempt-1", "try-1", proofstore.BundleFile)); err == nil {
		t.Error("a refused bundle was written")
	}
	b.EvidenceDigest = contracts.DigestBytes(planted)
	if _, err := p.WriteBundle(ctx, contracts.Contract{ContractID: id}, b); err != nil {
		t.Fatalf("bundle beside the reported evidence: %v", err)
	}
}

// A settlement name taken before the contract settles (whoever can write the store can do
// that) is reported as a refusal, which is never retried, and the signed settlement stays in
// the control worker's folder; the name keeps what was planted.
func TestSquattedSettlementNameIsReportedNotRetried(t *testing.T) {
	ctx := context.Background()
	store, err := artifacts.Open(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	const id = "c-squatted"
	squatter := proofsync.Sync{Store: store, Root: t.TempDir()}
	dir := filepath.Join(squatter.Root, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	planted := []byte(`{"contract_id":"c-squatted","verdict":"satisfied"}`)
	if err := os.WriteFile(filepath.Join(dir, proofstore.SettlementFile), planted, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := squatter.Publish(ctx, id, "", proofsync.PartSettlement, []string{proofstore.SettlementFile}); err != nil {
		t.Fatal(err)
	}

	root := t.TempDir()
	p := ControlProofs{Local: proofstore.Store{Root: root}, Share: &proofsync.Sync{Store: store, Root: root}}
	s := contracts.Settlement{ContractID: id, Verdict: contracts.NotSatisfied}
	_, err = p.WriteSettlement(ctx, s)
	if !errors.Is(err, capability.ErrRefused) || !strings.Contains(err.Error(), "did not publish") {
		t.Fatalf("WriteSettlement over a squatted name: %v, want a refusal that says so", err)
	}
	if b, err := os.ReadFile(filepath.Join(root, id, proofstore.SettlementFile)); err != nil || !strings.Contains(string(b), contracts.NotSatisfied) {
		t.Errorf("the real settlement is not kept locally: %q, %v", b, err)
	}
	// The store's name still holds what was planted: nothing was repointed.
	reader := proofsync.Sync{Store: store, Root: t.TempDir()}
	if _, err := reader.Fetch(ctx, id, "", proofsync.PartSettlement); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(reader.Root, id, proofstore.SettlementFile)); string(b) != string(planted) {
		t.Errorf("the store's settlement is %q, want the planted one left as it was", b)
	}
	// A second write of the same settlement (a retried activity) says the same.
	if _, err := p.WriteSettlement(ctx, s); !errors.Is(err, capability.ErrRefused) {
		t.Errorf("second try: %v", err)
	}
}
