package agentverse

import (
	"errors"
	"fmt"
	"strings"

	"github.com/signoff/signoff/chatbridge/chatproto"
)

// Badges the Fetch.ai Innovation Lab asks hackathon agents to show in their Agentverse README.
const (
	InnovationLabBadge = "![tag:innovationlab](https://img.shields.io/badge/innovationlab-3D8BD3)"
	HackathonBadge     = "![tag:hackathon](https://img.shields.io/badge/hackathon-5F43F1)"
)

// MaxReadme is AgentProfile.readme's limit.
const MaxReadme = 80000

// ExternalResource is something the agent needs outside itself, listed so users know what a
// deployment depends on.
type ExternalResource struct {
	Name     string // e.g. "Stripe"
	EnvVar   string // e.g. "STRIPE_SECRET_KEY"; empty when not switched by a variable
	Purpose  string
	Required bool // false: optional, with a local default
}

// ReadmeConfig is what the Agentverse README is rendered from.
type ReadmeConfig struct {
	Name        string
	Address     string
	Tagline     string   // one line under the title
	Description string   // markdown paragraph(s)
	Usage       []string // example prompts, shown as a list
	Resources   []ExternalResource
	RepoURL     string
	Hackathon   bool // add the hackathon badge next to the Innovation Lab one
	// VerifierFingerprint and ControlFingerprint name the keys the agent's proofs are signed
	// with (sha256:<hex> of the raw ed25519 keys), so a user checks a proof against these and
	// not against keys that came with it. Empty: not published yet.
	VerifierFingerprint, ControlFingerprint string
}

// RenderReadme writes the markdown README for the Agentverse profile: name and address, the
// Innovation Lab badge, what it does, how to talk to it, the external resources it needs and
// the protocol it speaks.
func RenderReadme(c ReadmeConfig) (string, error) {
	if c.Name == "" || c.Address == "" {
		return "", errors.New("agentverse: README needs the agent name and address")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", c.Name)
	b.WriteString(InnovationLabBadge + "\n")
	if c.Hackathon {
		b.WriteString(HackathonBadge + "\n")
	}
	b.WriteString("\n")
	if c.Tagline != "" {
		fmt.Fprintf(&b, "**%s**\n\n", c.Tagline)
	}
	fmt.Fprintf(&b, "- **Agent name:** %s\n- **Agent address:** `%s`\n", c.Name, c.Address)
	if c.RepoURL != "" {
		fmt.Fprintf(&b, "- **Source:** %s\n", c.RepoURL)
	}
	b.WriteString("\n")
	if c.Description != "" {
		fmt.Fprintf(&b, "## What it does\n\n%s\n\n", strings.TrimSpace(c.Description))
	}
	if len(c.Usage) > 0 {
		b.WriteString("## How to use\n\nChat with the agent (ASI:One, Agentverse chat, or `signoff chat`). For example:\n\n")
		for _, u := range c.Usage {
			fmt.Fprintf(&b, "- `%s`\n", strings.ReplaceAll(u, "`", "'"))
		}
		b.WriteString("\n")
	}
	b.WriteString("## Required external resources\n\n")
	if len(c.Resources) == 0 {
		b.WriteString("None: everything runs locally.\n\n")
	} else {
		b.WriteString("| Resource | Needed | Configured by | Used for |\n|---|---|---|---|\n")
		for _, r := range c.Resources {
			need := "optional (local default)"
			if r.Required {
				need = "required"
			}
			env := "-"
			if r.EnvVar != "" {
				env = "`" + r.EnvVar + "`"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", cell(r.Name), need, env, cell(r.Purpose))
		}
		b.WriteString("\n")
	}
	b.WriteString("## Verifying its proofs\n\n")
	if c.VerifierFingerprint != "" && c.ControlFingerprint != "" {
		fmt.Fprintf(&b, "Every proof is signed by the verifier key `%s` (evidence) and the control key `%s` (bundles and settlement), sha256 of the raw ed25519 public keys. Check one offline with `signoff proof verify DIR --verifier-fingerprint %s --control-fingerprint %s`: a proof signed by any other key does not verify.\n\n",
			c.VerifierFingerprint, c.ControlFingerprint, c.VerifierFingerprint, c.ControlFingerprint)
	} else {
		b.WriteString("This agent's signing keys are not published yet: do not rely on its proofs until their fingerprints appear here (`signoff keys` on the deployment prints them).\n\n")
	}
	fmt.Fprintf(&b, "## Protocol\n\nSpeaks the Agent Chat Protocol %s (`%s`): every message is acknowledged; replies and progress arrive as separate messages in the same session.\n",
		chatproto.ProtocolVersion, chatproto.ProtocolDigest)
	out := b.String()
	if len(out) > MaxReadme {
		return "", fmt.Errorf("agentverse: README is %d characters, limit %d", len(out), MaxReadme)
	}
	return out, nil
}

func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", "\\|"), "\n", " ")
}
