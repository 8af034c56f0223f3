package contracts

import (
	"math"
	"strings"
	"testing"
)

func TestCanonicalizeRFC8785(t *testing.T) {
	cases := []struct{ in, want string }{
		// Members sort by UTF-16 code units: U+1F600 is the surrogate pair D83D DE00, and
		// 0xD83D > 0x20AC, so the euro sign comes first although its code point is lower.
		{`{"\ud83d\ude00":1,"\u20ac":2}`, "{\"€\":2,\"😀\":1}"},
		{`{"b": [1, 2, {"z":null,"a":true}], "a": "x"}`, `{"a":"x","b":[1,2,{"a":true,"z":null}]}`},
		{`{"1":1,"10":2,"2":3}`, `{"1":1,"10":2,"2":3}`},
		{`"\u0000\u001f\"\\/\u007f\u2028"`, "\"\\u0000\\u001f\\\"\\\\/\u007f\u2028\""},
		{`"\b\f\n\r\t"`, `"\b\f\n\r\t"`},
		{`[1.0, -0, 0.0000001, 1e21, 1e20, 123456789012345678901234567890, 4.5, 0.000001, 1E-7, -1.5e-9]`,
			`[1,0,1e-7,1e+21,100000000000000000000,1.2345678901234568e+29,4.5,0.000001,1e-7,-1.5e-9]`},
		{`[333333333.33333329, 1E30, 4.50, 2e-3, 0.000001000]`, `[333333333.3333333,1e+30,4.5,0.002,0.000001]`},
	}
	for _, c := range cases {
		got, err := Canonicalize([]byte(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if string(got) != c.want {
			t.Errorf("Canonicalize(%s)\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

func TestCanonicalizeRefusesNonIJSON(t *testing.T) {
	for _, in := range []string{
		`{"a":1,"a":2}`,
		`{"a":1} {"b":2}`,
		"\"\xff\"",
		`[1e400]`,
		`{"a":}`,
	} {
		if _, err := Canonicalize([]byte(in)); err == nil {
			t.Errorf("Canonicalize(%q) succeeded, want an error", in)
		}
	}
}

func TestFormatES6Number(t *testing.T) {
	cases := map[float64]string{
		0: "0", 1: "1", -1: "-1", 0.5: "0.5", 1e21: "1e+21", 1e-6: "0.000001", 1e-7: "1e-7",
		math.MaxFloat64: "1.7976931348623157e+308", 5e-324: "5e-324", 9007199254740992: "9007199254740992",
		295147905179352830000: "295147905179352830000",
	}
	for f, want := range cases {
		if got := FormatES6Number(f); got != want {
			t.Errorf("FormatES6Number(%v) = %s, want %s", f, got, want)
		}
	}
}

func TestCanonicalIsIdempotent(t *testing.T) {
	in := `{ "z": [ {"b":2, "a":1} ], "a" : "\u00e9\n" , "n": 1.50 }`
	once, err := Canonicalize([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	twice, err := Canonicalize(once)
	if err != nil {
		t.Fatal(err)
	}
	if string(once) != string(twice) || strings.Contains(string(once), " ") {
		t.Fatalf("not stable: %s vs %s", once, twice)
	}
}
