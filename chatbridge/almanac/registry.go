package almanac

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/signoff/signoff/chatbridge/chatproto"
	"github.com/signoff/signoff/chatbridge/identity"
)

// Record is what the registry knows about one agent.
type Record struct {
	Address   string
	Prefix    string
	Endpoints []Endpoint
	Protocols []string
	Active    bool
	Expiry    time.Time
	Timestamp int64 // of the accepted attestation; older ones are refused (replay)
}

// Registry is a local stand-in for the Almanac API: it verifies signed attestations and status
// updates and answers look-ups on the same routes (/v1/almanac/...), so uagents peers pointed
// at it (agentverse="http://127.0.0.1:port") and Go agents resolve each other offline.
// Mount it at the server root (or behind http.StripPrefix). Safe for concurrent use.
type Registry struct {
	// Now is the clock (tests); defaults to time.Now.
	Now func() time.Time
	// TTL is how long a registration stays resolvable (the Almanac's expiry); default 48h.
	TTL time.Duration
	// MaxSkew bounds how far an attestation's timestamp may be from Now; default 10 min.
	MaxSkew time.Duration
	// Logger receives one line per refused request; nil discards.
	Logger *slog.Logger
	// File, when set, keeps the registrations across restarts (signed attestations were
	// verified when accepted; the file holds the resulting records), so peers registered
	// with a process that restarts stay resolvable until their registrations expire.
	File string

	mu        sync.Mutex
	records   map[string]*Record
	manifests map[string][]byte
	requests  []string
	mux       *http.ServeMux
	once      sync.Once
}

// ErrUnresolved means no live endpoint is known for the address.
var ErrUnresolved = errors.New("almanac: agent not resolvable")

const maxBody = 256 << 10

func (r *Registry) init() {
	r.once.Do(func() {
		r.records = map[string]*Record{}
		r.manifests = map[string][]byte{}
		m := http.NewServeMux()
		m.HandleFunc("POST /v1/almanac/agents", r.postAgent)
		m.HandleFunc("POST /v1/almanac/agents/batch", r.postBatch)
		m.HandleFunc("GET /v1/almanac/agents/{address}", r.getAgent)
		m.HandleFunc("POST /v1/almanac/agents/{address}/status", r.postStatus)
		m.HandleFunc("POST /v1/almanac/manifests", r.postManifest)
		r.mux = m
		if r.File != "" {
			if b, err := os.ReadFile(r.File); err == nil {
				var recs map[string]*Record
				if json.Unmarshal(b, &recs) == nil {
					for a, rec := range recs {
						if rec != nil && r.now().Before(rec.Expiry) {
							r.records[a] = rec
						}
					}
				}
			}
		}
	})
}

// saveLocked writes the records to File (atomically); r.mu is held.
func (r *Registry) saveLocked() {
	if r.File == "" {
		return
	}
	b, err := json.Marshal(r.records)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(r.File), 0o700)
	}
	if err == nil {
		tmp := r.File + ".tmp"
		if err = os.WriteFile(tmp, b, 0o600); err == nil {
			err = os.Rename(tmp, r.File)
		}
	}
	if err != nil {
		r.log().Warn("almanac registrations not saved", "err", err)
	}
}

func (r *Registry) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Registry) log() *slog.Logger {
	if r.Logger != nil {
		return r.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// ServeHTTP implements the Almanac routes; anything else is 404 {"detail": "Not Found"}.
func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.init()
	r.mu.Lock()
	r.requests = append(r.requests, req.Method+" "+req.URL.Path)
	r.mu.Unlock()
	if _, pattern := r.mux.Handler(req); pattern == "" {
		writeDetail(w, http.StatusNotFound, "Not Found")
		return
	}
	r.mux.ServeHTTP(w, req)
}

// Requests lists "METHOD /path" of every request served, in order (for tests and audits).
func (r *Registry) Requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.requests...)
}

// Register verifies a signed attestation and stores its endpoints.
func (r *Registry) Register(a *Attestation) error {
	r.init()
	if err := a.Verify(); err != nil {
		return err
	}
	if a.Timestamp == nil {
		return errors.New("almanac: attestation timestamp missing")
	}
	if err := r.checkSkew(*a.Timestamp); err != nil {
		return err
	}
	addr := a.Address()
	prefix, _, _ := identity.ParseIdentifier(a.AgentIdentifier)
	if prefix == "" {
		prefix = identity.MainnetPrefix
	}
	ttl := r.TTL
	if ttl == 0 {
		ttl = 48 * time.Hour
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.records[addr]
	if old != nil && *a.Timestamp < old.Timestamp {
		return errors.New("almanac: attestation older than the current registration")
	}
	rec := &Record{
		Address: addr, Prefix: prefix, Active: true,
		Endpoints: append([]Endpoint(nil), a.Endpoints...),
		Protocols: append([]string(nil), a.Protocols...),
		Expiry:    r.now().Add(ttl), Timestamp: *a.Timestamp,
	}
	if old != nil {
		rec.Active = old.Active
	}
	r.records[addr] = rec
	r.saveLocked()
	return nil
}

// SetStatus verifies a signed status update for a registered agent.
func (r *Registry) SetStatus(s *StatusUpdate) error {
	r.init()
	if err := s.Verify(); err != nil {
		return err
	}
	if s.Timestamp == nil {
		return errors.New("almanac: status timestamp missing")
	}
	if err := r.checkSkew(*s.Timestamp); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.records[s.Address()]
	if rec == nil {
		// The real Almanac keeps status for agents registered elsewhere; remember it.
		rec = &Record{Address: s.Address(), Prefix: identity.MainnetPrefix}
		r.records[s.Address()] = rec
	}
	rec.Active = s.IsActive
	r.saveLocked()
	return nil
}

func (r *Registry) checkSkew(ts int64) error {
	skew := r.MaxSkew
	if skew == 0 {
		skew = 10 * time.Minute
	}
	d := r.now().Sub(time.Unix(ts, 0))
	if d > skew || d < -skew {
		return fmt.Errorf("almanac: timestamp %d outside the accepted window", ts)
	}
	return nil
}

// Lookup returns a copy of the record for address.
func (r *Registry) Lookup(address string) (Record, bool) {
	r.init()
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, ok := r.records[address]
	if !ok {
		return Record{}, false
	}
	c := *rec
	c.Endpoints = append([]Endpoint(nil), rec.Endpoints...)
	c.Protocols = append([]string(nil), rec.Protocols...)
	return c, true
}

// Resolve returns the agent's endpoint URLs in weighted random order (transport.Resolver).
func (r *Registry) Resolve(_ context.Context, address string) ([]string, error) {
	rec, ok := r.Lookup(address)
	if !ok || len(rec.Endpoints) == 0 || r.now().After(rec.Expiry) {
		return nil, fmt.Errorf("%w: %s", ErrUnresolved, address)
	}
	return weightedOrder(rec.Endpoints), nil
}

// Manifest returns a published protocol manifest by digest.
func (r *Registry) Manifest(digest string) ([]byte, bool) {
	r.init()
	r.mu.Lock()
	defer r.mu.Unlock()
	m, ok := r.manifests[digest]
	return m, ok
}

func (r *Registry) postAgent(w http.ResponseWriter, req *http.Request) {
	body, ok := readBody(w, req)
	if !ok {
		return
	}
	a, err := decodeAttestation(body)
	if err == nil {
		err = r.Register(a)
	}
	r.reply(w, err)
}

func (r *Registry) postBatch(w http.ResponseWriter, req *http.Request) {
	body, ok := readBody(w, req)
	if !ok {
		return
	}
	var batch struct {
		Attestations []json.RawMessage `json:"attestations"`
	}
	if err := json.Unmarshal(body, &batch); err != nil {
		r.reply(w, fmt.Errorf("almanac: batch: %w", err))
		return
	}
	for _, raw := range batch.Attestations {
		a, err := decodeAttestation(raw)
		if err == nil {
			err = r.Register(a)
		}
		if err != nil {
			r.reply(w, err)
			return
		}
	}
	r.reply(w, nil)
}

func (r *Registry) postStatus(w http.ResponseWriter, req *http.Request) {
	body, ok := readBody(w, req)
	if !ok {
		return
	}
	s, err := decodeStatus(body)
	if err == nil && s.Address() != req.PathValue("address") {
		err = errors.New("almanac: status address does not match the path")
	}
	if err == nil {
		err = r.SetStatus(s)
	}
	r.reply(w, err)
}

func (r *Registry) postManifest(w http.ResponseWriter, req *http.Request) {
	body, ok := readBody(w, req)
	if !ok {
		return
	}
	var m struct {
		Metadata struct {
			Digest string `json:"digest"`
		} `json:"metadata"`
	}
	err := json.Unmarshal(body, &m)
	if err == nil {
		var digest string
		digest, _, err = chatproto.ComputeProtocolDigest(body)
		if err == nil && digest != m.Metadata.Digest {
			err = fmt.Errorf("almanac: manifest digest %s does not match its content (%s)", m.Metadata.Digest, digest)
		}
	}
	if err == nil {
		r.mu.Lock()
		r.manifests[m.Metadata.Digest] = body
		r.mu.Unlock()
	}
	r.reply(w, err)
}

// getAgent answers like GET /v1/almanac/agents/{address}: endpoints plus a non-null expiry
// (the uagents resolver treats a null expiry as unresolved).
func (r *Registry) getAgent(w http.ResponseWriter, req *http.Request) {
	rec, ok := r.Lookup(req.PathValue("address"))
	if !ok || (req.URL.Query().Get("prefix") != "" && req.URL.Query().Get("prefix") != rec.Prefix) {
		writeDetail(w, http.StatusNotFound, "Agent not found")
		return
	}
	status := "inactive"
	if rec.Active {
		status = "active"
	}
	var expiry any
	if !rec.Expiry.IsZero() {
		expiry = rec.Expiry.UTC().Format(time.RFC3339)
	}
	eps := rec.Endpoints
	if eps == nil {
		eps = []Endpoint{}
	}
	protos := rec.Protocols
	if protos == nil {
		protos = []string{}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"status": status, "type": "uagent", "address": rec.Address, "prefix": rec.Prefix,
		"domain_name": nil, "endpoints": eps, "protocols": protos, "expiry": expiry,
	})
}

func (r *Registry) reply(w http.ResponseWriter, err error) {
	if err != nil {
		r.log().Warn("almanac request refused", "err", err)
		writeDetail(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{})
}

func readBody(w http.ResponseWriter, req *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxBody))
	if err != nil {
		writeDetail(w, http.StatusRequestEntityTooLarge, "request body too large")
		return nil, false
	}
	return body, true
}

func writeDetail(w http.ResponseWriter, status int, detail string) {
	writeJSON(w, status, map[string]string{"detail": detail})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
