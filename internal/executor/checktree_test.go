//go:build unix

package executor

import (
	"context"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// TestCheckTreeReadsNamesAsFileSystemsDo: a change is refused for a .git directory under any
// name an NTFS or HFS+ checkout reads as .git, for a protected path written that way, and
// for a symlink standing in for .github or its workflows folder; ordinary names pass.
func TestCheckTreeReadsNamesAsFileSystemsDo(t *testing.T) {
	repo := t.TempDir()
	gitIn := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	gitIn("", "init", "--bare", "--quiet", ".")
	blob := gitIn("x\n", "hash-object", "-w", "--stdin")
	target := gitIn("ci", "hash-object", "-w", "--stdin")
	// tree makes a tree of (mode, name, object) entries.
	tree := func(entries ...[3]string) string {
		var b strings.Builder
		for _, e := range entries {
			typ := "blob"
			if e[0] == "040000" {
				typ = "tree"
			}
			b.WriteString(e[0] + " " + typ + " " + e[2] + "\t" + e[1] + "\n")
		}
		return gitIn(b.String(), "mktree")
	}
	file := func(name string) [3]string { return [3]string{"100644", name, blob} }
	dir := func(name string, entries ...[3]string) [3]string { return [3]string{"040000", name, tree(entries...)} }
	link := func(name string) [3]string { return [3]string{"120000", name, target} }
	empty := tree()

	for _, tc := range []struct {
		name    string
		entry   [3]string
		refused string
	}{
		{"plain .git", dir(".git", file("config")), "inside a .git directory"},
		{"NTFS trailing dot", dir(".git.", file("config")), "inside a .git directory"},
		{"NTFS trailing space", dir(".git ", file("config")), "inside a .git directory"},
		{"NTFS short name", dir("GIT~1", file("config")), "inside a .git directory"},
		{"HFS+ ignorable code point", dir(".g\u200cit", file("config")), "inside a .git directory"},
		{"NTFS stream of .git", dir(".git::$INDEX_ALLOCATION", file("config")), "inside a .git directory"},
		{"NTFS named index stream of .git", dir(".GIT:$I30:$INDEX_ALLOCATION", file("config")), "inside a .git directory"},
		{"NTFS stream of .github", dir(".github::$INDEX_ALLOCATION", dir("workflows", file("ci.yml"))), "change .github/workflows/"},
		{"upper case workflows", dir(".GitHub", dir("Workflows", file("ci.yml"))), "change .github/workflows/"},
		{"NTFS trailing dot in .github", dir(".github.", dir("workflows", file("ci.yml"))), "change .github/workflows/"},
		{"symlinked .github", link(".github"), "a symlink where Signoff's protected paths are"},
		{"symlinked workflows folder", dir(".github", link("workflows")), "a symlink where Signoff's protected paths are"},
		{"an issue template", dir(".github", file("ISSUE_TEMPLATE.md")), ""},
		{"a .gitignore", file(".gitignore"), ""},
		{"a file named like a short name", file("git~1.md"), ""},
		{"source", dir("src", file("app.ts")), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			problems, err := checkTree(context.Background(), repo, empty, tree(tc.entry))
			wantRefused(t, problems, err, tc.refused)
		})
	}
}

// wantRefused checks a check's problems: none when refused is "", else one saying refused.
func wantRefused(t *testing.T, problems []string, err error, refused string) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(problems, "; ")
	switch {
	case refused == "" && got != "":
		t.Errorf("refused: %s", got)
	case refused != "" && !strings.Contains(got, refused):
		t.Errorf("problems %q, want one saying %q", got, refused)
	}
}

// zeros reads as an endless run of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestCheckExpansionRefusesBombs: a 300 MB file of zeros is a few hundred KB of objects, and
// is refused before anything checks it out; so is a change that stays under the one-file
// limit but grows the checkout past its bound in many files. A large file the base already
// had, and an ordinary change, pass.
func TestCheckExpansionRefusesBombs(t *testing.T) {
	repo := t.TempDir()
	git := func(stdin io.Reader, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Stdin = stdin
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	git(nil, "init", "--bare", "--quiet", ".")
	blob := func(n int64) string { return git(io.LimitReader(zeros{}, n), "hash-object", "-w", "--stdin") }
	tree := func(files map[string]string) string {
		var b strings.Builder
		for name, obj := range files {
			b.WriteString("100644 blob " + obj + "\t" + name + "\n")
		}
		return git(strings.NewReader(b.String()), "mktree")
	}
	small := blob(10)
	bomb := blob(300 << 20)
	chunk := blob(60 << 20)
	base := tree(map[string]string{"README.md": small})
	bigBase := tree(map[string]string{"README.md": small, "video.bin": bomb})

	for _, tc := range []struct {
		name, parent, tree, refused string
	}{
		{"300 MB of zeros", base, tree(map[string]string{"README.md": small, "big.bin": bomb}), "over the 67108864-byte limit for one file"},
		{"many large files", base, tree(map[string]string{"README.md": small, "a.bin": chunk, "b.bin": chunk, "c.bin": chunk, "d.bin": chunk, "e.bin": chunk}),
			"checkout 314572800 bytes larger"},
		{"a large file the base had", bigBase, tree(map[string]string{"README.md": blob(20), "video.bin": bomb}), ""},
		{"an ordinary change", base, tree(map[string]string{"README.md": small, "app.ts": blob(4096)}), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			problems, err := checkExpansion(context.Background(), repo, tc.parent, tc.tree)
			wantRefused(t, problems, err, tc.refused)
		})
	}
}
