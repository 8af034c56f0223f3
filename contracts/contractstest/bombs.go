package contractstest

import "bytes"

// DepthBomb returns a JSON object about size bytes long that is nothing but nesting:
// {"a":{"a":{...}}}. It is the attacker's input behind the JSON limits: before them, 600 KB of
// it overflowed the canonicalizer's stack or took minutes of CPU.
func DepthBomb(size int) []byte {
	const open, closing = `{"a":`, `}`
	n := size / (len(open) + len(closing))
	var b bytes.Buffer
	b.Grow(n * (len(open) + len(closing)))
	for range n {
		b.WriteString(open)
	}
	b.WriteString("1")
	for range n {
		b.WriteString(closing)
	}
	return b.Bytes()
}

// SizeBomb returns a flat, well-formed JSON object of at least size bytes: {"pad":"xxx..."}.
func SizeBomb(size int) []byte {
	var b bytes.Buffer
	b.Grow(size + 16)
	b.WriteString(`{"pad":"`)
	b.Write(bytes.Repeat([]byte("x"), size))
	b.WriteString(`"}`)
	return b.Bytes()
}
