// Package pyjson writes JSON byte-for-byte as Python's json.dumps does (ensure_ascii, chosen
// separators, optional sort_keys). The uAgents reference hashes and base64-encodes such text,
// so digests and payloads only match if Go emits the same bytes.
package pyjson

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/signoff/signoff/contracts"
)

// Style selects json.dumps options.
type Style struct {
	ItemSep, KeySep string
	SortKeys        bool
}

var (
	// Spaced is json.dumps(obj): what pydantic v1 .json() and requests' json= send.
	Spaced = Style{ItemSep: ", ", KeySep: ": "}
	// SpacedSorted is json.dumps(obj, sort_keys=True): schema and protocol digests.
	SpacedSorted = Style{ItemSep: ", ", KeySep: ": ", SortKeys: true}
	// CompactSorted is json.dumps(obj, sort_keys=True, separators=(",", ":")): signed
	// Almanac models.
	CompactSorted = Style{ItemSep: ",", KeySep: ":", SortKeys: true}
)

// Obj is a JSON object whose key order is kept (Python dicts keep insertion order).
type Obj []KV

// KV is one member of an Obj.
type KV struct {
	K string
	V any
}

// Marshal encodes v. Supported: nil, bool, string, ints, floats, json.Number, Obj,
// json.RawMessage (re-decoded), and slices or string-keyed maps of those. Plain maps have no
// order in Go, so they are written with sorted keys.
func Marshal(v any, st Style) ([]byte, error) {
	var b strings.Builder
	if err := st.write(&b, v); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

// Decode parses JSON into generic values (numbers kept as json.Number) for re-encoding. Input
// over the chat size limit or nesting deeper than MaxJSONDepth is refused first: Marshal
// recurses once per level.
func Decode(data []byte) (any, error) {
	if err := contracts.CheckJSON(data, "chat message", contracts.MaxChatBytes, contracts.MaxJSONDepth); err != nil {
		return nil, fmt.Errorf("pyjson: %w", err)
	}
	d := json.NewDecoder(strings.NewReader(string(data)))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("pyjson: %w", err)
	}
	return v, nil
}

func (st Style) write(b *strings.Builder, v any) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case string:
		WriteString(b, x)
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case uint64:
		b.WriteString(strconv.FormatUint(x, 10))
	case float64:
		b.WriteString(Float(x))
	case json.Number:
		s, err := Number(x)
		if err != nil {
			return err
		}
		b.WriteString(s)
	case json.RawMessage:
		g, err := Decode(x)
		if err != nil {
			return err
		}
		return st.write(b, g)
	case Obj:
		if st.SortKeys {
			sorted := append(Obj(nil), x...)
			sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].K < sorted[j].K })
			x = sorted
		}
		b.WriteByte('{')
		for i, kv := range x {
			if i > 0 {
				b.WriteString(st.ItemSep)
			}
			WriteString(b, kv.K)
			b.WriteString(st.KeySep)
			if err := st.write(b, kv.V); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case map[string]any:
		return st.write(b, sortedObj(x))
	case map[string]string:
		o := make(Obj, 0, len(x))
		for k, val := range x {
			o = append(o, KV{k, val})
		}
		sort.Slice(o, func(i, j int) bool { return o[i].K < o[j].K })
		return st.write(b, o)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(st.ItemSep)
			}
			if err := st.write(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	default:
		return st.writeReflect(b, v)
	}
	return nil
}

func (st Style) writeReflect(b *strings.Builder, v any) error {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		items := make([]any, rv.Len())
		for i := range items {
			items[i] = rv.Index(i).Interface()
		}
		return st.write(b, items)
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return fmt.Errorf("pyjson: map key type %s unsupported", rv.Type().Key())
		}
		m := make(map[string]any, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			m[it.Key().String()] = it.Value().Interface()
		}
		return st.write(b, m)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32:
		return st.write(b, rv.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return st.write(b, rv.Uint())
	case reflect.Float32:
		return st.write(b, rv.Float())
	case reflect.String:
		return st.write(b, rv.String())
	case reflect.Pointer:
		if rv.IsNil() {
			return st.write(b, nil)
		}
		return st.write(b, rv.Elem().Interface())
	}
	return fmt.Errorf("pyjson: unsupported type %T", v)
}

func sortedObj(m map[string]any) Obj {
	o := make(Obj, 0, len(m))
	for k, v := range m {
		o = append(o, KV{k, v})
	}
	sort.Slice(o, func(i, j int) bool { return o[i].K < o[j].K })
	return o
}

// WriteString writes s as a JSON string with ensure_ascii=True: everything outside
// printable ASCII is \uXXXX (lower-case hex, surrogate pairs above U+FFFF), with the short
// escapes \" \\ \n \r \t \b \f. Invalid UTF-8 becomes U+FFFD (Python strings cannot hold it).
func WriteString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			switch {
			case r >= 0x20 && r <= 0x7e:
				b.WriteRune(r)
			case r > 0xffff:
				r1, r2 := utf16.EncodeRune(r)
				fmt.Fprintf(b, `\u%04x\u%04x`, r1, r2)
			case r == utf8.RuneError:
				b.WriteString(`\ufffd`)
			default:
				fmt.Fprintf(b, `\u%04x`, r)
			}
		}
	}
	b.WriteByte('"')
}

// Float formats f as Python's float.__repr__ (what json.dumps writes): shortest round-trip
// digits, fixed notation for exponents in [-4, 16) with at least one decimal, else 1e+16 style.
func Float(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64)
	exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if exp < -4 || exp >= 16 {
		return e
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// Number re-encodes a JSON number as Python would after json.loads: integers exactly
// (arbitrary size), everything else as a float repr.
func Number(n json.Number) (string, error) {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		i, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return "", fmt.Errorf("pyjson: bad integer %q", s)
		}
		return i.String(), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !isRangeErr(err) {
		return "", fmt.Errorf("pyjson: bad number %q: %w", s, err)
	}
	return Float(f), nil
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}
