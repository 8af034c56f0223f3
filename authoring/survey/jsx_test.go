package survey

import (
	"encoding/json"
	"testing"
)

func TestJSLiteral(t *testing.T) {
	cases := []struct{ in, want string }{
		{`["NVDA", "AAPL", 'MSFT',];`, `["NVDA","AAPL","MSFT"]`},
		{`{ theme: 'dark', size: 3, on: true } as const`, `{"on":true,"size":3,"theme":"dark"}`},
		{`"it's"`, `"it's"`},
		{`'say "hi"'`, `"say \"hi\""`},
		{"[\n  // the default\n  \"A\",\n]", `["A"]`},
	}
	for _, c := range cases {
		got, ok := jsLiteral(c.in)
		if !ok || string(got) != c.want {
			t.Errorf("jsLiteral(%q) = %s %v, want %s", c.in, got, ok, c.want)
		}
	}
	for _, bad := range []string{`[a, b]`, `{ x: load() }`, `process.env.X`, `[1, 2`} {
		if got, ok := jsLiteral(bad); ok {
			t.Errorf("jsLiteral(%q) = %s, want refused", bad, got)
		}
	}
	if lit, ok := constLiteral("export const defaultWatchlist: string[] = [\"X\", \"Y\"];", "defaultWatchlist"); !ok || string(lit) != `["X","Y"]` {
		t.Errorf("constLiteral: %s %v", lit, ok)
	}
	var v any
	if lit, _ := jsLiteral(`{a: [1, {b: 'c'}]}`); json.Unmarshal(lit, &v) != nil {
		t.Error("nested literal")
	}
}

// Links and buttons are recorded by the name a person reads: their text past icons and
// expressions, or their aria-label.
func TestControls(t *testing.T) {
	src := `<header><a href="/" className="logo">Home</a>
	<Link href="https://nextjs.org/docs" target="_blank"><Image src="/file.svg" alt="" width={16} height={16} />Docs</Link>
	<a href="https://github.com/x" aria-label="GitHub"><GithubIcon /></a>
	<Button type="submit" onClick={() => save()}>Save changes</Button>
	<button>{label}</button></header>`
	var a Anchors
	readAnchors(src, &a)
	want := []Control{{"link", "Home"}, {"link", "Docs"}, {"link", "GitHub"}, {"button", "Save changes"}}
	if len(a.Controls) != len(want) {
		t.Fatalf("controls %+v, want %+v", a.Controls, want)
	}
	for i := range want {
		if a.Controls[i] != want[i] {
			t.Errorf("control %d: %+v, want %+v", i, a.Controls[i], want[i])
		}
	}
}
