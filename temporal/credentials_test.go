package temporal

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/signoff/signoff/internal/datadir"
)

// The credentials are made once, owner-only, and kept across starts; a damaged or expiring
// set is replaced whole.
func TestCredentialsAreMadeOnceAndRenewed(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	c, err := EnsureCredentials(dir, now)
	if err != nil || !c.Made {
		t.Fatalf("first start: made %v, %v", c.Made, err)
	}
	for _, d := range []string{c.serverDir, c.clientDir} {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o700 {
			t.Fatalf("%s: %v %v, want a 0700 folder", d, fi.Mode(), err)
		}
		for _, f := range []string{caFile, certFile, keyFile} {
			if fi, err := os.Stat(filepath.Join(d, f)); err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("%s/%s: %v, want 0600", d, f, err)
			}
		}
	}
	key := func() []byte {
		b, err := os.ReadFile(c.ClientTLS().ClientKeyFile)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	first := key()
	if again, err := EnsureCredentials(dir, now.Add(time.Hour)); err != nil || again.Made {
		t.Fatalf("second start: made %v, %v", again.Made, err)
	}
	if !bytes.Equal(key(), first) {
		t.Fatal("a second start replaced sound credentials")
	}
	if err := os.WriteFile(filepath.Join(c.serverDir, certFile), []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := EnsureCredentials(dir, now); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(key(), first) {
		t.Fatal("a damaged set was kept")
	}
	if err := c.check(now); err != nil {
		t.Fatalf("the new set does not check: %v", err)
	}
	repaired := key()
	if _, err := EnsureCredentials(dir, now.Add(certLifetime-renewBefore/2)); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(key(), repaired) {
		t.Fatal("credentials this close to their end were kept")
	}
}

// A client finds the embedded server's credentials only for the address the server recorded.
func TestEmbeddedClientTLSIsForItsAddress(t *testing.T) {
	dir := t.TempDir()
	if _, ok, err := EmbeddedClientTLS(dir, "127.0.0.1:7233"); ok || err != nil {
		t.Fatalf("no server ever ran here: ok %v, err %v", ok, err)
	}
	c, err := EnsureCredentials(dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// The data dir's layout names the same folder for hosts that copy it.
	if want := datadir.Paths(filepath.Dir(dir)).TemporalClient; filepath.Join(filepath.Dir(dir), "temporal", ClientDirName) != want {
		t.Fatalf("datadir's TemporalClient is %s, the server writes %s", want, filepath.Join(filepath.Dir(dir), "temporal", ClientDirName))
	}
	if err := c.RecordAddress("127.0.0.1:7233"); err != nil {
		t.Fatal(err)
	}
	for addr, want := range map[string]bool{
		"127.0.0.1:7233": true, "localhost:7233": true, "127.0.0.1:7234": false, "10.0.0.2:7233": false, "my-ns.tmprl.cloud:7233": false,
	} {
		cfg, ok, err := EmbeddedClientTLS(dir, addr)
		if err != nil || ok != want {
			t.Errorf("%s: ok %v err %v, want ok %v", addr, ok, err, want)
		}
		if ok && (cfg.ServerName != EmbeddedServerName || cfg.ClientKeyFile == "") {
			t.Errorf("%s: %+v", addr, cfg)
		}
	}
}
