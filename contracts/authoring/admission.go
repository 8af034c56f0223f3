package authoring

import (
	"fmt"
	"path"
	"strings"
	"sync"
	"time"
)

// Admission decides whether a request is served at all, before any survey reads the
// repository: the repository must match the allowlist and the requester must be within the
// rate limit. It is safe for concurrent use; the rate window lives in memory, so a long-lived
// process (the chat bridge) enforces it across requests.
type Admission struct {
	// Allow holds owner/name patterns in path.Match syntax ("acme/*", "acme/shop"). An empty
	// list admits nothing.
	Allow []string
	// Limit is the number of requests a requester may make per Window; 0 means no limit.
	Limit  int
	Window time.Duration
	// Now is the clock (tests); nil is time.Now.
	Now func() time.Time

	mu   sync.Mutex
	seen map[string][]time.Time
}

// CheckPatterns reports the first malformed allowlist pattern.
func CheckPatterns(patterns []string) error {
	for _, p := range patterns {
		if strings.Count(p, "/") != 1 {
			return &InputError{Field: "allow", Reason: fmt.Sprintf("pattern %q must be owner/name (wildcards allowed)", p)}
		}
		if _, err := path.Match(p, "x/y"); err != nil {
			return &InputError{Field: "allow", Reason: fmt.Sprintf("pattern %q: %v", p, err)}
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
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.seen == nil {
		a.seen = map[string][]time.Time{}
	}
	var recent []time.Time
	for _, s := range a.seen[requester] {
		if t.Sub(s) < a.Window {
			recent = append(recent, s)
		}
	}
	if len(recent) >= a.Limit {
		a.seen[requester] = recent
		retry := a.Window - t.Sub(recent[0])
		return &AdmissionError{Code: AdmitRateLimited, Repo: repo, Requester: requester, RetryAfter: retry,
			Reason: fmt.Sprintf("%s made %d requests in the last %s (limit %d); retry in %s", requester, len(recent), a.Window, a.Limit, retry.Round(time.Second))}
	}
	a.seen[requester] = append(recent, t)
	return nil
}
