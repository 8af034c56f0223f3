package cmdutil

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/temporal"
)

// A command dials the embedded server of its data dir with the certificate the server left
// there, and anything else as its flags say.
func TestConnFindsTheEmbeddedServersCertificate(t *testing.T) {
	dataDir := t.TempDir()
	client := datadir.Paths(dataDir).TemporalClient
	if err := os.MkdirAll(client, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(client, "frontend"), []byte("127.0.0.1:7233\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		conn    Conn
		dataDir string
		want    string // the client certificate dialled with
	}{
		"its server":              {Conn{Address: "127.0.0.1:7233"}, dataDir, filepath.Join(client, "cert.pem")},
		"its server as localhost": {Conn{Address: "localhost:7233"}, dataDir, filepath.Join(client, "cert.pem")},
		"another address":         {Conn{Address: "127.0.0.1:7234"}, dataDir, ""},
		"no data dir":             {Conn{Address: "127.0.0.1:7233"}, "", ""},
		"another data dir":        {Conn{Address: "127.0.0.1:7233"}, t.TempDir(), ""},
		"flags win":               {Conn{Address: "127.0.0.1:7233", ClientCert: "/mine.pem", ClientKey: "/mine.key"}, dataDir, "/mine.pem"},
		"an API key":              {Conn{Address: "127.0.0.1:7233", APIKey: "k"}, dataDir, ""},
	} {
		dc, err := tc.conn.In(tc.dataDir).DialConfig()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if dc.TLS.ClientCertFile != tc.want {
			t.Errorf("%s: client certificate %q, want %q", name, dc.TLS.ClientCertFile, tc.want)
		}
		if tc.want == filepath.Join(client, "cert.pem") && dc.TLS.ServerName != temporal.EmbeddedServerName {
			t.Errorf("%s: server name %q", name, dc.TLS.ServerName)
		}
	}
}
