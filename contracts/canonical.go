package contracts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Canonicalize returns the RFC 8785 (JCS) form of a JSON text: object members sorted by their
// UTF-16 code units, no insignificant whitespace, numbers in ECMAScript form, strings with the
// minimal escapes. Input that is not I-JSON (duplicate member names, invalid UTF-8, numbers
// outside IEEE 754 doubles) is refused, because two parsers could read it differently. So is
// nesting deeper than MaxJSONDepth: the walk recurses per level and copies each member's value
// into its parent, so depth is what bounds both its stack and its time.
func Canonicalize(data []byte) ([]byte, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("canonical json: input is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out bytes.Buffer
	if err := canonValue(dec, &out, 0); err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("canonical json: trailing data after the top-level value")
	}
	return out.Bytes(), nil
}

// CanonicalJSON marshals v and canonicalizes the result.
func CanonicalJSON(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("canonical json: marshal: %w", err)
	}
	return Canonicalize(raw)
}

// errTooDeep is the depth guard's error; it names the limit like CheckJSON's LimitError.
var errTooDeep = &LimitError{What: "document", Limit: "depth", Max: MaxJSONDepth}

func canonValue(dec *json.Decoder, out *bytes.Buffer, depth int) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	return canonToken(dec, tok, out, depth)
}

func canonToken(dec *json.Decoder, tok json.Token, out *bytes.Buffer, depth int) error {
	switch t := tok.(type) {
	case json.Delim:
		if depth >= MaxJSONDepth {
			return errTooDeep
		}
		switch t {
		case '{':
			return canonObject(dec, out, depth+1)
		case '[':
			return canonArray(dec, out, depth+1)
		default:
			return fmt.Errorf("unexpected %q", rune(t))
		}
	case string:
		writeCanonString(out, t)
	case json.Number:
		s, err := canonNumber(t)
		if err != nil {
			return err
		}
		out.WriteString(s)
	case bool:
		if t {
			out.WriteString("true")
		} else {
			out.WriteString("false")
		}
	case nil:
		out.WriteString("null")
	default:
		return fmt.Errorf("unexpected token %v", tok)
	}
	return nil
}

type canonMember struct {
	key   string
	units []uint16
	value []byte
}

func canonObject(dec *json.Decoder, out *bytes.Buffer, depth int) error {
	var members []canonMember
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, ok := tok.(string)
		if !ok {
			return fmt.Errorf("object key is %v, not a string", tok)
		}
		if seen[key] {
			return fmt.Errorf("duplicate member name %q", key)
		}
		seen[key] = true
		var val bytes.Buffer
		if err := canonValue(dec, &val, depth); err != nil {
			return err
		}
		members = append(members, canonMember{key: key, units: utf16.Encode([]rune(key)), value: val.Bytes()})
	}
	if _, err := dec.Token(); err != nil { // closing brace
		return err
	}
	slices.SortFunc(members, func(a, b canonMember) int { return slices.Compare(a.units, b.units) })
	out.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			out.WriteByte(',')
		}
		writeCanonString(out, m.key)
		out.WriteByte(':')
		out.Write(m.value)
	}
	out.WriteByte('}')
	return nil
}

func canonArray(dec *json.Decoder, out *bytes.Buffer, depth int) error {
	out.WriteByte('[')
	first := true
	for dec.More() {
		if !first {
			out.WriteByte(',')
		}
		first = false
		if err := canonValue(dec, out, depth); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // closing bracket
		return err
	}
	out.WriteByte(']')
	return nil
}

func writeCanonString(out *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	out.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			out.WriteString(`\"`)
		case '\\':
			out.WriteString(`\\`)
		case '\b':
			out.WriteString(`\b`)
		case '\f':
			out.WriteString(`\f`)
		case '\n':
			out.WriteString(`\n`)
		case '\r':
			out.WriteString(`\r`)
		case '\t':
			out.WriteString(`\t`)
		default:
			if r < 0x20 {
				out.WriteString(`\u00`)
				out.WriteByte(hex[r>>4])
				out.WriteByte(hex[r&0xf])
			} else {
				out.WriteRune(r)
			}
		}
	}
	out.WriteByte('"')
}

// canonNumber formats a JSON number the way ECMAScript's Number.prototype.toString does,
// which is what RFC 8785 requires.
func canonNumber(n json.Number) (string, error) {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return "", fmt.Errorf("number %s is not an IEEE 754 double", n)
	}
	return FormatES6Number(f), nil
}

// FormatES6Number renders a finite float64 in ECMAScript's shortest round-trip form.
func FormatES6Number(f float64) string {
	if f == 0 {
		return "0" // also -0
	}
	sign := ""
	if f < 0 {
		sign = "-"
		f = -f
	}
	// Shortest digits and decimal exponent: d.ddddde±XX.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mant, expPart, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, _ := strconv.Atoi(expPart)
	k := len(digits)
	n := exp + 1 // value = 0.digits × 10^n
	var s string
	switch {
	case k <= n && n <= 21:
		s = digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		s = digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		s = "0." + strings.Repeat("0", -n) + digits
	default:
		s = digits[:1]
		if k > 1 {
			s += "." + digits[1:]
		}
		if n-1 >= 0 {
			s += "e+" + strconv.Itoa(n-1)
		} else {
			s += "e-" + strconv.Itoa(-(n - 1))
		}
	}
	return sign + s
}
