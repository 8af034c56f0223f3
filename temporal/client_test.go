package temporal_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/signoff/signoff/temporal"
)

// writePEMPair writes a self-signed certificate and its key, returning the paths.
func writePEMPair(t *testing.T, dir, name string) (certPath, keyPath string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPath, keyPath = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certPath, keyPath
}

func TestClientOptionsPlain(t *testing.T) {
	opts, err := temporal.ClientOptions(temporal.DialConfig{Address: "127.0.0.1:7233"})
	if err != nil {
		t.Fatal(err)
	}
	if opts.HostPort != "127.0.0.1:7233" || opts.Namespace != "default" {
		t.Fatalf("options = %s / %s", opts.HostPort, opts.Namespace)
	}
	if opts.ConnectionOptions.TLS != nil || opts.Credentials != nil {
		t.Fatal("plain config turned on TLS or credentials")
	}
	if opts.Logger == nil {
		t.Fatal("no SDK logger set: the SDK default logs to stdout")
	}
}

// A server on this machine is dialled without gzip (CPU for nothing on loopback); any other
// keeps the SDK's default, gzip, which saves real bandwidth.
func TestClientOptionsCompressOnlyOffMachine(t *testing.T) {
	for addr, off := range map[string]bool{
		"127.0.0.1:7233": true, "localhost:7233": true, "[::1]:7233": true, "127.0.0.2:7233": true,
		"signoff.example.com:7233": false, "10.0.0.1:7233": false, "[2001:db8::1]:7233": false,
	} {
		opts, err := temporal.ClientOptions(temporal.DialConfig{Address: addr})
		if err != nil {
			t.Fatal(err)
		}
		_, isOff := opts.ConnectionOptions.GrpcCompression.(*client.GrpcCompressionNone)
		if isOff != off {
			t.Errorf("%s: compression off = %v, want %v (%T)", addr, isOff, off, opts.ConnectionOptions.GrpcCompression)
		}
	}
}

func TestClientOptionsTLS(t *testing.T) {
	dir := t.TempDir()
	caCert, _ := writePEMPair(t, dir, "ca")
	clientCert, clientKey := writePEMPair(t, dir, "client")

	opts, err := temporal.ClientOptions(temporal.DialConfig{
		Address:   "ns.example.tmprl.cloud:7233",
		Namespace: "ns.example",
		TLS: temporal.TLSConfig{
			CACertFile: caCert, ClientCertFile: clientCert, ClientKeyFile: clientKey, ServerName: "override.example",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	tc := opts.ConnectionOptions.TLS
	if tc == nil || tc.RootCAs == nil || len(tc.Certificates) != 1 || tc.ServerName != "override.example" {
		t.Fatalf("TLS config = %+v", tc)
	}
	if opts.Namespace != "ns.example" {
		t.Fatalf("namespace = %q", opts.Namespace)
	}

	bad := []struct {
		name string
		tls  temporal.TLSConfig
		want string
	}{
		{"cert without key", temporal.TLSConfig{ClientCertFile: clientCert}, "together"},
		{"key without cert", temporal.TLSConfig{ClientKeyFile: clientKey}, "together"},
		{"missing CA file", temporal.TLSConfig{CACertFile: filepath.Join(dir, "nope.pem")}, "nope.pem"},
		{"CA file not PEM", temporal.TLSConfig{CACertFile: clientKey}, "no PEM certificate"},
		{"key does not match cert", temporal.TLSConfig{ClientCertFile: clientCert, ClientKeyFile: filepath.Join(dir, "ca.key")}, "client cert"},
	}
	for _, b := range bad {
		_, err := temporal.ClientOptions(temporal.DialConfig{Address: "h:1", TLS: b.tls})
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: error = %v, want it to mention %q", b.name, err, b.want)
		}
	}
}

func TestClientOptionsAPIKeyStaysSecret(t *testing.T) {
	const key = "sk-very-secret-123"
	dc := temporal.DialConfig{Address: "h.example:7233", Namespace: "n", APIKey: key}
	opts, err := temporal.ClientOptions(dc)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Credentials == nil {
		t.Fatal("API key did not set credentials")
	}
	var logged bytes.Buffer
	slog.New(slog.NewTextHandler(&logged, nil)).Info("dial", "cfg", dc)
	for _, s := range []string{dc.String(), fmt.Sprintf("%v", dc), fmt.Sprint(dc), logged.String()} {
		if strings.Contains(s, key) {
			t.Fatalf("API key leaked: %s", s)
		}
	}
	if !strings.Contains(dc.String(), "api_key=set") {
		t.Fatalf("String() = %q does not say a key is set", dc.String())
	}
}

func TestClientOptionsRejectsBadAddress(t *testing.T) {
	for _, addr := range []string{"", "no-port", "http://x:7233/"} {
		if _, err := temporal.ClientOptions(temporal.DialConfig{Address: addr}); err == nil {
			t.Errorf("address %q accepted", addr)
		}
	}
}

func TestDialUnreachableFails(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	c, err := temporal.Dial(ctx, temporal.DialConfig{Address: addr})
	if err == nil {
		c.Close()
		t.Fatal("Dial to a closed port succeeded")
	}
	if !strings.Contains(err.Error(), addr) {
		t.Fatalf("error %q does not name the address", err)
	}
}
