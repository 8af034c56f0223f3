package proofpage

import (
	"image/color"
	"os"
	"path/filepath"
	"testing"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/proofstore/prooftest"
)

// runs are a W1-like and a W2-like contract's proof folders under one store root.
type runs struct {
	root   string
	w1, w2 *prooftest.Proof
}

const w2ID = "w2-watchlist-header"

// buildRuns writes W1 (satisfied on attempt 1, with base screenshots) and W2 (the header-only
// change, three attempts) from signed test data. trace, when set, is every trace's content.
func buildRuns(t testing.TB, trace []byte) runs {
	t.Helper()
	root := t.TempDir()
	w1c := prooftest.W1(t)
	w1 := prooftest.Build(t, root, prooftest.Spec{Contract: w1c, BaseAll: true,
		Attempts: []prooftest.Attempt{{Trace: trace, Diff: "3 file(s), +64 -5"}}})
	w2c := prooftest.W1(t)
	w2c.ContractID = w2ID
	w2c.Goal = "Make the Watchlist page mobile optimized."
	var attempts []prooftest.Attempt
	for i := 0; i < w2c.MaxAttempts; i++ {
		attempts = append(attempts, prooftest.Attempt{Override: w2Override(), Trace: trace, Diff: "1 file(s), +2 -1",
			Shade: color.RGBA{uint8(90 + 40*i), 40, 90, 255}})
	}
	// The base commit overflows as the header-only change still does: the base check measured
	// the same offender.
	w2 := prooftest.Build(t, root, prooftest.Spec{Contract: w2c, Base: []string{"mobile-no-overflow", "desktop-table"},
		BaseOverride: w2Override(), Attempts: attempts})
	if w1.Bundles[0].Verdict != contracts.Satisfied {
		t.Fatalf("W1 fixture: policy gives %s", w1.Bundles[0].Verdict)
	}
	for _, b := range w2.Bundles {
		if b.Verdict != contracts.NotSatisfied {
			t.Fatalf("W2 fixture: policy gives %s", b.Verdict)
		}
	}
	return runs{root: root, w1: w1, w2: w2}
}

// offender is the box the fixture's verifier measured around W2's overflowing table, in the
// screenshot's coordinates: the red band prooftest.PNG draws at 390×844.
var offender = map[string]any{"selector": `main > table[data-testid="watchlist-table"]`, "right": 927.0,
	"x": 16.0, "y": 96.0, "width": 374.0, "height": 56.0}

// w2Override is W2's observed values with the offending element measured, as the verifier
// reports clipped elements: one, with its box.
func w2Override() map[string]map[string]any {
	o := prooftest.W2Override()
	o["mobile-no-overflow"]["390x844/clipped_elements"] = 1.0
	o["mobile-no-overflow"]["390x844/clipped_offenders"] = []any{offender}
	return o
}

func keys() Options {
	return Options{VerifierKey: prooftest.VerifierPublicKey(), ControlKey: prooftest.ControlPublicKey()}
}

// outDir is where tests leave pages and screenshots for people to look at: the repository's
// gitignored testdata-out/proofpage.
func outDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test")
		}
		dir = parent
	}
	out := filepath.Join(dir, "testdata-out", "proofpage")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	return out
}
