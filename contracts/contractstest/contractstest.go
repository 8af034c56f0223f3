// Package contractstest holds shared test material for contracts: one-field corruptions of
// the W1 contract with the JSON pointer and rule each must be refused with. The contracts and
// CLI tests both run them.
package contractstest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/signoff/signoff/contracts"
)

// W1Path is the prepared W1 contract, found relative to this source file so tests in any
// package can read it.
func W1Path() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "fixtures", "runs", "W1", "contract.json")
}

// ReadW1 returns the W1 contract document.
func ReadW1(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(W1Path())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Edit applies a change at a JSON pointer of a decoded document: set a value, or delete when
// del is true.
func Edit(t testing.TB, doc any, pointer string, value any, del bool) any {
	t.Helper()
	parts := strings.Split(pointer, "/")[1:]
	var rec func(node any, i int) any
	rec = func(node any, i int) any {
		key := strings.ReplaceAll(strings.ReplaceAll(parts[i], "~1", "/"), "~0", "~")
		last := i == len(parts)-1
		switch n := node.(type) {
		case map[string]any:
			if last {
				if del {
					delete(n, key)
				} else {
					n[key] = value
				}
				return n
			}
			n[key] = rec(n[key], i+1)
			return n
		case []any:
			idx, err := strconv.Atoi(key)
			if err != nil {
				t.Fatalf("pointer %s: %v", pointer, err)
			}
			if last {
				if del {
					return append(n[:idx:idx], n[idx+1:]...)
				}
				if idx == len(n) {
					return append(n, value)
				}
				n[idx] = value
				return n
			}
			n[idx] = rec(n[idx], i+1)
			return n
		}
		t.Fatalf("pointer %s: no container at %q", pointer, key)
		return nil
	}
	return rec(doc, 0)
}

// Decode parses JSON or fails the test.
func Decode(t testing.TB, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// MalformedCase is a one-field change of W1 and the pointer and rule it must be refused with.
type MalformedCase struct {
	Name, Pointer, Rule string
	Set                 any
	Delete              bool
	At                  string // where to apply the change, when it differs from Pointer
	Keep                int    // truncate the array at Pointer to this many items
}

// MalformedW1 is shared with the CLI tests, which assert exit code 2 for each.
var MalformedW1 = []MalformedCase{
	{Name: "missing goal", Pointer: "/goal", Rule: "required", Delete: true},
	{Name: "unknown top-level member", Pointer: "/approved_by", Rule: "additionalProperties", Set: "mallory"},
	{Name: "wrong schema version", Pointer: "/schema_version", Rule: "const", Set: "signoff.contract/v0"},
	{Name: "contract id with spaces", Pointer: "/contract_id", Rule: "pattern", Set: "W1 watch list"},
	{Name: "max_attempts 4", Pointer: "/max_attempts", Rule: "maximum", Set: 4},
	{Name: "max_attempts 0", Pointer: "/max_attempts", Rule: "minimum", Set: 0},
	{Name: "max_attempts string", Pointer: "/max_attempts", Rule: "type", Set: "3"},
	{Name: "release rule", Pointer: "/release_rule", Rule: "const", Set: "capture_always"},
	{Name: "negative price", Pointer: "/price/amount", Rule: "minimum", Set: -100},
	{Name: "currency", Pointer: "/price/currency", Rule: "pattern", Set: "US Dollars"},
	{Name: "base sha not hex", Pointer: "/repo/base_commit_sha", Rule: "pattern", Set: "main"},
	{Name: "app dir escapes the repository", Pointer: "/stack/app_dir", Rule: "pattern", Set: "web/../../etc"},
	{Name: "app dir absolute", Pointer: "/stack/app_dir", Rule: "pattern", Set: "/srv/web"},
	{Name: "duplicate criterion id", Pointer: "/criteria/1/id", Rule: contracts.RuleUniqueID, Set: "loads-mobile"},
	{Name: "route is a URL", Pointer: "/criteria/0/route", Rule: contracts.RuleRoutePath, Set: "https://evil.example/watchlist"},
	{Name: "route protocol-relative", Pointer: "/criteria/0/route", Rule: contracts.RuleRoutePath, Set: "//evil.example/"},
	{Name: "route dot segments", Pointer: "/criteria/0/route", Rule: contracts.RuleRoutePath, Set: "/watchlist/../../etc/passwd"},
	{Name: "route relative", Pointer: "/criteria/0/route", Rule: contracts.RuleRoutePath, Set: "watchlist"},
	{Name: "viewport too narrow", Pointer: "/criteria/0/viewport/width", Rule: "minimum", Set: 100},
	{Name: "viewport too tall", Pointer: "/criteria/1/viewport/height", Rule: "maximum", Set: 9000},
	{Name: "viewport missing", Pointer: "/criteria/2/viewport", Rule: contracts.RuleViewportRequired, Delete: true},
	{Name: "unknown action", Pointer: "/criteria/2/actions/0/type", Rule: "enum", Set: "eval"},
	{Name: "wait_for without selector", Pointer: "/criteria/2/actions/0/selector", Rule: "required", Delete: true},
	{Name: "unknown assertion kind", Pointer: "/criteria/4/assert/kind", Rule: "enum", Set: "looks_good"},
	{Name: "visible_text without texts", Pointer: "/criteria/4/assert/texts", Rule: "required", Delete: true},
	{Name: "unknown artifact", Pointer: "/criteria/0/required_artifacts/0", Rule: "enum", Set: "video"},
	{Name: "runtime too long", Pointer: "/criteria/0/max_runtime_ms", Rule: "maximum", Set: 3600000},
	{Name: "too few criteria", Pointer: "/criteria", Rule: contracts.RuleCriteriaCount, Keep: 3},
	{Name: "too many criteria", Pointer: "/criteria", Rule: contracts.RuleCriteriaCount, At: "/criteria/6",
		Set: map[string]any{"id": "extra", "description": "An extra check.", "route": "/", "viewport": map[string]any{"width": 390, "height": 844},
			"assert": map[string]any{"kind": "loads"}, "max_runtime_ms": 30000, "required_artifacts": []any{"observed"}}},
	{Name: "verifier digest", Pointer: "/verifier/digest", Rule: "pattern", Set: "abc"},
}

// MalformedDoc returns W1 with the case's change applied, as JSON.
func MalformedDoc(t testing.TB, base []byte, c MalformedCase) []byte {
	doc := Decode(t, base)
	at := c.At
	if at == "" {
		at = c.Pointer
	}
	if c.Keep > 0 {
		m := doc.(map[string]any)
		m[strings.TrimPrefix(at, "/")] = m[strings.TrimPrefix(at, "/")].([]any)[:c.Keep]
	} else {
		doc = Edit(t, doc, at, c.Set, c.Delete)
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}
