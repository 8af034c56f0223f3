package preview

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/signoff/signoff/internal/capability"
)

// Every quote checks its criteria on the base commit before it is offered; ten quotes of one
// repository used to build it ten times, each in a slot of its own, and on a busy host the
// checks timed out waiting. The base check of a tree (the commit and how the contract builds
// it) is now one build and one running preview, shared by every base check of it while any
// holds it, and kept for BaseLinger after the last. Only the base commit's own code runs
// there, the same code for every quote of it: no executor's code is ever built in it, so no
// contract reads what another contract's code wrote.

// baseShare is the one build of a tree: ready closes when res and err are set.
type baseShare struct {
	ready  chan struct{}
	res    capability.PreviewResult
	err    error
	refs   int
	linger *time.Timer
}

// baseKey names a tree as the preview builds it: the same commit built with the same package
// manager, folder, variables and services is the same build.
func baseKey(req capability.PreviewRequest) string {
	st := req.Stack
	h := sha256.New()
	fmt.Fprintf(h, "%s/%s\n%s\n%s@%s\n%s\n%s\n%s\n", req.Repo.Owner, req.Repo.Name, req.CommitSHA, st.PackageManager, st.PackageManagerVersion, st.AppDir,
		strings.Join(st.PreviewEnvWords(""), "\x00"), strings.Join(st.Services, ","))
	return hex.EncodeToString(h.Sum(nil))
}

// BaseBuilds is how many base builds this Previews has started.
func (p *Previews) BaseBuilds() int { return int(p.baseBuilds.Load()) }

// startBase joins the tree's base build, starting it when none is running or kept.
func (p *Previews) startBase(ctx context.Context, req capability.PreviewRequest) (capability.PreviewResult, error) {
	key := baseKey(req)
	p.mu.Lock()
	if p.bases == nil {
		p.bases, p.baseRefs = map[string]*baseShare{}, map[string]string{}
	}
	sh, building := p.bases[key], false
	if sh == nil {
		sh, building = &baseShare{ready: make(chan struct{})}, true
		p.bases[key] = sh
	}
	sh.refs++
	if sh.linger != nil {
		sh.linger.Stop()
		sh.linger = nil
	}
	p.nextRef++
	id := fmt.Sprintf("base-%s-%d", key[:16], p.nextRef)
	p.baseRefs[id] = key
	p.mu.Unlock()
	if building {
		p.baseBuilds.Add(1)
		// The build is the tree's, not this check's: a check that is cancelled leaves it to
		// the others (steps and the start are bounded by their own limits).
		breq := req
		breq.ContractID = "base-" + key[:24]
		res, err := p.start(context.WithoutCancel(ctx), breq)
		p.mu.Lock()
		sh.res, sh.err = res, err
		if err != nil && p.bases[key] == sh {
			delete(p.bases, key) // Signoff's own failure: the next check tries again
		}
		p.mu.Unlock()
		close(sh.ready)
	}
	select {
	case <-sh.ready:
	case <-ctx.Done():
		p.releaseBase(id)
		return capability.PreviewResult{}, ctx.Err()
	}
	if sh.err != nil {
		p.releaseBase(id)
		return capability.PreviewResult{}, sh.err
	}
	res := sh.res
	res.PreviewID = id
	return res, nil
}

// releaseBase lets go of a base check's hold on its tree's build, reporting whether id was
// one; the build stops BaseLinger after its last hold goes (at once when that is 0, or when
// the build failed).
func (p *Previews) releaseBase(id string) bool {
	p.mu.Lock()
	key, ok := p.baseRefs[id]
	if !ok {
		p.mu.Unlock()
		return false
	}
	delete(p.baseRefs, id)
	sh := p.bases[key]
	if sh == nil || sh.refs > 1 {
		// Another check holds it, or its build failed on Signoff's side and nothing runs.
		if sh != nil {
			sh.refs--
		}
		p.mu.Unlock()
		return true
	}
	sh.refs = 0
	stop := func() {
		p.mu.Lock()
		if sh.refs > 0 || p.bases[key] != sh {
			p.mu.Unlock()
			return
		}
		delete(p.bases, key)
		p.mu.Unlock()
		_ = p.stopJob(sh.res.PreviewID)
	}
	// A build that failed is not kept for the next check: the cause may have been the
	// host's (a full disk, a build a crashed worker left running), and building again
	// costs one build.
	if p.BaseLinger > 0 && sh.res.URL != "" {
		sh.linger = time.AfterFunc(p.BaseLinger, stop)
		p.mu.Unlock()
		return true
	}
	p.mu.Unlock()
	stop()
	return true
}

// DefaultBaseLinger keeps a base commit's preview up for the next quote of it: quotes of one
// repository tend to come together.
const DefaultBaseLinger = 30 * time.Second

// Close stops the base previews kept for later quotes (a worker that stops).
func (p *Previews) Close() {
	p.mu.Lock()
	var idle []*baseShare
	for key, sh := range p.bases {
		if sh.refs == 0 && sh.linger != nil {
			sh.linger.Stop()
			delete(p.bases, key)
			idle = append(idle, sh)
		}
	}
	p.mu.Unlock()
	for _, sh := range idle {
		_ = p.stopJob(sh.res.PreviewID)
	}
}
