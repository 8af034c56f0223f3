package contracts

import (
	"fmt"
)

// GenesisHash is the previous hash of the first event in a chain.
const GenesisHash = "0000000000000000000000000000000000000000000000000000000000000000"

// Event is one entry of a contract's hash-chained timeline. Each event's hash covers its
// sequence, type, time, data and the previous hash, so dropping, reordering or editing an
// event breaks every hash after it.
type Event struct {
	Seq      int               `json:"seq"`
	Type     string            `json:"type"`
	At       string            `json:"at"`
	Data     map[string]string `json:"data,omitempty"`
	PrevHash string            `json:"prev_hash"`
	Hash     string            `json:"hash"`
}

// ComputeHash returns the hash of the event's content (everything but Hash).
func (e Event) ComputeHash() (string, error) {
	c, err := CanonicalJSON(struct {
		Seq      int               `json:"seq"`
		Type     string            `json:"type"`
		At       string            `json:"at"`
		Data     map[string]string `json:"data,omitempty"`
		PrevHash string            `json:"prev_hash"`
	}{e.Seq, e.Type, e.At, e.Data, e.PrevHash})
	if err != nil {
		return "", err
	}
	return DigestBytes(c), nil
}

// Chain is an append-only timeline. It holds no clock: callers pass the time (workflow code
// passes workflow.Now), which keeps appends deterministic.
type Chain struct {
	Events []Event `json:"events"`
}

// Head is the hash of the last event, or GenesisHash for an empty chain.
func (c *Chain) Head() string {
	if len(c.Events) == 0 {
		return GenesisHash
	}
	return c.Events[len(c.Events)-1].Hash
}

// Append adds an event and returns it.
func (c *Chain) Append(typ, at string, data map[string]string) (Event, error) {
	ev := Event{Seq: len(c.Events) + 1, Type: typ, At: at, Data: data, PrevHash: c.Head()}
	h, err := ev.ComputeHash()
	if err != nil {
		return Event{}, fmt.Errorf("chain append %s: %w", typ, err)
	}
	ev.Hash = h
	c.Events = append(c.Events, ev)
	return ev, nil
}

// VerifyChain checks sequence numbers, links and hashes, and returns the head.
func VerifyChain(events []Event) (string, error) {
	prev := GenesisHash
	for i, ev := range events {
		if ev.Seq != i+1 {
			return "", fmt.Errorf("event %d: sequence %d, want %d", i, ev.Seq, i+1)
		}
		if ev.PrevHash != prev {
			return "", fmt.Errorf("event %d (%s): previous hash does not link to event %d", ev.Seq, ev.Type, ev.Seq-1)
		}
		h, err := ev.ComputeHash()
		if err != nil {
			return "", err
		}
		if h != ev.Hash {
			return "", fmt.Errorf("event %d (%s): hash does not match its content", ev.Seq, ev.Type)
		}
		prev = ev.Hash
	}
	return prev, nil
}
