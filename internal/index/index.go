// Package index is the contract index: id, repo, state, verdict and proof location of every
// contract, in a file that outlives Temporal's history retention.
package index

import (
	"sort"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/internal/jsonfile"
	"github.com/signoff/signoff/workflows"
)

// settled are the states a contract ends in: its payment was captured (and its PR merge
// eligible, until a push revokes that) or cancelled, or it never got one. The index never
// moves a contract out of them.
var settled = map[string]bool{
	workflows.StateMergeEligible:    true,
	workflows.StatePaymentCaptured:  true,
	workflows.StatePaymentCancelled: true,
	workflows.StateCancelled:        true,
	workflows.StateExpired:          true,
}

// Settled reports whether state is one a contract ends in.
func Settled(state string) bool { return settled[state] }

// Index is a file-backed index; every operation holds an exclusive lock on it.
type Index struct {
	path string
}

// Open returns the index stored at path.
func Open(path string) *Index { return &Index{path: path} }

func (x *Index) locked(fn func(m map[string]activities.IndexEntry) (bool, error)) error {
	return jsonfile.Update(x.path, func(m *map[string]activities.IndexEntry) (bool, error) {
		if *m == nil {
			*m = map[string]activities.IndexEntry{}
		}
		return fn(*m)
	})
}

// Put inserts or replaces the entry for its contract. A settled entry is only replaced by
// another settled one of the same contract hash (a revoked merge eligibility, say): an
// update that would move it backwards (a second workflow over the same id starting in
// "quoted") is dropped.
func (x *Index) Put(e activities.IndexEntry) error {
	return x.locked(func(m map[string]activities.IndexEntry) (bool, error) {
		if old, ok := m[e.ContractID]; ok && settled[old.State] && (!settled[e.State] || old.ContractHash != e.ContractHash) {
			return false, nil
		}
		m[e.ContractID] = e
		return true, nil
	})
}

// Get returns one contract's entry.
func (x *Index) Get(contractID string) (activities.IndexEntry, bool, error) {
	var e activities.IndexEntry
	var ok bool
	err := x.locked(func(m map[string]activities.IndexEntry) (bool, error) {
		e, ok = m[contractID]
		return false, nil
	})
	return e, ok, err
}

// List returns every entry, most recently updated first.
func (x *Index) List() ([]activities.IndexEntry, error) {
	var out []activities.IndexEntry
	err := x.locked(func(m map[string]activities.IndexEntry) (bool, error) {
		for _, e := range m {
			out = append(out, e)
		}
		return false, nil
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].UpdatedAt != out[j].UpdatedAt {
			return out[i].UpdatedAt > out[j].UpdatedAt
		}
		return out[i].ContractID < out[j].ContractID
	})
	return out, err
}
