package workers

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"go.temporal.io/sdk/activity"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/artifacts"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/localgit"
	"github.com/signoff/signoff/internal/proofstore"
	"github.com/signoff/signoff/internal/proofsync"
)

// The queues share nothing but Temporal and the artifact store (Config.Artifacts): each keeps
// its own data dir, and what one queue makes that another needs travels through the store.
//
//   - verify publishes each verification's folder (evidence, screenshots, traces), or adopts
//     the one a worker killed after publishing left there (sharedVerifier);
//   - control materialises it before it binds and signs the bundle, then publishes the bundle
//     and, at the end, the settlement;
//   - execute publishes each attempt's commit as a git bundle, and its executor log; control
//     and the other execute hosts fetch a commit they lack before they use it.
//
// On one machine the store is a file:// folder in the data dir and every fetch finds the files
// already in place, so the one-machine default behaves as before.

// ControlProofs is the control worker's proof store: its own proof folder, kept complete by
// materialising what the verify worker published, and the artifact store it publishes its
// own parts to.
type ControlProofs struct {
	Local proofstore.Store
	// Share is nil when no artifact store is configured: the folder is all there is.
	Share *proofsync.Sync
}

// WriteBundle fetches the verification the bundle judges, writes the bundle and the contract
// beside it, and publishes them.
func (p ControlProofs) WriteBundle(ctx context.Context, c contracts.Contract, b contracts.Bundle) (capability.RecordResult, error) {
	rel, part, err := proofsync.VerifierPart(b.ContractHash, b.Attempt, b.Try)
	if err != nil {
		return capability.RecordResult{}, err
	}
	if p.Share != nil && b.Attempt > 0 {
		// No verifier part means the attempt ended before verification (a failed build):
		// the bundle alone is the record.
		fetched, err := p.Share.Fetch(ctx, b.ContractID, rel, part)
		if err != nil {
			return capability.RecordResult{}, fmt.Errorf("fetch the verification: %w", err)
		}
		if fetched {
			if err := p.sameEvidence(b); err != nil {
				return capability.RecordResult{}, err
			}
		}
	}
	res, err := p.Local.WriteBundle(c, b)
	if err != nil || p.Share == nil {
		return res, err
	}
	if _, err := p.Share.Publish(ctx, b.ContractID, rel, proofsync.PartControl,
		[]string{proofstore.ContractFile, proofstore.BundleFile}); err != nil {
		return capability.RecordResult{}, fmt.Errorf("publish the bundle: %w", err)
	}
	return res, nil
}

// sameEvidence checks that the evidence fetched from the store is the one the bundle binds
// (the digest the verify activity reported to the workflow), so a bundle is never signed
// beside evidence someone else put in the store.
func (p ControlProofs) sameEvidence(b contracts.Bundle) error {
	if b.EvidenceDigest == "" {
		return nil
	}
	dir, err := p.Local.Dir(b.ContractID, b.Attempt, max(b.Try, 1))
	if err != nil {
		return err
	}
	data, err := proofstore.ReadDocument(dir, proofstore.EvidenceFile)
	if err != nil {
		return fmt.Errorf("the verification's evidence: %w", err)
	}
	if got := contracts.DigestBytes(data); got != b.EvidenceDigest {
		return capability.Refused(fmt.Errorf("the evidence in the store (%s) is not the one the verifier reported (%s)", got, b.EvidenceDigest))
	}
	return nil
}

// WriteSettlement writes and publishes the settlement.
func (p ControlProofs) WriteSettlement(ctx context.Context, s contracts.Settlement) (string, error) {
	path, err := p.Local.WriteSettlement(s)
	if err != nil || p.Share == nil {
		return path, err
	}
	if _, err := p.Share.Publish(ctx, s.ContractID, "", proofsync.PartSettlement, []string{proofstore.SettlementFile}); err != nil {
		var conflict *artifacts.ConflictError
		if errors.As(err, &conflict) {
			// A settlement is signed and written the same way on every try, so this
			// contract's own earlier publication has these very bytes: the name holds
			// something this control worker never published. Retrying cannot free it; it is
			// reported (the workflow records settlement_record_error) and the contract settles
			// and releases its repository anyway.
			return "", capability.Refused(fmt.Errorf("the artifact store's settlement name of %s already holds %s, which this control worker did not publish; the signed settlement stays at %s", s.ContractID, conflict.Have, path))
		}
		return "", fmt.Errorf("publish the settlement: %w", err)
	}
	return path, nil
}

// BaseRef fetches the base check's evidence for this contract hash, when the verify queue
// published one, and binds it.
func (p ControlProofs) BaseRef(ctx context.Context, contractID, contractHash, baseSHA string) (*contracts.BaseRef, error) {
	if p.Share != nil {
		rel, part, err := proofsync.VerifierPart(contractHash, 0, 0)
		if err != nil {
			return nil, err
		}
		if _, err := p.Share.Fetch(ctx, contractID, rel, part); err != nil {
			return nil, fmt.Errorf("fetch the base check: %w", err)
		}
	}
	return p.Local.BaseRef(contractID, contractHash, baseSHA)
}

// sharedExecutor brings the attempt's parent commit to this host before the executor runs,
// and hands the new commit and the executor's log to the store after.
type sharedExecutor struct {
	capability.Executor
	git localgit.Shared
	// logs is the command executor's log folder (<digest>.log); "" when it keeps none.
	logs string
}

func (s sharedExecutor) Run(ctx context.Context, req capability.ExecRequest) (capability.ExecResult, error) {
	if err := s.git.Ensure(ctx, req.Repo.Owner, req.Repo.Name, req.ParentSHA); err != nil {
		return capability.ExecResult{}, missingCommit(err, req.Repo, req.ParentSHA)
	}
	res, err := s.Executor.Run(ctx, req)
	if err != nil {
		return res, err
	}
	if !res.Empty {
		if _, err := s.git.Export(ctx, req.Repo.Owner, req.Repo.Name, req.Repo.BaseCommitSHA, res.CommitSHA); err != nil {
			return capability.ExecResult{}, fmt.Errorf("hand the commit to the other hosts: %w", err)
		}
	}
	if err := s.putLog(ctx, res.OutputDigest); err != nil {
		return capability.ExecResult{}, err
	}
	return res, nil
}

// missingCommit says what to do when a commit is neither on this host nor in the store: for
// the base, register it where the store can be reached.
func missingCommit(err error, repo contracts.Repo, sha string) error {
	if errors.Is(err, artifacts.ErrNotFound) && sha == repo.BaseCommitSHA {
		return fmt.Errorf("the base commit %s of %s is on neither this host nor the artifact store: register it with `signoff contract new` or `signoff contract check --temporal-address ... --artifacts URL`, or on this host: %w",
			contracts.ShortSHA(sha), repo.Key(), err)
	}
	return fmt.Errorf("bring commit %s of %s to this host: %w", contracts.ShortSHA(sha), repo.Key(), err)
}

// ExecutorLogName is where an executor log is kept in the store, by the hex sha256 the
// attempt's ExecResult.OutputDigest names.
func ExecutorLogName(digest string) string { return "logs/executor/" + digest + ".log" }

func (s sharedExecutor) putLog(ctx context.Context, digest string) error {
	if s.logs == "" || digest == "" {
		return nil
	}
	err := storeFile(ctx, s.git.Store, filepath.Join(s.logs, filepath.Base(digest)+".log"),
		func(artifacts.Digest) string { return ExecutorLogName(digest) })
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("executor log: %w", err)
	}
	return nil
}

// storeFile puts the regular file at path in the store, never through a symlink, and links
// the name nameOf gives for its digest.
func storeFile(ctx context.Context, store artifacts.Store, path string, nameOf func(artifacts.Digest) string) error {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	d, err := store.Put(ctx, f)
	if err != nil {
		return err
	}
	return store.Link(ctx, nameOf(d), d)
}

// sharedPreviews brings the commit to this host before it is built: the executor that made
// it may have run on another execute host.
type sharedPreviews struct {
	capability.Previews
	git localgit.Shared
}

func (s sharedPreviews) Start(ctx context.Context, req capability.PreviewRequest) (capability.PreviewResult, error) {
	if err := s.git.Ensure(ctx, req.Repo.Owner, req.Repo.Name, req.CommitSHA); err != nil {
		return capability.PreviewResult{}, missingCommit(err, req.Repo, req.CommitSHA)
	}
	res, err := s.Previews.Start(ctx, req)
	if err == nil {
		s.putBuildLogs(ctx, req, res.Build)
	}
	return res, err
}

// BuildLogPrefix is where a verification's build logs are kept in the store: each under
// "<digest hex>-<file name>", so a retried build adds its logs beside the first's.
func BuildLogPrefix(contractID string, attempt, try int) string {
	return fmt.Sprintf("logs/build/%s/attempt-%d/try-%d/", contractID, attempt, max(try, 1))
}

// putBuildLogs keeps the build's step logs in the store. The preview is running by now, so
// a log that cannot be stored is reported, not turned into a failed (and retried) start.
func (s sharedPreviews) putBuildLogs(ctx context.Context, req capability.PreviewRequest, b contracts.BuildResult) {
	prefix := BuildLogPrefix(req.ContractID, req.Attempt, req.Try)
	for _, step := range b.Steps {
		if step.Log == "" || !filepath.IsAbs(step.Log) {
			continue
		}
		base := logName.ReplaceAllString(filepath.Base(step.Log), "_")
		if len(base) > 100 {
			base = base[len(base)-100:]
		}
		err := storeFile(ctx, s.git.Store, step.Log, func(d artifacts.Digest) string {
			return prefix + strings.TrimPrefix(d.String(), "sha256:") + "-" + base
		})
		if err != nil && activity.IsActivity(ctx) {
			activity.GetLogger(ctx).Warn("build log not stored", "contract", req.ContractID, "step", step.Name, "error", err)
		}
	}
}

// logName keeps a log's file name within the store's name alphabet.
var logName = regexp.MustCompile(`[^A-Za-z0-9._-]`)

// sharedDeliverer brings the attempt's commit into the control host's remote, on its branch,
// before the deliverable publishes it (the local bare remote checks the branch head; GitHub
// pushes from that remote).
type sharedDeliverer struct {
	capability.Deliverer
	git localgit.Shared
}

func (s sharedDeliverer) Publish(ctx context.Context, req capability.PublishRequest) (contracts.PRRef, error) {
	remote, err := s.git.Remotes.Path(req.Repo.Owner, req.Repo.Name)
	if err != nil {
		return contracts.PRRef{}, capability.Refused(err)
	}
	// A commit already here came with its branch (one machine: the executor pushed both);
	// the branch is left as it is, so a push made since is still caught by the deliverable.
	if localgit.Has(ctx, remote, req.CommitSHA) {
		return s.Deliverer.Publish(ctx, req)
	}
	if err := s.git.EnsureBranch(ctx, req.Repo.Owner, req.Repo.Name, req.Branch, req.CommitSHA); err != nil {
		return contracts.PRRef{}, fmt.Errorf("publish: %w", missingCommit(err, req.Repo, req.CommitSHA))
	}
	return s.Deliverer.Publish(ctx, req)
}

// sharedVerifier publishes each verification's folder (not a base check's lazy variant, which
// stays on this host) to the artifact store, where the control worker, on this host or
// another, and `signoff proof get` read it.
type sharedVerifier struct {
	capability.Verifier
	// proofs is the verify worker's proof folder, where the store's copy is materialised.
	proofs proofstore.Store
	share  verificationShare
	// key is the verifier's public key: only evidence it signed is adopted.
	key ed25519.PublicKey
	log *slog.Logger
}

// verificationShare moves a verification's folder to and from the artifact store
// (proofsync.Sync). Rel and part name the folder and the verifier's part of it.
type verificationShare interface {
	Publish(ctx context.Context, contractID, rel, part string, files []string) (artifacts.Digest, error)
	Fetch(ctx context.Context, contractID, rel, part string) (bool, error)
}

// Verify adopts the verification a worker killed after publishing left in the store (or this
// activity's previous try), without measuring again; otherwise it measures and publishes.
func (s sharedVerifier) Verify(ctx context.Context, req capability.VerifyRequest) (capability.VerifyResult, error) {
	if req.Variant == nil {
		dir, err := s.proofs.Dir(req.ContractID, req.Attempt, max(req.Try, 1))
		if err != nil {
			return capability.VerifyResult{}, capability.Refused(err)
		}
		adopted, err := s.adopt(ctx, req, dir)
		if err != nil {
			return capability.VerifyResult{}, err
		}
		if adopted != nil {
			return capability.VerifyResult{Evidence: adopted.ev, EvidenceDigest: adopted.digest, ProofDir: dir,
				ArtifactProblems: proofstore.CheckArtifacts(dir, adopted.ev.Artifacts)}, nil
		}
	}
	res, err := s.Verifier.Verify(ctx, req)
	if err != nil || req.Variant != nil {
		return res, err
	}
	adopted, err := s.publish(ctx, req, res.ProofDir, res.Evidence)
	if err != nil {
		return capability.VerifyResult{}, err
	}
	if adopted != nil {
		res.Evidence, res.EvidenceDigest = adopted.ev, adopted.digest
		res.ArtifactProblems = proofstore.CheckArtifacts(res.ProofDir, adopted.ev.Artifacts)
	}
	return res, nil
}

// adoptable checks evidence found in the store under this request's name: signed with this
// verifier's key, for this contract hash, attempt and expected commit.
func (s sharedVerifier) adoptable(req capability.VerifyRequest, ev *contracts.Evidence) error {
	if err := ev.VerifySignature(s.key); err != nil {
		return err
	}
	if ev.ContractHash != req.ContractHash || ev.Attempt != req.Attempt || ev.ExpectedSHA != req.ExpectedSHA {
		return fmt.Errorf("it is of contract %s attempt %d at %s, not %s attempt %d at %s", ev.ContractHash, ev.Attempt,
			ev.ExpectedSHA, req.ContractHash, req.Attempt, req.ExpectedSHA)
	}
	return nil
}

// published is a verification another verify worker published first.
type published struct {
	ev     *contracts.Evidence
	digest string
}

// publish puts the folder's evidence and the artifacts it lists in the artifact store, as
// one part, evidence last. A verification of this attempt and try that is there already
// was made by a worker that died before the workflow heard of it (or by this activity's
// previous try): it stands, and is adopted, so one verification has one proof whichever
// worker finishes it.
func (s sharedVerifier) publish(ctx context.Context, req capability.VerifyRequest, dir string, ev *contracts.Evidence) (*published, error) {
	rel, part, err := proofsync.VerifierPart(req.ContractHash, req.Attempt, req.Try)
	if err != nil {
		return nil, capability.Refused(err)
	}
	files := make([]string, 0, len(ev.Artifacts)+1)
	seen := map[string]bool{}
	for _, art := range ev.Artifacts {
		// A missing or unsafe artifact is already a problem the policy turns into
		// verification_error; the rest of the folder is still worth keeping.
		name := filepath.ToSlash(filepath.Clean(art.Name))
		if seen[name] {
			continue
		}
		if p, err := proofstore.Contained(dir, art.Name); err == nil {
			if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
				files = append(files, name)
				seen[name] = true
			}
		}
	}
	files = append(files, proofstore.EvidenceFile)
	_, err = s.share.Publish(ctx, req.ContractID, rel, part, files)
	var conflict *artifacts.ConflictError
	switch {
	case err == nil:
		return nil, nil
	case !errors.As(err, &conflict):
		return nil, fmt.Errorf("publish the evidence: %w", err)
	}
	adopted, err := s.adopt(ctx, req, dir)
	if err == nil && adopted == nil {
		err = fmt.Errorf("the store refused %s as taken, then did not have it", conflict.Name)
	}
	return adopted, err
}

// adopt materialises the verification published under this request's name into dir and
// returns it; nil, and no error, when nothing is published there.
func (s sharedVerifier) adopt(ctx context.Context, req capability.VerifyRequest, dir string) (*published, error) {
	rel, part, err := proofsync.VerifierPart(req.ContractHash, req.Attempt, req.Try)
	if err != nil {
		return nil, capability.Refused(err)
	}
	found, err := s.share.Fetch(ctx, req.ContractID, rel, part)
	if err != nil {
		return nil, fmt.Errorf("adopt the evidence published first: %w", err)
	}
	if !found {
		return nil, nil
	}
	data, err := proofstore.ReadDocument(dir, proofstore.EvidenceFile)
	if err != nil {
		return nil, fmt.Errorf("adopt the evidence published first: %w", err)
	}
	adopted, err := contracts.DecodeEvidence(data)
	if err != nil {
		return nil, capability.Refused(fmt.Errorf("the evidence published first for this verification is not evidence: %w", err))
	}
	// Whoever can write the store could have published first. Only a verification this
	// verifier signed, of this very request, stands for it; anything else is refused, never
	// adopted, and its name (which cannot be repointed) makes this a verification error.
	if err := s.adoptable(req, adopted); err != nil {
		return nil, capability.Refused(fmt.Errorf("the evidence published first for this verification is not this verifier's: %w", err))
	}
	if l := s.log; l != nil {
		l.Info("verification already published; adopting it", "contract", req.ContractID, "attempt", req.Attempt, "try", req.Try)
	}
	return &published{ev: adopted, digest: contracts.DigestBytes(data)}, nil
}
