package payment

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// forbiddenWords never appear in text a person reads: Signoff authorizes, captures, or
// cancels an authorization. It holds no funds and returns none.
var forbiddenWords = []string{"escrow", "refund"}

// wireFieldNames are Stripe JSON field names the double must set to keep its objects honest;
// they are protocol, never shown to a person.
var wireFieldNames = map[string]bool{"refunds": true}

// TestNoForbiddenWordsInUserFacingText scans every string literal of the non-test Go files
// and every template file in this package tree.
func TestNoForbiddenWordsInUserFacingText(t *testing.T) {
	scanned := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch {
		case strings.HasSuffix(path, "_test.go"):
			return nil
		case strings.HasSuffix(path, ".go"):
			scanned++
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Errorf("%s: unquote %s: %v", fset.Position(lit.Pos()), lit.Value, err)
					return true
				}
				if wireFieldNames[s] {
					return true
				}
				for _, w := range forbiddenWords {
					if strings.Contains(strings.ToLower(s), w) {
						t.Errorf("%s: string %q contains %q", fset.Position(lit.Pos()), s, w)
					}
				}
				return true
			})
		case strings.HasSuffix(path, ".html"), strings.HasSuffix(path, ".tmpl"), strings.HasSuffix(path, ".txt"):
			scanned++
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, w := range forbiddenWords {
				if strings.Contains(strings.ToLower(string(b)), w) {
					t.Errorf("%s contains %q", path, w)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned < 5 {
		t.Fatalf("scanned only %d files; the walk is broken", scanned)
	}
}
