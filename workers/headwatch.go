package workers

import (
	"context"
	"log/slog"
	"time"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/index"
	"github.com/signoff/signoff/internal/localgit"
	"github.com/signoff/signoff/workflows/contractapi"
	"github.com/signoff/signoff/workflows/contractclient"
)

// DefaultHeadWatchEvery is how often HeadWatch re-reads the watched branches.
const DefaultHeadWatchEvery = 2 * time.Second

// HeadWatch is the local deliverable's stand-in for GitHub's pull_request webhook. Every few
// seconds it re-reads, on the bare remote, the branch of each contract the index lists as
// merge-eligible; when the head is not the commit Signoff published (someone pushed to
// signoff/<contract>), it signals pr_head_changed. It lives outside the workflow, like the
// webhook it replaces, so workflow code and recorded histories stay as they are; and the
// workflow re-reads the head itself before revoking, so the signal is only a nudge.
type HeadWatch struct {
	Signal contractclient.Signals
	Index  *index.Index
	PRs    *localgit.Deliverer
	Every  time.Duration
	Log    *slog.Logger

	signalled map[string]string // contract -> head already signalled
}

// Run checks until ctx ends.
func (w *HeadWatch) Run(ctx context.Context) {
	every := w.Every
	if every <= 0 {
		every = DefaultHeadWatchEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if _, err := w.Check(ctx); err != nil && ctx.Err() == nil {
			w.log().Warn("PR head watch", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Check looks once and returns how many workflows it signalled.
func (w *HeadWatch) Check(ctx context.Context) (int, error) {
	entries, err := w.Index.List()
	if err != nil {
		return 0, err
	}
	if w.signalled == nil {
		w.signalled = map[string]string{}
	}
	n := 0
	for _, e := range entries {
		if e.State != contracts.StateMergeEligible || e.WorkflowID == "" {
			continue
		}
		pr, err := w.PRs.Record(e.ContractID)
		if err != nil || pr.Remote == "" || pr.Branch == "" || pr.Head == "" {
			continue // nothing published on the bare remote (GitHub, or an older data dir)
		}
		head, err := localgit.Head(ctx, pr.Remote, pr.Branch)
		if err != nil {
			w.log().Warn("PR head unreadable", "contract", e.ContractID, "branch", pr.Branch, "error", err)
			continue
		}
		if head == pr.Head || w.signalled[e.ContractID] == head {
			continue
		}
		err = w.Signal.PRHeadChanged(ctx, e.ContractID, contractapi.PRHeadChanged{SHA: head, Source: "local-remote-watch"})
		if err != nil {
			w.log().Warn("pr_head_changed not delivered", "contract", e.ContractID, "error", err)
			continue
		}
		w.signalled[e.ContractID] = head
		w.log().Info("PR head moved after verification; workflow told", "contract", e.ContractID, "head", head, "published", pr.Head)
		n++
	}
	return n, nil
}

func (w *HeadWatch) log() *slog.Logger {
	if w.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return w.Log
}
