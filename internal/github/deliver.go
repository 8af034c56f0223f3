// Package github is the deliverable on GitHub: the attempt's branch pushed from the local
// bare remote, a draft pull request, a proof comment after each verdict and the commit status
// signoff/verified-completion on the verified commit. It runs on the control queue only, the
// one queue that holds the GitHub write token. A webhook handler reports PR head moves.
package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	gh "github.com/google/go-github/v60/github"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/executor"
	"github.com/signoff/signoff/internal/jsonfile"
	"github.com/signoff/signoff/internal/localgit"
)

// StatusContext is the commit status Signoff sets on the verified commit.
const StatusContext = localgit.StatusContext

// Defaults for a Config that leaves them empty.
const (
	DefaultAPIURL = "https://api.github.com/"
	DefaultGitURL = "https://github.com/"
)

// Config configures the GitHub deliverer. Environment names the workers read are given in
// brackets.
type Config struct {
	// Token is the GitHub write token [GITHUB_TOKEN]: contents and pull requests write,
	// commit statuses write. Only the control worker may hold it.
	Token string
	// APIURL is the REST API base [GITHUB_API_URL], default https://api.github.com/.
	APIURL string
	// GitURL is where branches are pushed [GITHUB_GIT_URL], default https://github.com/;
	// owner/name.git is appended. It must be https unless it is a loopback address.
	GitURL string
	// BaseBranch is the branch PRs target [GITHUB_BASE_BRANCH]; empty: the repository's
	// default branch.
	BaseBranch string
	// Remotes is the local bare remote the execute queue pushed the attempt to.
	Remotes localgit.Remotes
	// Store holds one record per contract (repository and PR number).
	Store string
	// Allow lists the owner/name patterns Signoff may write to; required.
	Allow executor.Allowlist
	// HTTPClient carries the API calls; nil uses a client with a 30 s timeout.
	HTTPClient *http.Client
}

// Deliverer publishes attempts as a draft PR on GitHub. It implements capability.Deliverer.
type Deliverer struct {
	cfg    Config
	client *gh.Client
	gitURL string
}

// New checks the configuration and builds the client.
func New(cfg Config) (*Deliverer, error) {
	if cfg.Token == "" {
		return nil, errors.New("github: no token")
	}
	if cfg.Store == "" || cfg.Remotes.Root == "" {
		return nil, errors.New("github: the record store and the bare remotes are required")
	}
	if len(cfg.Allow) == 0 {
		return nil, errors.New("github: an allowlist of repositories is required")
	}
	if cfg.APIURL == "" {
		cfg.APIURL = DefaultAPIURL
	}
	if cfg.GitURL == "" {
		cfg.GitURL = DefaultGitURL
	}
	api, err := secureURL(cfg.APIURL)
	if err != nil {
		return nil, fmt.Errorf("github: API URL: %w", err)
	}
	gitURL, err := secureURL(cfg.GitURL)
	if err != nil {
		return nil, fmt.Errorf("github: git URL: %w", err)
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	client := gh.NewClient(hc).WithAuthToken(cfg.Token)
	client.BaseURL = api
	client.UserAgent = "signoff"
	return &Deliverer{cfg: cfg, client: client, gitURL: gitURL.String()}, nil
}

// secureURL parses a base URL that a token will be sent to: https, or http on loopback only.
func secureURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	if u.User != nil {
		return nil, errors.New("credentials do not belong in the URL")
	}
	host := u.Hostname()
	loopback := host == "127.0.0.1" || host == "::1" || host == "localhost"
	if u.Scheme != "https" && !(u.Scheme == "http" && loopback) {
		return nil, fmt.Errorf("%s: the token travels only over https (or http to loopback)", raw)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return u, nil
}

// record is what Signoff keeps per contract: where its PR is.
type record struct {
	ContractID string `json:"contract_id"`
	Owner      string `json:"owner"`
	Name       string `json:"name"`
	Branch     string `json:"branch"`
	Number     int    `json:"number"`
	URL        string `json:"url"`
	Head       string `json:"head"`
	UpdatedAt  string `json:"updated_at"`
}

var fullSHA = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

func (d *Deliverer) recordPath(contractID string) (string, error) {
	if !contracts.ValidContractID(contractID) {
		return "", fmt.Errorf("contract id %q is not a safe name", contractID)
	}
	return filepath.Join(d.cfg.Store, contractID+".json"), nil
}

func (d *Deliverer) load(contractID string) (record, error) {
	var out record
	p, err := d.recordPath(contractID)
	if err != nil {
		return out, err
	}
	err = jsonfile.Update(p, func(r *record) (bool, error) { out = *r; return false, nil })
	return out, err
}

func (d *Deliverer) save(r record) error {
	p, err := d.recordPath(r.ContractID)
	if err != nil {
		return err
	}
	r.UpdatedAt = time.Now().UTC().Format(time.RFC3339)
	return jsonfile.Update(p, func(old *record) (bool, error) { *old = r; return true, nil })
}

// check refuses what Signoff must never write to GitHub: a repository off the allowlist, a
// branch outside signoff/<contract>.
func (d *Deliverer) check(contractID string, repo contracts.Repo, branch string) (string, error) {
	if !contracts.ValidContractID(contractID) {
		return "", capability.Refused(fmt.Errorf("contract id %q is not a safe name", contractID))
	}
	if !d.cfg.Allow.Allows(repo.Owner, repo.Name) {
		return "", capability.Refused(fmt.Errorf("repository %s is not on the allowlist", repo.Key()))
	}
	if branch != executor.Branch(contractID) {
		return "", capability.Refused(fmt.Errorf("branch %q is not %s", branch, executor.Branch(contractID)))
	}
	remote, err := d.cfg.Remotes.Path(repo.Owner, repo.Name)
	if err != nil {
		return "", capability.Refused(err)
	}
	return remote, nil
}

// Publish pushes the attempt's commit from the bare remote to GitHub, opens the draft PR (or
// updates the contract's PR) and marks the new head pending.
func (d *Deliverer) Publish(ctx context.Context, req capability.PublishRequest) (contracts.PRRef, error) {
	remote, err := d.check(req.ContractID, req.Repo, req.Branch)
	if err != nil {
		return contracts.PRRef{}, err
	}
	if !fullSHA.MatchString(req.CommitSHA) {
		return contracts.PRRef{}, capability.Refused(fmt.Errorf("commit %q is not a full SHA", req.CommitSHA))
	}
	head, err := localgit.Head(ctx, remote, req.Branch)
	if err != nil {
		return contracts.PRRef{}, fmt.Errorf("publish: branch %s not on the bare remote: %w", req.Branch, err)
	}
	if head != req.CommitSHA {
		return contracts.PRRef{}, fmt.Errorf("publish: branch %s is at %s on the bare remote, not the attempt's commit %s", req.Branch, head, req.CommitSHA)
	}
	if err := pushBranch(ctx, remote, d.gitURL, req.Repo.Owner, req.Repo.Name, req.CommitSHA, req.Branch, d.cfg.Token); err != nil {
		return contracts.PRRef{}, err
	}
	rec, err := d.load(req.ContractID)
	if err != nil {
		return contracts.PRRef{}, err
	}
	title, body := prTitle(req.Goal), prBody(req)
	owner, name := req.Repo.Owner, req.Repo.Name
	var pr *gh.PullRequest
	if rec.Number == 0 {
		prs, _, err := d.client.PullRequests.List(ctx, owner, name, &gh.PullRequestListOptions{State: "open", Head: owner + ":" + req.Branch})
		if err != nil {
			return contracts.PRRef{}, fmt.Errorf("publish: look for an open PR of %s: %w", req.Branch, err)
		}
		if len(prs) > 0 {
			rec.Number = prs[0].GetNumber()
		}
	}
	if rec.Number == 0 {
		base := d.cfg.BaseBranch
		if base == "" {
			repo, _, err := d.client.Repositories.Get(ctx, owner, name)
			if err != nil {
				return contracts.PRRef{}, fmt.Errorf("publish: read %s/%s: %w", owner, name, err)
			}
			base = repo.GetDefaultBranch()
		}
		pr, _, err = d.client.PullRequests.Create(ctx, owner, name, &gh.NewPullRequest{
			Title: gh.String(title), Head: gh.String(req.Branch), Base: gh.String(base), Body: gh.String(body), Draft: gh.Bool(true)})
		if err != nil {
			return contracts.PRRef{}, fmt.Errorf("publish: open the draft PR: %w", err)
		}
	} else {
		pr, _, err = d.client.PullRequests.Edit(ctx, owner, name, rec.Number, &gh.PullRequest{Title: gh.String(title), Body: gh.String(body)})
		if err != nil {
			return contracts.PRRef{}, fmt.Errorf("publish: update PR #%d: %w", rec.Number, err)
		}
	}
	rec = record{ContractID: req.ContractID, Owner: owner, Name: name, Branch: req.Branch, Number: pr.GetNumber(), URL: pr.GetHTMLURL(), Head: req.CommitSHA}
	if err := d.save(rec); err != nil {
		return contracts.PRRef{}, fmt.Errorf("publish: keep the PR record: %w", err)
	}
	if err := d.status(ctx, rec, req.CommitSHA, "pending", fmt.Sprintf("attempt %d: verification pending", req.Attempt)); err != nil {
		return contracts.PRRef{}, err
	}
	return ref(rec, pr), nil
}

func ref(rec record, pr *gh.PullRequest) contracts.PRRef {
	status := "open"
	if pr != nil && pr.GetDraft() {
		status = "draft"
	}
	if pr != nil && pr.GetState() == "closed" {
		status = "closed"
	}
	return contracts.PRRef{URL: rec.URL, Number: rec.Number, Branch: rec.Branch, Status: status}
}

// Report comments the verdict's proof on the PR (once per attempt and try, however often the
// activity is retried) and sets the commit status on the verified commit: success only when
// satisfied, failure on a final verdict that is not, pending while repairs continue.
func (d *Deliverer) Report(ctx context.Context, b contracts.Bundle, final bool, comment string) (contracts.PRRef, error) {
	rec, err := d.load(b.ContractID)
	if err != nil {
		return contracts.PRRef{}, err
	}
	if rec.Number == 0 {
		return contracts.PRRef{}, nil // nothing was published (an attempt that failed before publishing)
	}
	marker := proofMarker(b)
	posted, err := d.hasComment(ctx, rec, marker)
	if err != nil {
		return contracts.PRRef{}, err
	}
	if !posted {
		body := ProofComment(b)
		if comment != "" {
			body = marker + "\n" + comment // the marker keeps a retried activity from posting twice
		}
		_, _, err := d.client.Issues.CreateComment(ctx, rec.Owner, rec.Name, rec.Number, &gh.IssueComment{Body: gh.String(body)})
		if err != nil {
			return contracts.PRRef{}, fmt.Errorf("report: proof comment on PR #%d: %w", rec.Number, err)
		}
	}
	if b.ImplementationSHA != "" {
		state := "pending"
		switch {
		case b.Verdict == contracts.Satisfied:
			state = "success"
		case final:
			state = "failure"
		}
		if err := d.status(ctx, rec, b.ImplementationSHA, state, statusDescription(b, final)); err != nil {
			return contracts.PRRef{}, err
		}
	}
	return contracts.PRRef{URL: rec.URL, Number: rec.Number, Branch: rec.Branch, Status: "draft"}, nil
}

func (d *Deliverer) hasComment(ctx context.Context, rec record, marker string) (bool, error) {
	opts := &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	for {
		comments, resp, err := d.client.Issues.ListComments(ctx, rec.Owner, rec.Name, rec.Number, opts)
		if err != nil {
			return false, fmt.Errorf("report: read comments of PR #%d: %w", rec.Number, err)
		}
		for _, c := range comments {
			if strings.Contains(c.GetBody(), marker) {
				return true, nil
			}
		}
		if resp == nil || resp.NextPage == 0 {
			return false, nil
		}
		opts.Page = resp.NextPage
	}
}

func (d *Deliverer) status(ctx context.Context, rec record, sha, state, description string) error {
	if r := []rune(description); len(r) > 140 {
		description = string(r[:139]) + "…"
	}
	st := &gh.RepoStatus{State: gh.String(state), Context: gh.String(StatusContext), Description: gh.String(description)}
	if strings.HasPrefix(rec.URL, "https://") {
		st.TargetURL = gh.String(rec.URL)
	}
	if _, _, err := d.client.Repositories.CreateStatus(ctx, rec.Owner, rec.Name, sha, st); err != nil {
		return fmt.Errorf("commit status %s on %s: %w", state, sha, err)
	}
	return nil
}

// Head re-reads the PR head from GitHub, never from the record.
func (d *Deliverer) Head(ctx context.Context, req capability.HeadRequest) (string, error) {
	if _, err := d.check(req.ContractID, req.Repo, req.Branch); err != nil {
		return "", err
	}
	rec, err := d.load(req.ContractID)
	if err != nil {
		return "", err
	}
	if rec.Number != 0 {
		pr, _, err := d.client.PullRequests.Get(ctx, req.Repo.Owner, req.Repo.Name, rec.Number)
		if err != nil {
			return "", fmt.Errorf("read PR #%d: %w", rec.Number, err)
		}
		return pr.GetHead().GetSHA(), nil
	}
	prs, _, err := d.client.PullRequests.List(ctx, req.Repo.Owner, req.Repo.Name, &gh.PullRequestListOptions{State: "all", Head: req.Repo.Owner + ":" + req.Branch})
	if err != nil {
		return "", fmt.Errorf("look for the PR of %s: %w", req.Branch, err)
	}
	if len(prs) == 0 {
		return "", fmt.Errorf("no PR of %s on %s", req.Branch, req.Repo.Key())
	}
	return prs[0].GetHead().GetSHA(), nil
}

// Compile-time check: Deliverer is an capability.Deliverer.
var _ capability.Deliverer = (*Deliverer)(nil)
