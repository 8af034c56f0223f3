package authoring

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/signoff/signoff/authoring/refusal"
)

// RateStore keeps the per-requester rate window. Take must be atomic with respect to every
// other Take on the same store (across processes, for a shared store): it drops the
// requester's stamps older than window and, if fewer than limit remain, records now and
// returns ok. Otherwise it records nothing and returns ok=false with the remaining stamps,
// oldest first, so the caller can say when a slot frees up. A limit of 0 or less admits
// without recording.
type RateStore interface {
	Take(requester string, now time.Time, limit int, window time.Duration) (recent []time.Time, ok bool, err error)
}

// MemoryRates is a RateStore held in memory: it enforces the limit only within one process,
// which is enough for a long-lived one (the chat bridge). The zero value is ready to use and
// safe for concurrent use.
type MemoryRates struct {
	mu   sync.Mutex
	seen map[string][]time.Time
}

// Take implements RateStore.
func (m *MemoryRates) Take(requester string, now time.Time, limit int, window time.Duration) ([]time.Time, bool, error) {
	if limit <= 0 {
		return nil, true, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen == nil {
		m.seen = map[string][]time.Time{}
	}
	// Forget everyone whose window has passed, so the map does not grow with every requester
	// ever seen.
	for r, stamps := range m.seen {
		if r != requester {
			if live := within(stamps, now, window); len(live) == 0 {
				delete(m.seen, r)
			}
		}
	}
	recent := within(m.seen[requester], now, window)
	if len(recent) >= limit {
		m.seen[requester] = recent
		return slices.Clone(recent), false, nil
	}
	recent = append(recent, now)
	slices.SortFunc(recent, time.Time.Compare)
	m.seen[requester] = recent
	return slices.Clone(m.seen[requester]), true, nil
}

// within returns the stamps still inside the window ending at now, oldest first. A stamp
// from the future (a clock set back) still counts: refusing is the safe side.
func within(stamps []time.Time, now time.Time, window time.Duration) []time.Time {
	var live []time.Time
	for _, s := range stamps {
		if now.Sub(s) < window {
			live = append(live, s)
		}
	}
	slices.SortFunc(live, time.Time.Compare)
	return live
}

// Admission decides whether a request is served at all, before any survey reads the
// repository: the repository must match the allowlist and the requester must be within the
// rate limit. It is safe for concurrent use. The rate window lives in Store; without one it
// lives in memory, which a long-lived process (the chat bridge) enforces across requests but
// a one-process-per-request CLI never does (give it a FileRates).
type Admission struct {
	// Allow holds owner/name patterns in path.Match syntax ("acme/*", "acme/shop"). An empty
	// list admits nothing.
	Allow []string
	// Limit is the number of requests a requester may make per Window; 0 means no limit.
	Limit  int
	Window time.Duration
	// Now is the clock (tests); nil is time.Now.
	Now func() time.Time
	// Store keeps the rate window; nil is a MemoryRates private to this Admission.
	Store RateStore

	mem MemoryRates
}

// CheckPatterns reports the first malformed allowlist pattern.
func CheckPatterns(patterns []string) error {
	for _, p := range patterns {
		if strings.Count(p, "/") != 1 {
			return &refusal.InputError{Field: "allow", Reason: fmt.Sprintf("pattern %q must be owner/name (wildcards allowed)", p)}
		}
		if _, err := path.Match(p, "x/y"); err != nil {
			return &refusal.InputError{Field: "allow", Reason: fmt.Sprintf("pattern %q: %v", p, err)}
		}
	}
	return nil
}

// Allows reports whether owner/name matches a pattern.
func (a *Admission) Allows(owner, name string) bool {
	for _, p := range a.Allow {
		if ok, err := path.Match(p, owner+"/"+name); err == nil && ok {
			return true
		}
	}
	return false
}

// Admit checks the allowlist, then counts the request against the requester's limit. A
// refused request is not counted.
func (a *Admission) Admit(requester, owner, name string) error {
	repo := owner + "/" + name
	if !a.Allows(owner, name) {
		allowed := "none"
		if len(a.Allow) > 0 {
			allowed = strings.Join(a.Allow, ", ")
		}
		return &AdmissionError{Code: AdmitNotAllowed, Repo: repo, Requester: requester,
			Reason: fmt.Sprintf("%s is not on the repository allowlist (%s)", repo, allowed)}
	}
	if a.Limit <= 0 {
		return nil
	}
	if strings.TrimSpace(requester) == "" {
		return &AdmissionError{Code: AdmitRateLimited, Repo: repo, Reason: "requests are rate limited per requester, and none was named"}
	}
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	t := now()
	store := a.Store
	if store == nil {
		store = &a.mem
	}
	recent, ok, err := store.Take(requester, t, a.Limit, a.Window)
	if err != nil {
		// Fail closed: a limit that cannot be checked does not admit.
		return fmt.Errorf("admission: rate limit of %q: %w", requester, err)
	}
	if ok {
		return nil
	}
	if len(recent) == 0 {
		return fmt.Errorf("admission: rate limit of %q: store refused without naming a recent request", requester)
	}
	retry := a.Window - t.Sub(recent[0])
	return &AdmissionError{Code: AdmitRateLimited, Repo: repo, Requester: requester, RetryAfter: retry,
		Reason: fmt.Sprintf("%s made %d requests in the last %s (limit %d); retry in %s", requester, len(recent), a.Window, a.Limit, retry.Round(time.Second))}
}
