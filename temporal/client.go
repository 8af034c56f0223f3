package temporal

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
)

// DialConfig says how to reach a Temporal frontend: the embedded server
// (Server.DialConfig) or an external cluster / Temporal Cloud.
type DialConfig struct {
	// Address is host:port of the frontend, e.g. 127.0.0.1:7233 or
	// my-ns.a1b2c.tmprl.cloud:7233.
	Address string
	// Namespace defaults to "default".
	Namespace string
	// TLS is off unless a field is set or an API key is given.
	TLS TLSConfig
	// APIKey is sent as a bearer token and turns TLS on. The caller reads it from
	// TEMPORAL_API_KEY; it never appears in String or logs.
	APIKey string
	// Logger receives SDK logs. Nil means warnings and errors on stderr: the SDK's
	// own default logs every worker start and activity at info/debug on stdout.
	Logger *slog.Logger
}

// TLSConfig points at PEM files for a cluster that needs TLS or mTLS.
type TLSConfig struct {
	// CACertFile verifies the server; empty means the system roots.
	CACertFile string
	// ClientCertFile and ClientKeyFile are the mTLS identity; set both or neither.
	ClientCertFile string
	ClientKeyFile  string
	// ServerName overrides the name checked in the server's certificate.
	ServerName string
}

// Enabled reports whether any TLS setting is present.
func (t TLSConfig) Enabled() bool {
	return t.CACertFile != "" || t.ClientCertFile != "" || t.ClientKeyFile != "" || t.ServerName != ""
}

// String describes the config without the API key.
func (c DialConfig) String() string {
	key := "none"
	if c.APIKey != "" {
		key = "set"
	}
	return fmt.Sprintf("address=%s namespace=%s tls=%t api_key=%s", c.Address, c.namespace(), c.TLS.Enabled(), key)
}

// LogValue keeps the API key out of structured logs too.
func (c DialConfig) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("address", c.Address),
		slog.String("namespace", c.namespace()),
		slog.Bool("tls", c.TLS.Enabled()),
		slog.Bool("api_key", c.APIKey != ""),
	)
}

func (c DialConfig) namespace() string {
	if c.Namespace == "" {
		return DefaultNamespace
	}
	return c.Namespace
}

// QuietSDKLogger is the SDK logger used when DialConfig.Logger is nil:
// warnings and errors only, on stderr.
func QuietSDKLogger() sdklog.Logger {
	return sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
}

// ClientOptions turns a DialConfig into SDK client options. It reads the TLS
// files now, so a bad path fails here with its name rather than at first RPC.
func ClientOptions(c DialConfig) (client.Options, error) {
	if c.Address == "" {
		return client.Options{}, errors.New("temporal: address is required (host:port)")
	}
	if _, _, err := net.SplitHostPort(c.Address); err != nil {
		return client.Options{}, fmt.Errorf("temporal: address %q is not host:port: %w", c.Address, err)
	}
	opts := client.Options{
		HostPort:  c.Address,
		Namespace: c.namespace(),
	}
	if host, _, _ := net.SplitHostPort(c.Address); isLoopback(host) {
		// gzip on loopback spends CPU on both ends to save bandwidth that costs nothing.
		opts.ConnectionOptions.GrpcCompression = &client.GrpcCompressionNone{}
	}
	if c.Logger != nil {
		opts.Logger = sdklog.NewStructuredLogger(c.Logger)
	} else {
		opts.Logger = QuietSDKLogger()
	}
	if c.TLS.Enabled() {
		tc, err := c.TLS.build()
		if err != nil {
			return client.Options{}, err
		}
		opts.ConnectionOptions.TLS = tc
	}
	if c.APIKey != "" {
		// The SDK adds "authorization: Bearer <key>" and enables TLS with system
		// roots when no TLS config is given.
		opts.Credentials = client.NewAPIKeyStaticCredentials(c.APIKey)
	}
	return opts, nil
}

// isLoopback reports whether host names this machine: localhost or a loopback IP.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (t TLSConfig) build() (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName}
	if t.CACertFile != "" {
		pem, err := os.ReadFile(t.CACertFile)
		if err != nil {
			return nil, fmt.Errorf("temporal: read TLS CA cert: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("temporal: TLS CA cert %s holds no PEM certificate", t.CACertFile)
		}
		tc.RootCAs = pool
	}
	switch {
	case t.ClientCertFile != "" && t.ClientKeyFile != "":
		cert, err := tls.LoadX509KeyPair(t.ClientCertFile, t.ClientKeyFile)
		if err != nil {
			return nil, fmt.Errorf("temporal: load TLS client cert %s / key %s: %w", t.ClientCertFile, t.ClientKeyFile, err)
		}
		tc.Certificates = []tls.Certificate{cert}
	case t.ClientCertFile != "" || t.ClientKeyFile != "":
		return nil, errors.New("temporal: TLS client cert and key must be given together")
	}
	return tc, nil
}

// Dial connects to the frontend and checks it answers (the SDK calls
// GetSystemInfo on dial), so a wrong address fails here, not in a worker.
func Dial(ctx context.Context, c DialConfig) (client.Client, error) {
	opts, err := ClientOptions(c)
	if err != nil {
		return nil, err
	}
	cl, err := client.DialContext(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("temporal: dial %s: %w", c, err)
	}
	return cl, nil
}
