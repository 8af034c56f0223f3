package workers

import (
	"path/filepath"
	"time"

	"github.com/signoff/signoff/authoring"
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/internal/verify"
)

// AuthorOptions are what differs between the places that quote: `contract new` and chat.
type AuthorOptions struct {
	DataDir string
	// Allow is the repository allowlist; Limit the quotes per requester per hour.
	Allow []string
	Limit int
	// Checker runs the draft's criteria on the base commit; nil skips the base check.
	Checker authoring.BaseChecker
	// ReadToken clones a private repository read-only (SIGNOFF_REPO_READ_TOKEN).
	ReadToken string
	// Now is the clock for quote expiry; nil is the wall clock.
	Now func() time.Time
}

// NewAuthor is the one Author every quote is drafted by: its rate window and clones live in
// the data dir, and its contracts are frozen against this build's verifier.
func NewAuthor(o AuthorOptions) *authoring.Author {
	return &authoring.Author{
		Admission: &authoring.Admission{Allow: o.Allow, Limit: o.Limit, Window: time.Hour,
			Store: authoring.FileRates{Path: datadir.Paths(o.DataDir).Rates}},
		Checker:   o.Checker,
		Verifier:  verify.Ref(),
		CloneDir:  filepath.Join(o.DataDir, "authoring", "clones"),
		ReadToken: o.ReadToken,
		Now:       o.Now,
	}
}
