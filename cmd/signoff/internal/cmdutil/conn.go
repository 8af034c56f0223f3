// Package cmdutil holds what several commands share: how to reach Temporal and where the data
// dir is.
package cmdutil

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

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

// DialConfig builds the temporal package's dial config.
func (c Conn) DialConfig() temporal.DialConfig {
	return temporal.DialConfig{Address: c.Address, Namespace: c.Namespace, APIKey: c.APIKey,
		TLS: temporal.TLSConfig{CACertFile: c.CACert, ClientCertFile: c.ClientCert, ClientKeyFile: c.ClientKey, ServerName: c.ServerName}}
}

// Dial connects to the configured cluster.
func (c Conn) Dial(ctx context.Context) (client.Client, error) {
	if c.Address == "" {
		return nil, fmt.Errorf("no Temporal address: start `signoff dev` or pass --temporal-address")
	}
	cl, err := temporal.Dial(ctx, c.DialConfig())
	if err != nil {
		return nil, fmt.Errorf("reach Temporal at %s (is `signoff dev` running?): %w", c.Address, err)
	}
	return cl, nil
}
