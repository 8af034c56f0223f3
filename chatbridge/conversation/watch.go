package conversation

import (
	"context"
	"fmt"
	"time"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/workflows/contractapi"
)

// watch follows one bound contract through the status query until it ends, pushing the
// steps the workflow does not announce itself. One watcher per contract; a new binding of
// the same contract (another requester) replaces it.
func (c *Conversation) watch(b Binding) {
	c.mu.Lock()
	if stop, ok := c.watching[b.ContractID]; ok {
		stop()
	}
	ctx, cancel := context.WithCancel(c.ctx)
	c.watching[b.ContractID] = cancel
	c.mu.Unlock()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer cancel()
		c.follow(ctx, b)
	}()
}

func (c *Conversation) follow(ctx context.Context, b Binding) {
	misses := 0
	// A contract that sits still (a quote for days, a long build) is read less often, up to
	// maxPoll; any change brings the interval back to Poll.
	interval, last := c.cfg.Poll, ""
	for {
		st, err := c.queryStatus(ctx, b.ContractID)
		if err == nil {
			if now := fmt.Sprint(st.State, st.Attempt, st.Phase, st.Payment.State); now != last {
				interval, last = c.cfg.Poll, now
			} else {
				interval = min(2*interval, max(maxPoll, c.cfg.Poll))
			}
		}
		switch {
		case err != nil && isNotFound(err):
			misses++
			if misses > 30 {
				c.log.Info("stopped watching a contract whose workflow is gone", "contract", b.ContractID)
				return
			}
		case err != nil:
			c.log.Debug("status query failed", "contract", b.ContractID, "err", err)
		case st.ContractHash != b.Hash || st.Requester != b.Requester:
			return // another quote of the same id took over; its binding has its own watcher
		default:
			misses = 0
			for _, step := range steps(st, c.cfg.PaymentLabel) {
				c.say(ctx, b, step.key, step.text)
			}
			if st.Final {
				if err := c.store.markFinal(b.ContractID, b.Hash); err != nil {
					c.log.Warn("record a contract's end", "contract", b.ContractID, "err", err)
				}
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}

const maxPoll = 5 * time.Second

// say pushes a step once: the store remembers it across restarts, the message id is stable.
func (c *Conversation) say(ctx context.Context, b Binding, key, text string) {
	fresh, err := c.store.markSaid(b.ContractID, b.Hash, key)
	if err != nil || !fresh {
		return
	}
	id := "watch/" + b.ContractID + "/" + b.Hash + "/" + b.Requester + "/" + key
	if err := c.push(ctx, b.Requester, b.Session, id, text); err != nil {
		c.log.Warn("progress not delivered", "contract", b.ContractID, "step", key, "err", err)
	}
}

type step struct{ key, text string }

// Keys of the steps said, kept in the store across restarts.
const (
	stepAuthorized = "authorized"
	stepExpired    = "expired"
	stepCancelled  = "cancelled"
)

// authorizedText announces the authorization, and the first attempt when it is starting.
func authorizedText(st contractapi.Status, label string) string {
	s := "Payment authorized (" + paymentLabel(st.Payment, label) + "): nothing is captured unless the contract is satisfied."
	if st.State == contracts.StateAuthorized || (st.State == contracts.StateBuilding && st.Attempt <= 1) {
		s += fmt.Sprintf(" Attempt 1 of %d starts: cloning %s onto a fresh branch for the executor.", st.MaxAttempts, st.Repo)
	}
	return s
}

// steps are the announcements a status calls for. The workflow's own notices cover the
// payment link, commits, builds, verdicts (which announce the repair that follows) and the
// settlement; these cover the rest.
func steps(st contractapi.Status, label string) []step {
	var out []step
	switch st.State {
	case contracts.StateAuthorized, contracts.StateBuilding, contracts.StateRepairing, contracts.StateVerifying,
		contracts.StateSatisfied, contracts.StateNotSatisfied, contracts.StateVerificationError, contracts.StateAwaitingOperator:
		out = append(out, step{stepAuthorized, authorizedText(st, label)})
	}
	switch {
	case st.State == contracts.StateExpired:
		out = append(out, step{stepExpired, fmt.Sprintf("The quote for %s expired without approval; nothing was authorized.", st.ContractID)})
	case st.Final && st.State == contracts.StateCancelled && st.Payment.CheckoutSessionID == "":
		out = append(out, step{stepCancelled, fmt.Sprintf("Contract %s is cancelled; no payment was authorized.", st.ContractID)})
	}
	return out
}

func paymentLabel(p capability.PaymentState, label string) string {
	if p.Local {
		return label
	}
	if p.Provider != "" {
		return "via " + p.Provider
	}
	return "provider confirmed"
}
