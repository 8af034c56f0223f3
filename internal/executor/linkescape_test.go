//go:build unix

package executor

import "testing"

func TestLinkEscapes(t *testing.T) {
	for _, c := range []struct {
		name, target string
		escapes      bool
	}{
		{"leak", "/etc/passwd", true},
		{"leak", "..", true},
		{"a/leak", "../..", true},
		{"a/b/link", "../x", false},
		{"a/b/link", "../../x", false},
		{"a/b/link", "../../../x", true},
		{"link", "sub/file", false},
		{"sub/l", "s/../x", true}, // through a sibling symlink "s -> .." it leaves the tree
		{"link", "", true},
		{"link", "./file", false},
	} {
		if got := linkEscapes(c.name, c.target); got != c.escapes {
			t.Errorf("%s -> %s: escapes = %v, want %v", c.name, c.target, got, c.escapes)
		}
	}
}
