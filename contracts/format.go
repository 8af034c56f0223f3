package contracts

import (
	"fmt"
	"strings"
)

// ShortLen is how many leading hex digits ShortSHA keeps. One length everywhere (chat, CLI,
// proof page, notices, policy reasons) means a commit or contract hash shown in one place
// can be found by eye in another. Twelve digits are 48 bits: no collisions among the commits
// of one repository in practice, and any git command accepts them as an abbreviation.
const ShortLen = 12

// ShortSHA abbreviates a commit SHA or a hash for people to read: its first ShortLen
// characters, or all of it when shorter.
func ShortSHA(s string) string {
	if len(s) > ShortLen {
		return s[:ShortLen]
	}
	return s
}

// String formats the price in major units with the currency in capitals: "49.00 USD".
func (p Price) String() string {
	return fmt.Sprintf("%d.%02d %s", p.Amount/100, p.Amount%100, strings.ToUpper(p.Currency))
}

// Key is the repository's "owner/name": the key of its lock, its index entries and its
// allowlist entry.
func (r Repo) Key() string { return r.Owner + "/" + r.Name }
