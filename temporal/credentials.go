package temporal

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The embedded server answers only mutual TLS, on its frontend and between its own services:
// a loopback port is open to every account on the machine, a key file owner-only in the data
// dir is not. The certificates are made on first start by a CA whose key is never written
// down, so nothing else can ever be signed for this server.
const (
	// EmbeddedServerName is the name in the embedded server's certificate. Clients check it
	// instead of the address, so the certificate holds wherever the server listens.
	EmbeddedServerName = "signoff-temporal"

	// ClientDirName, under the server's data dir, holds what a client needs: the CA, the
	// client certificate and key, and the frontend address they are for. Copying the folder
	// to another host's <data-dir>/temporal lets that host's workers in.
	ClientDirName = "client"
	serverDirName = "server-tls"

	caFile         = "ca.pem"
	certFile       = "cert.pem"
	keyFile        = "key.pem"
	addressFile    = "frontend"
	certLifetime   = 5 * 365 * 24 * time.Hour
	renewBefore    = 30 * 24 * time.Hour
	maxCredentials = 64 << 10 // bytes read from any one credentials file
)

// Credentials are the embedded server's certificate files. They live here, beside the client,
// because both sides read the same files: the server (temporal/embedded) makes and serves
// them, a client on this machine finds them with EmbeddedClientTLS.
type Credentials struct {
	serverDir, clientDir string
	Made                 bool // this start made the set (first start, or a damaged or expiring one replaced)
}

// CA, ServerCert and ServerKey are the server's copies of its CA and its own pair.
func (c Credentials) CA() string         { return filepath.Join(c.serverDir, caFile) }
func (c Credentials) ServerCert() string { return filepath.Join(c.serverDir, certFile) }
func (c Credentials) ServerKey() string  { return filepath.Join(c.serverDir, keyFile) }

// ClientTLS is what an in-process client of this server dials with.
func (c Credentials) ClientTLS() TLSConfig {
	return TLSConfig{CACertFile: filepath.Join(c.clientDir, caFile), ClientCertFile: filepath.Join(c.clientDir, certFile),
		ClientKeyFile: filepath.Join(c.clientDir, keyFile), ServerName: EmbeddedServerName}
}

// EnsureCredentials loads the server's and client's certificates from dataDir, or makes a new
// set when any is missing, unreadable, not signed by the CA beside it, or near its end. A new
// set shuts out clients holding the old one (a copy on another host must be made again).
func EnsureCredentials(dataDir string, now time.Time) (Credentials, error) {
	c := Credentials{serverDir: filepath.Join(dataDir, serverDirName), clientDir: filepath.Join(dataDir, ClientDirName)}
	if err := c.check(now); err == nil {
		return c, nil
	}
	if err := c.make(now); err != nil {
		return c, fmt.Errorf("temporal: make TLS credentials in %s: %w", dataDir, err)
	}
	c.Made = true
	if err := c.check(now); err != nil {
		return c, fmt.Errorf("temporal: TLS credentials just made in %s: %w", dataDir, err)
	}
	return c, nil
}

// check verifies both certificates against the CA for what each is used for.
func (c Credentials) check(now time.Time) error {
	caPEM, err := readLimited(c.CA())
	if err != nil {
		return err
	}
	clientCA, err := readLimited(filepath.Join(c.clientDir, caFile))
	if err != nil {
		return err
	}
	if !bytes.Equal(caPEM, clientCA) {
		return errors.New("the client's CA is not the server's")
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return errors.New("no CA certificate")
	}
	for _, p := range []struct {
		dir   string
		usage x509.ExtKeyUsage
		name  string
	}{
		{c.serverDir, x509.ExtKeyUsageServerAuth, EmbeddedServerName},
		{c.clientDir, x509.ExtKeyUsageClientAuth, ""},
	} {
		certPEM, err := readLimited(filepath.Join(p.dir, certFile))
		if err != nil {
			return err
		}
		keyPEM, err := readLimited(filepath.Join(p.dir, keyFile))
		if err != nil {
			return err
		}
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return err
		}
		leaf, err := x509.ParseCertificate(pair.Certificate[0])
		if err != nil {
			return err
		}
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: p.name, CurrentTime: now.Add(renewBefore),
			KeyUsages: []x509.ExtKeyUsage{p.usage}}); err != nil {
			return err
		}
	}
	return nil
}

// make writes a fresh CA, server and client certificate. The server's certificate serves
// the internal services' client side too (Temporal's internode clients present it).
func (c Credentials) make(now time.Time) error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	caTmpl := certTemplate(now, "Signoff embedded Temporal CA")
	caTmpl.IsCA, caTmpl.BasicConstraintsValid = true, true
	caTmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})

	leaf := func(dir string, tmpl *x509.Certificate) error {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return err
		}
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		if err := os.Chmod(dir, 0o700); err != nil {
			return err
		}
		// The key first, the CA last: a crash in between leaves a set that check refuses.
		for _, f := range []struct {
			name string
			data []byte
		}{
			{keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})},
			{certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})},
			{caFile, caPEM},
		} {
			if err := writePrivate(filepath.Join(dir, f.name), f.data); err != nil {
				return err
			}
		}
		return nil
	}
	server := certTemplate(now, EmbeddedServerName)
	server.DNSNames = []string{EmbeddedServerName}
	server.KeyUsage = x509.KeyUsageDigitalSignature
	server.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	if err := leaf(c.serverDir, server); err != nil {
		return err
	}
	client := certTemplate(now, "signoff")
	client.KeyUsage = x509.KeyUsageDigitalSignature
	client.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	return leaf(c.clientDir, client)
}

func certTemplate(now time.Time, cn string) *x509.Certificate {
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	return &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: cn},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(certLifetime)}
}

// writePrivate replaces path with data, owner-only, through a rename so a reader never sees
// half a key.
func writePrivate(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// readLimited reads a credentials file, refusing one over maxCredentials.
func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCredentials+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxCredentials {
		return nil, fmt.Errorf("%s is over %d bytes", path, maxCredentials)
	}
	return b, nil
}

// RecordAddress writes the frontend address beside the client credentials, so a client given
// that address knows these credentials are for it (see EmbeddedClientTLS).
func (c Credentials) RecordAddress(addr string) error {
	return writePrivate(filepath.Join(c.clientDir, addressFile), []byte(addr+"\n"))
}

// EmbeddedClientTLS returns the client credentials an embedded server left in its data dir
// (<data-dir>/temporal) when they are for the frontend at address; ok is false when the dir
// holds none, or holds them for another address (an external cluster is dialled as
// configured). "localhost" and 127.0.0.1 are the same address here.
func EmbeddedClientTLS(temporalDir, address string) (cfg TLSConfig, ok bool, err error) {
	dir := filepath.Join(temporalDir, ClientDirName)
	rec, err := readLimited(filepath.Join(dir, addressFile))
	if errors.Is(err, os.ErrNotExist) {
		return TLSConfig{}, false, nil
	}
	if err != nil {
		return TLSConfig{}, false, fmt.Errorf("temporal: read the embedded server's address: %w", err)
	}
	if sameAddress(strings.TrimSpace(string(rec)), address) {
		return Credentials{clientDir: dir}.ClientTLS(), true, nil
	}
	return TLSConfig{}, false, nil
}

func sameAddress(a, b string) bool {
	norm := func(s string) string {
		h, p, err := net.SplitHostPort(s)
		if err != nil {
			return s
		}
		if h == "localhost" {
			h = DefaultHost
		}
		if ip := net.ParseIP(h); ip != nil {
			h = ip.String()
		}
		return net.JoinHostPort(h, p)
	}
	return norm(a) == norm(b)
}
