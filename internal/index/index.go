// Package index is the contract index: id, repo, state, verdict and proof location of every
// contract, in a file that outlives Temporal's history retention.
package index

import (
	"sort"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/jsonfile"
)

// Index is a file-backed index; every operation holds an exclusive lock on it.
type Index struct {
	path string
}

// Open returns the index stored at path.
func Open(path string) *Index { return &Index{path: path} }

func (x *Index) locked(fn func(m map[string]capability.IndexEntry) (bool, error)) error {
	return jsonfile.Update(x.path, func(m *map[string]capability.IndexEntry) (bool, error) {
		if *m == nil {
			*m = map[string]capability.IndexEntry{}
		}
		return fn(*m)
	})
}

// Put inserts or replaces the entry for its contract. A settled entry is only replaced by
// another settled one of the same contract hash (a revoked merge eligibility, say): an
// update that would move it backwards (a second workflow over the same id starting in
// "quoted") is dropped.
func (x *Index) Put(e capability.IndexEntry) error {
	return x.locked(func(m map[string]capability.IndexEntry) (bool, error) {
		if old, ok := m[e.ContractID]; ok && contracts.Settled(old.State) && (!contracts.Settled(e.State) || old.ContractHash != e.ContractHash) {
			return false, nil
		}
		m[e.ContractID] = e
		return true, nil
	})
}

// Get returns one contract's entry.
func (x *Index) Get(contractID string) (capability.IndexEntry, bool, error) {
	var e capability.IndexEntry
	var ok bool
	err := x.locked(func(m map[string]capability.IndexEntry) (bool, error) {
		e, ok = m[contractID]
		return false, nil
	})
	return e, ok, err
}

// List returns every entry, most recently updated first.
func (x *Index) List() ([]capability.IndexEntry, error) {
	var out []capability.IndexEntry
	err := x.locked(func(m map[string]capability.IndexEntry) (bool, error) {
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
