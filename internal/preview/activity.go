package preview

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/localgit"
	"github.com/signoff/signoff/internal/sentrygate"
)

// Previews adapts the Launcher to the execute queue's activities: the commit comes from the
// repository's bare remote, each contract reuses a slot of its own across its attempts
// (incremental rebuilds), and a failed install/build/lint/test is a build result, not an
// error.
type Previews struct {
	Launcher *Launcher
	Remotes  localgit.Remotes
	// BaseLinger is how long a base commit's preview stays up after its last base check
	// stopped it, for the next quote of the same tree; 0 stops it at once.
	BaseLinger time.Duration

	mu         sync.Mutex
	jobs       map[string]*Job
	bases      map[string]*baseShare // tree key -> its one base build
	baseRefs   map[string]string     // preview id handed to a base check -> tree key
	nextRef    int
	baseBuilds atomic.Int64
}

// Start builds and runs the app at the requested commit. A base check (attempt 0) shares
// the build of its tree with every other base check of it (baseShare).
func (p *Previews) Start(ctx context.Context, req capability.PreviewRequest) (capability.PreviewResult, error) {
	if req.Attempt == 0 {
		return p.startBase(ctx, req)
	}
	return p.start(ctx, req)
}

func (p *Previews) start(ctx context.Context, req capability.PreviewRequest) (capability.PreviewResult, error) {
	repo, err := p.Remotes.Path(req.Repo.Owner, req.Repo.Name)
	if err != nil {
		return capability.PreviewResult{}, capability.Refused(err)
	}
	// Build state is per contract: what one contract's code wrote in node_modules or .next
	// (a planted file, Next.js's signing keys) is never read by another's. A contract's
	// attempts share its slot; its base check (attempt 0: the base and its lazy variants,
	// which take no lock) has another, and a one-off folder when a retried check still
	// holds it.
	// An attempt's lint and test may fail only as the contract records they fail on the base;
	// the base check records what fails there, for the quote to name.
	opts := Options{Slot: slotFor(req), AppDir: req.Stack.AppDir, PackageManager: req.Stack.PackageManager, PackageManagerVersion: req.Stack.PackageManagerVersion,
		Release: sentrygate.Release(req.ContractID, req.Attempt), Environment: sentrygate.Environment(req.ContractID),
		Preexisting: req.Stack.Preexisting, BaseCheck: req.Attempt == 0, Env: req.Stack.Env, Services: req.Stack.Services}
	job, err := p.Launcher.Prepare(ctx, repo, req.CommitSHA, opts)
	if errors.Is(err, ErrSlotBusy) && req.Attempt == 0 {
		opts.Slot = ""
		job, err = p.Launcher.Prepare(ctx, repo, req.CommitSHA, opts)
	}
	var bf *BuildFailedError
	var ie *InputError
	switch {
	case errors.As(err, &bf) && job != nil:
		return capability.PreviewResult{PreviewID: p.keep(job), Build: job.Result()}, nil
	case errors.As(err, &ie):
		return capability.PreviewResult{}, capability.Refused(err)
	case err != nil:
		if job != nil {
			_ = p.Launcher.Stop(job)
		}
		return capability.PreviewResult{}, err
	}
	return capability.PreviewResult{PreviewID: p.keep(job), URL: job.URL, Build: job.Result()}, nil
}

// Stop stops a preview by its recorded PID.
func (p *Previews) Stop(ctx context.Context, id string) error {
	if p.releaseBase(id) {
		return nil
	}
	return p.stopJob(id)
}

func (p *Previews) stopJob(id string) error {
	p.mu.Lock()
	job := p.jobs[id]
	delete(p.jobs, id)
	p.mu.Unlock()
	if job == nil {
		return nil // already stopped, or a restarted worker whose Sweep took care of it
	}
	return p.Launcher.Stop(job)
}

func (p *Previews) keep(job *Job) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.jobs == nil {
		p.jobs = map[string]*Job{}
	}
	p.jobs[job.ID] = job
	return job.ID
}

// slotFor is the slot of a request, a name the Launcher accepts ([a-z0-9-], up to 32): one per
// contract for its attempts ("c-") and one for its base check ("b-"), named by a digest of
// the contract id so that no id can pick another's.
func slotFor(req capability.PreviewRequest) string {
	sum := sha256.Sum256([]byte(req.ContractID))
	kind := "c-"
	if req.Attempt == 0 {
		kind = "b-"
	}
	return kind + hex.EncodeToString(sum[:12])
}
