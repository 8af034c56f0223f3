package proofpage

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff/signoff/contracts/contractstest"
	"github.com/signoff/signoff/internal/proofstore"
	"github.com/signoff/signoff/internal/proofstore/prooftest"
)

func get(t *testing.T, h http.Handler, path string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec
}

// A contract folder in the store that is a symlink to a folder elsewhere is refused: its page
// and every file under it.
func TestHandlerRefusesASymlinkedContractFolder(t *testing.T) {
	elsewhere := t.TempDir()
	p := prooftest.Build(t, elsewhere, prooftest.Spec{Contract: prooftest.W1(t), Attempts: []prooftest.Attempt{{}}})
	store := t.TempDir()
	id := p.Contract.ContractID
	if err := os.Symlink(filepath.Join(elsewhere, id), filepath.Join(store, id)); err != nil {
		t.Fatal(err)
	}
	h, err := NewHandler(Config{Root: store, Options: keys()})
	if err != nil {
		t.Fatal(err)
	}
	rec := get(t, h, "/proofs/"+id+"/")
	if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "symbolic link") {
		t.Fatalf("page: %d %q, want 403 naming the symbolic link", rec.Code, rec.Body.String())
	}
	if rec := get(t, h, "/proofs/"+id+"/attempt-1/try-1/"+proofstore.BundleFile); rec.Code != http.StatusNotFound {
		t.Fatalf("file under the symlinked folder: %d, want 404", rec.Code)
	}
	if rec := get(t, h, "/proofs/"); strings.Contains(rec.Body.String(), id) {
		t.Fatal("the proof list shows the symlinked folder")
	}
}

// A file inside a proof folder that links out is not served, even with a name the page links.
func TestHandlerRefusesAFileSymlinkedOut(t *testing.T) {
	store := t.TempDir()
	p := prooftest.Build(t, store, prooftest.Spec{Contract: prooftest.W1(t), Attempts: []prooftest.Attempt{{}}})
	secret := filepath.Join(t.TempDir(), "control.key")
	if err := os.WriteFile(secret, []byte("PRIVATE KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	name := p.Evidence[0].Artifacts[0].Name
	if err := os.Remove(filepath.Join(p.Dirs[0], name)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(p.Dirs[0], name)); err != nil {
		t.Fatal(err)
	}
	h, _ := NewHandler(Config{Root: store})
	rec := get(t, h, "/proofs/"+p.Contract.ContractID+"/attempt-1/try-1/"+name)
	if rec.Code != http.StatusNotFound || strings.Contains(rec.Body.String(), "PRIVATE KEY") {
		t.Fatalf("served %d %q through a symlink out of the folder", rec.Code, rec.Body.String())
	}
}

// The handler keeps serving when a proof folder holds a JSON bomb: the page names the limit.
func TestHandlerSurvivesAnEvidenceBomb(t *testing.T) {
	store := t.TempDir()
	p := prooftest.Build(t, store, prooftest.Spec{Contract: prooftest.W1(t), Attempts: []prooftest.Attempt{{}}})
	if err := os.WriteFile(filepath.Join(p.Dirs[0], proofstore.EvidenceFile), contractstest.DepthBomb(600<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	h, _ := NewHandler(Config{Root: store, Options: keys()})
	rec := get(t, h, "/proofs/"+p.Contract.ContractID+"/")
	if rec.Code != http.StatusOK {
		t.Fatalf("page: %d %q", rec.Code, rec.Body.String())
	}
	if !strings.Contains(rec.Body.String(), "nesting deeper than the limit of 128 levels") {
		t.Fatal("the page does not name the depth limit the evidence broke")
	}
}
