package conversation

import (
	"sort"
	"sync"
	"time"

	"github.com/signoff/signoff/internal/jsonfile"
)

// Binding ties a contract to the chat conversation that asked for it: progress about the
// contract goes to Requester in Session.
type Binding struct {
	ContractID string `json:"contract_id"`
	Hash       string `json:"contract_hash"`
	Requester  string `json:"requester"` // agent1... address, verified by the bridge
	Session    string `json:"session"`
	Run        string `json:"run,omitempty"` // prepared run name, when bound with "run W1"
	Repo       string `json:"repo"`
	Goal       string `json:"goal"`
	Price      string `json:"price"` // as shown in the quote
	BoundAt    string `json:"bound_at"`
	// Said lists the progress steps already pushed (the watcher's), so a restart does not
	// repeat them.
	Said  []string `json:"said,omitempty"`
	Final bool     `json:"final,omitempty"`
}

func (b *Binding) said(step string) bool {
	for _, s := range b.Said {
		if s == step {
			return true
		}
	}
	return false
}

// sessionState is one chat session's pointer to the contract its commands act on.
type sessionState struct {
	Sender    string `json:"sender"`
	Session   string `json:"session"`
	Current   string `json:"current"`
	UpdatedAt string `json:"updated_at"`
}

// stateFile is the JSON file behind the store.
type stateFile struct {
	Sessions  map[string]*sessionState `json:"sessions"`
	Contracts map[string]*Binding      `json:"contracts"`
	// Latest is each sender's most recently bound contract: the fallback when a new session
	// (a new ASI:One chat, another `signoff chat`) names no contract.
	Latest map[string]string `json:"latest"`
}

// store keeps the session-to-contract map in a file (jsonfile: locked, atomic), so a restarted
// process still knows where each contract's progress goes. An empty path keeps it in memory.
type store struct {
	path string
	now  func() time.Time

	mu  sync.Mutex
	mem stateFile
}

func sessionKey(sender, session string) string { return sender + "|" + session }

func (s *store) update(fn func(f *stateFile) (bool, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	init := func(f *stateFile) {
		if f.Sessions == nil {
			f.Sessions = map[string]*sessionState{}
		}
		if f.Contracts == nil {
			f.Contracts = map[string]*Binding{}
		}
		if f.Latest == nil {
			f.Latest = map[string]string{}
		}
	}
	if s.path == "" {
		init(&s.mem)
		_, err := fn(&s.mem)
		return err
	}
	return jsonfile.Update(s.path, func(f *stateFile) (bool, error) {
		init(f)
		return fn(f)
	})
}

// bind records b as the session's current contract (replacing an older binding of the same
// contract: the newest requester gets its progress).
func (s *store) bind(b Binding) error {
	return s.update(func(f *stateFile) (bool, error) {
		if old := f.Contracts[b.ContractID]; old != nil && old.Hash == b.Hash && old.Requester == b.Requester {
			b.Said, b.Final = old.Said, old.Final
		}
		b.BoundAt = s.now().UTC().Format(time.RFC3339)
		f.Contracts[b.ContractID] = &b
		f.Sessions[sessionKey(b.Requester, b.Session)] = &sessionState{Sender: b.Requester, Session: b.Session,
			Current: b.ContractID, UpdatedAt: b.BoundAt}
		f.Latest[b.Requester] = b.ContractID
		return true, nil
	})
}

// current is the contract a session's commands act on: its own, else the sender's latest.
func (s *store) current(sender, session string) (Binding, bool, error) {
	var out Binding
	var ok bool
	err := s.update(func(f *stateFile) (bool, error) {
		id := ""
		if st := f.Sessions[sessionKey(sender, session)]; st != nil {
			id = st.Current
		} else {
			id = f.Latest[sender]
		}
		if b := f.Contracts[id]; b != nil {
			out, ok = *b, true
		}
		return false, nil
	})
	return out, ok, err
}

// get returns the binding of a contract.
func (s *store) get(contractID string) (Binding, bool, error) {
	var out Binding
	var ok bool
	err := s.update(func(f *stateFile) (bool, error) {
		if b := f.Contracts[contractID]; b != nil {
			out, ok = *b, true
		}
		return false, nil
	})
	return out, ok, err
}

// byHash finds the contracts quoted with hash (normally one).
func (s *store) byHash(hash string) ([]Binding, error) {
	var out []Binding
	err := s.update(func(f *stateFile) (bool, error) {
		for _, b := range f.Contracts {
			if b.Hash == hash {
				out = append(out, *b)
			}
		}
		return false, nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].BoundAt > out[j].BoundAt })
	return out, err
}

// active lists the bindings whose contracts have not ended.
func (s *store) active() ([]Binding, error) {
	var out []Binding
	err := s.update(func(f *stateFile) (bool, error) {
		for _, b := range f.Contracts {
			if !b.Final {
				out = append(out, *b)
			}
		}
		return false, nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].ContractID < out[j].ContractID })
	return out, err
}

// markSaid records a pushed step; it reports false when the step was already recorded.
func (s *store) markSaid(contractID, hash, step string) (bool, error) {
	fresh := false
	err := s.update(func(f *stateFile) (bool, error) {
		b := f.Contracts[contractID]
		if b == nil || b.Hash != hash || b.said(step) {
			return false, nil
		}
		b.Said = append(b.Said, step)
		fresh = true
		return true, nil
	})
	return fresh, err
}

// markFinal records that the contract ended.
func (s *store) markFinal(contractID, hash string) error {
	return s.update(func(f *stateFile) (bool, error) {
		b := f.Contracts[contractID]
		if b == nil || b.Hash != hash || b.Final {
			return false, nil
		}
		b.Final = true
		return true, nil
	})
}

// unsay forgets a step recorded by markSaid that was not said after all.
func (s *store) unsay(contractID, hash, step string) error {
	return s.update(func(f *stateFile) (bool, error) {
		b := f.Contracts[contractID]
		if b == nil || b.Hash != hash {
			return false, nil
		}
		for i, x := range b.Said {
			if x == step {
				b.Said = append(b.Said[:i], b.Said[i+1:]...)
				return true, nil
			}
		}
		return false, nil
	})
}
