// Where a base check runs, decided in one place.
//
// The same check can run in this process (Local) or on the queues of a running server
// (Queued). Every caller used to make that decision itself, each a little differently; Choice
// is the decision, so changing where base checks run means changing this file. It decides
// only when the first check actually runs: a draft refused before its check never dials
// Temporal, builds anything or needs a browser.

package basecheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/signoff/signoff/authoring"
	"github.com/signoff/signoff/authoring/survey"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/artifacts"
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/internal/localgit"
)

// Mode says where a Choice may run a base check.
type Mode string

const (
	// ModeAuto uses the queues when a Signoff server with workers answers, and this process
	// otherwise, saying why in the report's notes. The zero Mode is ModeAuto.
	ModeAuto Mode = "auto"
	// ModeQueues builds the base commit on the execute queue and verifies it on the verify
	// queue, or fails.
	ModeQueues Mode = "queues"
	// ModeLocal builds and verifies in this process, without Temporal.
	ModeLocal Mode = "local"
)

// dialTimeout bounds reaching the server and asking whether its queues are served: a server
// that does not answer is a reason to check here (ModeAuto), not to hang.
const dialTimeout = 10 * time.Second

// Choice implements authoring.BaseChecker by running each check where its Mode allows:
// through Queued on the server's queues, or through Local in this process. Set the fields
// before the first check; Close releases what it made.
type Choice struct {
	Mode Mode
	// Address names the server whose queues run the check, in messages. Without it (and
	// without Client) there are no queues: ModeAuto checks here and ModeQueues fails.
	Address string
	// Dial connects to the server at Address when a check first needs it. The Choice closes
	// the client it dials.
	Dial func(context.Context) (client.Client, error)
	// Client, when set, is a connection to workers the caller runs itself (the dev stack's
	// chat): it is used as is, never probed, never closed, and Dial is not needed.
	Client client.Client
	// DataDir is the data dir the server's workers share. The base commit is registered with
	// the execute queue's bare remote under it, so when there is something to register it
	// must hold their verifier's published key.
	DataDir string
	// Source is the repository the base commit comes from. With the queues its base commit is
	// pushed to the execute queue's bare remote first, unless Register says otherwise. nil
	// (and no Register): the remote is expected to hold the commit already.
	Source *survey.Source
	// Register, when set, replaces pushing Source's base commit: it makes the contract's base
	// commit available to the execute queue (a prepared fixture materialized, say).
	Register func(context.Context, contracts.Contract) error
	// Local builds the checker of this process when a check first runs here, so a check on
	// the queues never needs node, a build or a browser on this machine.
	Local func() (*Local, error)
	// Progress, when set, is told each check as it starts and where it runs.
	Progress io.Writer
	// Artifacts, when set, is the URL of the artifact store the server's workers share
	// (workers on other hosts): a base commit registered here is put there too, without its
	// history, for the execute worker that builds it.
	Artifacts string

	mu      sync.Mutex
	decided bool
	err     error  // why no check can run at all
	where   string // authoring.WhereQueues or authoring.WhereLocal
	why     string // why a check in ModeAuto runs here rather than on the queues
	queued  *Queued
	dialed  client.Client // the client Close closes (not Client)
	built   bool
	local   *Local
	lerr    error
}

var _ authoring.BaseChecker = (*Choice)(nil)

// CheckBase runs the criteria on the contract's base commit where the Choice decided.
func (ch *Choice) CheckBase(ctx context.Context, c contracts.Contract) (*authoring.BaseReport, error) {
	return ch.check(ctx, c, "")
}

// WithKey returns a checker whose checks on the queues are named after key (see
// Queued.WithKey), so a caller that retries joins the check it started. It shares the
// Choice's decision and resources; a check in this process ignores the key.
func (ch *Choice) WithKey(key string) authoring.BaseChecker { return keyed{ch, key} }

type keyed struct {
	ch  *Choice
	key string
}

func (k keyed) CheckBase(ctx context.Context, c contracts.Contract) (*authoring.BaseReport, error) {
	return k.ch.check(ctx, c, k.key)
}

// ForRetry names the n-th new run of a check that only timed out: the same key would join
// the finished one.
func (k keyed) ForRetry(n int) authoring.BaseChecker { return keyed{k.ch, retryKey(k.key, n)} }

var _ authoring.RetryingChecker = keyed{}

// Chosen says where checks run (authoring.WhereQueues or authoring.WhereLocal; "" before the
// first check or when none could run) and, when ModeAuto fell back to this process, why.
func (ch *Choice) Chosen() (where, why string) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return ch.where, ch.why
}

// Close closes the client the Choice dialled and stops a kept local preview.
func (ch *Choice) Close() error {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.local != nil {
		_ = ch.local.Close()
	}
	if ch.dialed != nil {
		ch.dialed.Close()
		ch.dialed = nil
	}
	return nil
}

func (ch *Choice) check(ctx context.Context, c contracts.Contract, key string) (*authoring.BaseReport, error) {
	q, why, err := ch.decide(ctx)
	if err != nil {
		return nil, err
	}
	if ch.Progress != nil {
		where := "in this process"
		if q != nil {
			where = "through the execute and verify queues"
			if ch.Address != "" {
				where += " at " + ch.Address
			}
		}
		fmt.Fprintf(ch.Progress, "Running %d criteria on base commit %s %s (build + browser)...\n", len(c.Criteria), contracts.ShortSHA(c.Repo.BaseCommitSHA), where)
	}
	var inner authoring.BaseChecker
	switch {
	case q != nil && key != "":
		inner = q.WithKey(key)
	case q != nil:
		inner = q
	default:
		l, err := ch.buildLocal()
		if err != nil {
			return nil, err
		}
		inner = l
	}
	rep, err := inner.CheckBase(ctx, c)
	if err == nil && why != "" {
		rep.Notes = append(rep.Notes, why)
	}
	return rep, err
}

// decide makes the choice once: the queued checker, or nil for this process, and why a
// check in ModeAuto runs here.
func (ch *Choice) decide(ctx context.Context) (*Queued, string, error) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if !ch.decided {
		ch.decided = true
		ch.err = ch.choose(ctx)
	}
	return ch.queued, ch.why, ch.err
}

// choose runs under mu.
func (ch *Choice) choose(ctx context.Context) error {
	mode := ch.Mode
	if mode == "" {
		mode = ModeAuto
	}
	local := func(why string) error {
		ch.where, ch.why = authoring.WhereLocal, why
		return nil
	}
	switch mode {
	case ModeLocal:
		return local("")
	case ModeAuto, ModeQueues:
	default:
		return fmt.Errorf("basecheck: mode %q: want auto, queues or local", mode)
	}
	refuse := func(err error) error {
		if mode == ModeQueues {
			return err
		}
		return local(fmt.Sprintf("checked in this process, not on the queues: %v", err))
	}
	register := ch.Register
	if register == nil && ch.Source != nil {
		register = RegisterFrom(localgit.Remotes{Root: datadir.Paths(ch.DataDir).Remotes}, ch.Source.GitDir)
	}
	if register != nil && ch.Artifacts != "" {
		register = shareBase(register, localgit.Remotes{Root: datadir.Paths(ch.DataDir).Remotes}, ch.Artifacts)
	}
	cl := ch.Client
	if cl == nil {
		if ch.Address == "" {
			return refuse(errors.New("no --temporal-address"))
		}
		if ch.Dial == nil {
			return errors.New("basecheck: an Address but no Dial")
		}
		dctx, cancel := context.WithTimeout(ctx, dialTimeout)
		defer cancel()
		var err error
		if cl, err = ch.Dial(dctx); err != nil {
			return refuse(err)
		}
		if err := Ready(dctx, cl); err != nil {
			cl.Close()
			return refuse(fmt.Errorf("the Signoff server at %s cannot run the base check: %w", ch.Address, err))
		}
		// The base commit is registered under this data dir: it must be the one the server's
		// workers use, which is where their verifier published its key.
		if register != nil {
			if _, _, err := datadir.ReadVerifier(ch.DataDir); err != nil {
				cl.Close()
				return refuse(fmt.Errorf("%s is not the data dir of the Signoff server at %s (its verifier key is not there); pass that server's --data-dir", ch.DataDir, ch.Address))
			}
		}
		ch.dialed = cl
	}
	ch.where, ch.queued = authoring.WhereQueues, &Queued{Client: cl, Register: register}
	return nil
}

// buildLocal builds the local checker once; a failure to build stands for later checks too.
func (ch *Choice) buildLocal() (*Local, error) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if !ch.built {
		ch.built = true
		if ch.Local == nil {
			ch.lerr = errors.New("basecheck: nothing builds a base check in this process (Choice.Local is nil)")
		} else {
			ch.local, ch.lerr = ch.Local()
		}
	}
	return ch.local, ch.lerr
}

// shareBase registers the base commit here, then puts it in the artifact store at url, where
// an execute worker on another host finds it.
func shareBase(register func(context.Context, contracts.Contract) error, remotes localgit.Remotes, url string) func(context.Context, contracts.Contract) error {
	return func(ctx context.Context, c contracts.Contract) error {
		if err := register(ctx, c); err != nil {
			return err
		}
		store, err := artifacts.Open(ctx, url)
		if err != nil {
			return fmt.Errorf("artifact store: %w", err)
		}
		defer store.Close()
		if _, err := (localgit.Shared{Remotes: remotes, Store: store}).ExportBase(ctx, c.Repo.Owner, c.Repo.Name, c.Repo.BaseCommitSHA); err != nil {
			return fmt.Errorf("put the base commit in the artifact store: %w", err)
		}
		return nil
	}
}
