package pyjson

import (
	"encoding/json"
	"testing"
)

// Expected strings were produced by CPython 3.11 json.dumps (see comments).
func TestMatchesPythonDumps(t *testing.T) {
	// json.dumps({'a': '\x7f\u2028\x01\n"\\é𝄞', 'b': [1, 2.5, None, True]}, sort_keys=True)
	v := map[string]any{"b": []any{1, 2.5, nil, true}, "a": "\x7f\u2028\x01\n\"\\é𝄞"}
	got, err := Marshal(v, SpacedSorted)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a": "\u007f\u2028\u0001\n\"\\\u00e9\ud834\udd1e", "b": [1, 2.5, null, true]}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	// Order kept without sort_keys; compact separators.
	got, _ = Marshal(Obj{{"z", 1}, {"a", Obj{{"y", "<&>"}}}}, Style{ItemSep: ",", KeySep: ":"})
	if string(got) != `{"z":1,"a":{"y":"<&>"}}` {
		t.Fatalf("ordered compact: %s", got)
	}
	got, _ = Marshal(Obj{{"z", 1}, {"a", 2}}, CompactSorted)
	if string(got) != `{"a":2,"z":1}` {
		t.Fatalf("sorted compact: %s", got)
	}
}

func TestFloatRepr(t *testing.T) {
	// repr(1e16), repr(1e15), repr(2.0), repr(1e-5), repr(0.0001), repr(1.5e300), repr(-0.0)
	cases := map[float64]string{1e16: "1e+16", 1e15: "1000000000000000.0", 2.0: "2.0", 1e-5: "1e-05",
		0.0001: "0.0001", 1.5e300: "1.5e+300", 0.1: "0.1"}
	for f, want := range cases {
		if got := Float(f); got != want {
			t.Errorf("Float(%v) = %s, want %s", f, got, want)
		}
	}
	for in, want := range map[string]string{"12345678901234567890123": "12345678901234567890123", "1.50": "1.5", "1e3": "1000.0"} {
		got, err := Number(json.Number(in))
		if err != nil || got != want {
			t.Errorf("Number(%s) = %s (%v), want %s", in, got, err, want)
		}
	}
}

func TestDecodeRoundTrip(t *testing.T) {
	in := `{"b": [1, {"c": null}], "a": "x"}`
	v, err := Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := Marshal(v, SpacedSorted)
	if string(got) != `{"a": "x", "b": [1, {"c": null}]}` {
		t.Fatalf("got %s", got)
	}
	if _, err := Marshal(struct{}{}, Spaced); err == nil {
		t.Fatal("struct accepted")
	}
}
