package chatbridge

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// journal remembers which inbound messages were accepted and which were handled, in a file
// that outlives the process. It is what makes dedupe survive a restart (a replayed envelope
// is recognised by its key) and what makes an accepted message survive one: a message the
// sender was told 200 for, but whose handling had not finished when the process died, is
// handed to the Conversation again on the next start (its handlers are idempotent by message
// id). An empty path keeps the journal in memory.
//
// The file is append-only JSON lines, rewritten without the expired entries when opened.
type journal struct {
	path string
	ttl  time.Duration
	max  int

	mu      sync.Mutex
	f       *os.File
	entries map[string]*journalEntry
	order   []string // keys in acceptance order, for eviction; stale keys are skipped
}

type journalEntry struct {
	at      time.Time
	raw     []byte // the accepted envelope, until handled
	handled bool
}

// journalLine is one line of the file: an acceptance (with the envelope) or a completion.
type journalLine struct {
	Key      string          `json:"k"`
	At       int64           `json:"t,omitempty"` // unix nanoseconds of acceptance
	Envelope json.RawMessage `json:"env,omitempty"`
	Handled  bool            `json:"done,omitempty"`
}

func openJournal(path string, ttl time.Duration, max int, now time.Time) (*journal, error) {
	j := &journal{path: path, ttl: ttl, max: max, entries: map[string]*journalEntry{}}
	if path == "" {
		return j, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if f, err := os.Open(path); err == nil {
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			var l journalLine
			if json.Unmarshal(sc.Bytes(), &l) != nil || l.Key == "" {
				continue // a line torn by a crash mid-write
			}
			if l.Handled {
				if e := j.entries[l.Key]; e != nil {
					e.handled, e.raw = true, nil
				}
				continue
			}
			at := time.Unix(0, l.At)
			if now.Sub(at) >= ttl {
				continue
			}
			if _, ok := j.entries[l.Key]; !ok {
				j.order = append(j.order, l.Key)
			}
			j.entries[l.Key] = &journalEntry{at: at, raw: l.Envelope}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err := j.rewrite(); err != nil {
		return nil, err
	}
	return j, nil
}

// rewrite writes the live entries to a fresh file and reopens it for appending.
func (j *journal) rewrite() error {
	tmp := j.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, k := range j.order {
		e := j.entries[k]
		if e == nil {
			continue
		}
		if err := enc.Encode(journalLine{Key: k, At: e.at.UnixNano(), Envelope: e.raw}); err != nil {
			f.Close()
			return err
		}
		if e.handled {
			if err := enc.Encode(journalLine{Key: k, Handled: true}); err != nil {
				f.Close()
				return err
			}
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, j.path); err != nil {
		return err
	}
	j.f, err = os.OpenFile(j.path, os.O_APPEND|os.O_WRONLY, 0o600)
	return err
}

func (j *journal) append(l journalLine) error {
	if j.f == nil {
		return nil
	}
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	if _, err := j.f.Write(append(b, '\n')); err != nil {
		return err
	}
	return j.f.Sync()
}

// accept records key with its envelope and reports whether it is new. A key seen within the
// TTL is a duplicate, whether or not its handling finished.
func (j *journal) accept(key string, raw []byte, now time.Time) (bool, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.evict(now)
	if e := j.entries[key]; e != nil && now.Sub(e.at) < j.ttl {
		return false, nil
	}
	if err := j.append(journalLine{Key: key, At: now.UnixNano(), Envelope: raw}); err != nil {
		return false, fmt.Errorf("chatbridge: journal: %w", err)
	}
	j.entries[key] = &journalEntry{at: now, raw: raw}
	j.order = append(j.order, key)
	return true, nil
}

// handled records that key's message was handled; it is not handed over again after a restart.
func (j *journal) handled(key string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	e := j.entries[key]
	if e == nil || e.handled {
		return
	}
	e.handled, e.raw = true, nil
	_ = j.append(journalLine{Key: key, Handled: true}) // at worst the message is handled again
}

// forget drops key (its message could not be queued, so the sender's retry is not a duplicate).
func (j *journal) forget(key string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.entries[key] == nil {
		return
	}
	delete(j.entries, key)
	_ = j.append(journalLine{Key: key, Handled: true})
}

// pending returns the envelopes accepted but not handled, oldest first.
func (j *journal) pending() [][]byte {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out [][]byte
	seen := map[string]bool{}
	for _, k := range j.order {
		if e := j.entries[k]; e != nil && !e.handled && len(e.raw) > 0 && !seen[k] {
			seen[k] = true
			out = append(out, e.raw)
		}
	}
	return out
}

func (j *journal) evict(now time.Time) {
	for len(j.order) > 0 {
		k := j.order[0]
		e := j.entries[k]
		if e != nil && now.Sub(e.at) < j.ttl && len(j.entries) < j.max {
			break
		}
		if e != nil && (e.handled || now.Sub(e.at) >= j.ttl) {
			delete(j.entries, k)
		} else if e != nil {
			break // over the size bound but not handled yet: keep it
		}
		j.order = j.order[1:]
	}
}

func (j *journal) close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	return err
}
