// Package cmdutil holds what several commands share: how to reach Temporal and where the data
// dir is.
package cmdutil

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/temporal"
)

// Conn says how to reach Temporal: an external cluster when Address is set, otherwise the
// embedded dev server on this machine.
type Conn struct {
	Address    string
	Namespace  string
	CACert     string
	ClientCert string
	ClientKey  string
	ServerName string
	// APIKey is the settings' TEMPORAL_API_KEY, never a flag (flags show in process lists).
	APIKey string

	// dataDir is where an embedded server this machine runs keeps its client certificate (In).
	dataDir string
}

// In returns c for a command whose data dir is dataDir: dialling the embedded server that
// dataDir's `signoff dev` or `signoff server` runs uses the client certificate it left there.
func (c Conn) In(dataDir string) Conn {
	c.dataDir = dataDir
	return c
}

// AddFlags registers the connection flags on cmd. defaultAddress is what client commands dial
// when --temporal-address is not given ("" for commands that start the embedded server).
func (c *Conn) AddFlags(cmd *cobra.Command, defaultAddress string) {
	f := cmd.Flags()
	f.StringVar(&c.Address, "temporal-address", defaultAddress, "Temporal frontend host:port (an external cluster or Temporal Cloud)")
	f.StringVar(&c.Namespace, "namespace", temporal.DefaultNamespace, "Temporal namespace")
	f.StringVar(&c.CACert, "tls-ca", "", "CA certificate (PEM) for the cluster")
	f.StringVar(&c.ClientCert, "tls-cert", "", "client certificate (PEM) for mTLS")
	f.StringVar(&c.ClientKey, "tls-key", "", "client key (PEM) for mTLS")
	f.StringVar(&c.ServerName, "tls-server-name", "", "server name to verify")
}

// DialConfig builds the temporal package's dial config. Without TLS flags or an API key, an
// address the data dir's embedded server listens on is dialled with that server's client
// certificate (it answers nothing else).
func (c Conn) DialConfig() (temporal.DialConfig, error) {
	dc := temporal.DialConfig{Address: c.Address, Namespace: c.Namespace, APIKey: c.APIKey,
		TLS: temporal.TLSConfig{CACertFile: c.CACert, ClientCertFile: c.ClientCert, ClientKeyFile: c.ClientKey, ServerName: c.ServerName}}
	if c.Address == "" || c.dataDir == "" || dc.TLS.Enabled() || c.APIKey != "" {
		return dc, nil
	}
	tc, ok, err := temporal.EmbeddedClientTLS(datadir.Paths(c.dataDir).Temporal, c.Address)
	if err != nil {
		return dc, err
	}
	if ok {
		dc.TLS = tc
	}
	return dc, nil
}

// Dial connects to the configured cluster.
func (c Conn) Dial(ctx context.Context) (client.Client, error) {
	if c.Address == "" {
		return nil, fmt.Errorf("no Temporal address: start `signoff dev` or pass --temporal-address")
	}
	dc, err := c.DialConfig()
	if err != nil {
		return nil, err
	}
	cl, err := temporal.Dial(ctx, dc)
	if err != nil {
		hint := "is `signoff dev` running?"
		if !dc.TLS.Enabled() && c.APIKey == "" {
			hint += " Signoff's embedded server answers only its own client certificate: pass --data-dir of the `signoff dev` or `signoff server` that runs it, or --tls-* flags with a copy of its <data-dir>/temporal/" + temporal.ClientDirName
		}
		return nil, fmt.Errorf("reach Temporal at %s (%s): %w", c.Address, hint, err)
	}
	return cl, nil
}
