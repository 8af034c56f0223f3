package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signoff/signoff/e2e/signoffproc"
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/internal/localgit"
	"github.com/signoff/signoff/workflows/contractapi"
)

// TestReplayG1RevokesEligibilityOnAHeadMove runs `signoff replay G1` as a person would: W1's
// change is built, verified in Chromium and satisfied; then the run's operator pushes a new
// commit to signoff/<contract> on the bare remote with plain git; the product notices and
// revokes merge eligibility, and the status says why.
func TestReplayG1RevokesEligibilityOnAHeadMove(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the fixture app and drives Chromium")
	}
	root := signoffproc.RepoRoot()
	signoffproc.RequireSetup(t, filepath.Join(root, ".cache", "finance-deps", "node_modules", "next"), "go tool task fixture:setup")
	signoffproc.RequireSetup(t, filepath.Join(root, ".cache", "pw-driver", "1.64.1", "package", "cli.js"), "go tool task browser:setup")
	signoffproc.RequireSetup(t, filepath.Join(root, ".bin", "stripe-mock"), "go tool task stripe:setup")

	dataDir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	started := time.Now()
	cmd := exec.CommandContext(ctx, signoffproc.Binary(t), "replay", "G1", "--data-dir", dataDir, "--json")
	cmd.Dir = root
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("signoff replay G1: %v\n%s\n%s", err, out, errb.String())
	}
	t.Logf("signoff replay G1 took %s", time.Since(started).Round(time.Second))

	// The last JSON value is the summary; the ones before are progress.
	var summary []struct {
		Run        string             `json:"run"`
		OK         bool               `json:"ok"`
		Mismatches []string           `json:"mismatches"`
		Status     contractapi.Status `json:"status"`
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var v json.RawMessage
		if err := dec.Decode(&v); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("output is not JSON lines: %v\n%s", err, out)
		}
		if strings.HasPrefix(strings.TrimSpace(string(v)), "[") {
			if err := json.Unmarshal(v, &summary); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(summary) != 1 || !summary[0].OK {
		t.Fatalf("replay G1 does not match run.json: %+v", summary)
	}
	st := summary[0].Status
	var revoked map[string]string
	for _, e := range st.Timeline {
		if e.Type == "merge_eligibility_revoked" {
			revoked = e.Data
		}
	}
	verified := st.Attempts[0].CommitSHA
	if revoked == nil || revoked["verified"] != verified || revoked["head"] == verified || !strings.Contains(revoked["why"], "head moved") {
		t.Fatalf("revocation %v (verified %s)", revoked, verified)
	}
	// The head the workflow saw is the commit really pushed to the bare remote.
	remote, err := localgit.Remotes{Root: datadir.Paths(dataDir).Remotes}.Path("signoff-fixtures", "finance")
	if err != nil {
		t.Fatal(err)
	}
	head, err := localgit.Head(context.Background(), remote, st.PR.Branch)
	if err != nil || head != revoked["head"] {
		t.Fatalf("remote head %s (%v), revocation names %s", head, err, revoked["head"])
	}
	if parent, err := localgit.Git(context.Background(), remote, "rev-parse", head+"^"); err != nil || strings.TrimSpace(parent) != verified {
		t.Fatalf("the pushed commit's parent is %q (%v), want the verified %s", parent, err, verified)
	}
}
