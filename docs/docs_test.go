// Package docs holds no code. Its test keeps the docs in this folder true to the tree: they
// name files and symbols so a reader can open them, and a file moved or a function renamed
// would otherwise leave them pointing at nothing, without anyone noticing.
package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/signoff/signoff/internal/modroot"
)

// TestDocsNameWhatExists reads every backticked token of docs/*.md that looks like a
// repository path and fails, listing all of them at once, when a path does not exist or a
// `path/file.go: Name` names a symbol the file does not declare. It reads files only: no
// network, no build, so it runs with the fast tests.
func TestDocsNameWhatExists(t *testing.T) {
	root := repoRoot(t)
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs/*.md under %s: %v", root, err)
	}
	var all []string
	checked := 0
	for _, doc := range docs {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		found, problems := check(root, string(data))
		checked += found
		for _, p := range problems {
			all = append(all, filepath.Base(doc)+":"+p)
		}
	}
	// A parser that stopped finding tokens would pass every doc; the docs name hundreds.
	if checked < 50 {
		t.Fatalf("only %d path tokens found in docs/*.md: the token parser is broken", checked)
	}
	t.Logf("%d path tokens in docs/*.md checked", checked)
	if len(all) > 0 {
		t.Fatalf("%d of %d paths or symbols named in docs/*.md do not exist (line: token: problem):\n  %s",
			len(all), checked, strings.Join(all, "\n  "))
	}
}

// TestCheckFindsWhatIsMissing proves the check above can fail: a wrong path, a wrong symbol
// and a wrong receiver are reported, and what is not a repository path is left alone.
func TestCheckFindsWhatIsMissing(t *testing.T) {
	root := repoRoot(t)
	text := "```sh\n`no/such/file.go` in a code block is a command, not a reference\n```\n" +
		"`workflows/contract.go: ContractWorkflow` `workflows/contract_approval.go: contractRun.authorize`\n" +
		"`workflows/contractapi/api.go: DefaultReverifyLimit` `contracts/events.go: EventVerdict` `workflows/`\n" +
		"`go test ./docs/` `https://example.com/a/b` `--data-dir` `/__verification` `ContractWorkflow`\n" +
		"`workflows/nope.go` `workflows/contract.go: NoSuchThing` `workflows/contract.go: Author.run`\n" +
		"`workflows/contract.go/` `fixtures/runs/*/run.json` `fixtures/runs/*/nothing.json`\n"
	found, problems := check(root, text)
	want := []string{"7: `workflows/nope.go`", "7: `workflows/contract.go: NoSuchThing`", "7: `workflows/contract.go: Author.run`",
		"8: `workflows/contract.go/`", "8: `fixtures/runs/*/nothing.json`"}
	if found != 11 || len(problems) != len(want) {
		t.Fatalf("found %d tokens (want 11), problems:\n%s", found, strings.Join(problems, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(problems[i], w) {
			t.Errorf("problem %d = %q, want it to start %q", i, problems[i], w)
		}
	}
}

var (
	// fence is a fenced code block: commands, not references.
	fence = regexp.MustCompile("(?ms)^\\s*```.*?^\\s*```[^\n]*$")
	// codeSpan is an inline code span; a span may wrap across lines.
	codeSpan = regexp.MustCompile("`([^`]+)`")
	// withSymbol is `path: Name` or `path: Type.Method`.
	withSymbol = regexp.MustCompile(`^(\S+): ([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)$`)
)

// check returns how many path tokens text holds and one line per token that names nothing,
// as "line: `token`: problem".
func check(root, text string) (found int, problems []string) {
	// Blank the fences but keep their newlines, so line numbers stay right.
	text = fence.ReplaceAllStringFunc(text, func(s string) string { return strings.Repeat("\n", strings.Count(s, "\n")) })
	for _, m := range codeSpan.FindAllStringSubmatchIndex(text, -1) {
		token := strings.Join(strings.Fields(text[m[2]:m[3]]), " ")
		path, symbol := token, ""
		if s := withSymbol.FindStringSubmatch(token); s != nil {
			path, symbol = s[1], s[2]
		}
		if !looksLikePath(path) {
			continue
		}
		found++
		if problem := resolve(root, path, symbol); problem != "" {
			line := strings.Count(text[:m[0]], "\n") + 1
			problems = append(problems, fmt.Sprintf("%d: `%s`: %s", line, token, problem))
		}
	}
	return found, problems
}

// looksLikePath says whether a token names a file or folder of the repository. Commands
// (they have spaces), URLs, flags and routes or absolute paths (a leading slash: nothing in
// the repository is named that way) are not.
func looksLikePath(s string) bool {
	switch {
	case s == "", strings.ContainsAny(s, " \t"), strings.Contains(s, "://"), strings.HasPrefix(s, "-"), strings.HasPrefix(s, "/"):
		return false
	}
	if strings.Contains(s, "/") {
		return true
	}
	for _, ext := range []string{".go", ".md", ".json", ".yml"} {
		if strings.HasSuffix(s, ext) {
			return true
		}
	}
	return false
}

// resolve says what is wrong with path (and symbol, for a Go file), or "" when both exist.
// A path with a glob must match something; a path ending in a slash must be a folder.
func resolve(root, path, symbol string) string {
	abs := filepath.Join(root, filepath.FromSlash(path))
	if strings.ContainsAny(path, "*?[") {
		matches, err := filepath.Glob(abs)
		if err != nil || len(matches) == 0 {
			return "matches no file"
		}
		return ""
	}
	fi, err := os.Stat(abs)
	switch {
	case err != nil:
		return "no such file or folder"
	case strings.HasSuffix(path, "/") && !fi.IsDir():
		return "not a folder"
	case symbol == "" || !strings.HasSuffix(path, ".go"):
		return ""
	case fi.IsDir():
		return "a folder, not a Go file"
	}
	src, err := os.ReadFile(abs)
	if err != nil {
		return err.Error()
	}
	if !declares(string(src), symbol) {
		return "declares no " + symbol
	}
	return ""
}

// declares says whether Go source declares symbol: a func, type, const or var Name, a method
// Name of any receiver, a Name = in a const or var block, or, for Type.Name, a method Name
// whose receiver is Type. Regular expressions, not a parser: the docs name top-level things.
func declares(src, symbol string) bool {
	var patterns []string
	if recv, name, ok := strings.Cut(symbol, "."); ok {
		patterns = []string{`(?m)^func \(\s*(?:\w+\s+)?\*?` + recv + `(?:\[[^\]]*\])?\s*\)\s*` + name + `\b`}
	} else {
		n := regexp.QuoteMeta(symbol)
		patterns = []string{
			`(?m)^func ` + n + `\b`,
			`(?m)^func \([^)]*\)\s*` + n + `\b`,
			`(?m)^type ` + n + `\b`,
			`(?m)^(?:const|var) ` + n + `\b`,
			`(?m)^\s+` + n + `(?:\s*,\s*\w+)*(?:\s+[\w.*\[\]]+)?\s*=[^=]`,
			`(?m)^\s+` + n + `\s+(?:struct|interface)\b`,
		}
	}
	for _, p := range patterns {
		if regexp.MustCompile(p).MatchString(src) {
			return true
		}
	}
	return false
}

// repoRoot is the module's root: the docs name paths from there, wherever the clone lives.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := modroot.FromWD()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
