package envelope

import (
	"reflect"
	"testing"
)

// Decoding arbitrary bytes never panics; a decoded envelope re-encodes to an equal one and
// verification never panics either.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"version":1,"sender":"agent1qf5gfqm48k9acegez3sg82ney2aa6l5fvpwh3n3z0ajh0nam3ssgwnn5me7","target":"agent1qvjjle8dlf22ff7zsh6wr3gl8tdepzygftdxpc2vn8539ngt962a709c90s","session":"d3b1a7b0-5f3e-4c7a-9d2e-1a2b3c4d5e6f","schema_digest":"model:2601825997203ee07dbb9ff6e7c71ae7bdaf6a7c8b817361f2f88f4b29c68d0c","protocol_digest":null,"payload":null,"expires":null,"nonce":null,"signature":"sig1f6fs0tkzrfllck6z5yuanqxerunl7m4cjtsz8qmah7cpw4rdaf9kcsz3fwtqy6x8te3lx76xr5gaw7yncljf7wlhxuqnk95vqwpcxjstyvpds"}`,
		`{"version":"1","sender":"user1x","target":"b","session":"D3B1A7B05F3E4C7A9D2E1A2B3C4D5E6F","schema_digest":"x","expires":-5,"nonce":1.0,"payload":"!!"}`,
		`{}`, `null`, `[1]`, "\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := Decode(data)
		if err != nil {
			return
		}
		_ = e.Verify()
		_, _ = e.DecodePayload()
		b, err := e.Encode()
		if err != nil {
			t.Fatal(err)
		}
		again, err := Decode(b)
		if err != nil || !reflect.DeepEqual(again, e) {
			t.Fatalf("round trip: %v\n%+v\n%+v", err, e, again)
		}
	})
}
