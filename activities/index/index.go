// Package index is the contract index: id, repo, state, verdict and proof location of every
// contract, in a file that outlives Temporal's history retention.
package index

import (
	"sort"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/activities/jsonfile"
)

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

// Put inserts or replaces the entry for its contract.
func (x *Index) Put(e activities.IndexEntry) error {
	return x.locked(func(m map[string]activities.IndexEntry) (bool, error) {
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
