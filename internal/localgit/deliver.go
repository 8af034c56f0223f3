package localgit

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/jsonfile"
)

// StatusContext is the commit status Signoff sets on the verified commit.
const StatusContext = "signoff/verified-completion"

// PR is the local pull-request record.
type PR struct {
	ContractID   string            `json:"contract_id"`
	ContractHash string            `json:"contract_hash"`
	Title        string            `json:"title"`
	Body         string            `json:"body"`
	Repo         string            `json:"repo"`
	Remote       string            `json:"remote"`
	Branch       string            `json:"branch"`
	BaseSHA      string            `json:"base_sha"`
	Head         string            `json:"head"`
	Draft        bool              `json:"draft"`
	Comments     []Comment         `json:"comments"`
	Statuses     map[string]Status `json:"statuses"` // by commit SHA
	UpdatedAt    string            `json:"updated_at"`
}

// Comment is a proof comment after a verdict.
type Comment struct {
	Attempt int    `json:"attempt"`
	Try     int    `json:"try"`
	Verdict string `json:"verdict"`
	Body    string `json:"body"`
	At      string `json:"at"`
}

// Status is a commit status.
type Status struct {
	Context     string `json:"context"`
	State       string `json:"state"` // success, failure, pending
	Description string `json:"description"`
}

// Deliverer publishes to the local bare remote and keeps the PR record in Store.
type Deliverer struct {
	Remotes Remotes
	Store   string // directory of PR records
	Now     func() time.Time
}

func (d *Deliverer) recordPath(contractID string) string {
	return filepath.Join(d.Store, contractID+".json")
}

func (d *Deliverer) now() string {
	if d.Now == nil {
		return time.Now().UTC().Format(time.RFC3339)
	}
	return d.Now().UTC().Format(time.RFC3339)
}

// URL is how a local PR is named in messages and proof pages.
func URL(remote, branch string) string { return "file://" + remote + "#" + branch }

// Publish checks the execute queue pushed the commit to the remote's branch, and opens or
// updates the draft PR record.
func (d *Deliverer) Publish(ctx context.Context, req capability.PublishRequest) (contracts.PRRef, error) {
	remote, err := d.Remotes.Path(req.Repo.Owner, req.Repo.Name)
	if err != nil {
		return contracts.PRRef{}, capability.Refused(err)
	}
	head, err := Head(ctx, remote, req.Branch)
	if err != nil {
		return contracts.PRRef{}, fmt.Errorf("publish: branch %s not on the remote: %w", req.Branch, err)
	}
	if head != req.CommitSHA {
		return contracts.PRRef{}, fmt.Errorf("publish: branch %s is at %s, not the attempt's commit %s", req.Branch, head, req.CommitSHA)
	}
	ref := contracts.PRRef{URL: URL(remote, req.Branch), Branch: req.Branch, Status: "draft"}
	err = jsonfile.Update(d.recordPath(req.ContractID), func(pr *PR) (bool, error) {
		if pr.ContractID == "" {
			*pr = PR{ContractID: req.ContractID, ContractHash: req.ContractHash, Title: "Verified contract: " + req.Goal,
				Body: prBody(req), Repo: req.Repo.Key(), Remote: remote, Branch: req.Branch,
				BaseSHA: req.Repo.BaseCommitSHA, Draft: true, Comments: []Comment{}, Statuses: map[string]Status{}}
		}
		pr.Head = head
		pr.UpdatedAt = d.now()
		if _, ok := pr.Statuses[head]; !ok {
			pr.Statuses[head] = Status{Context: StatusContext, State: "pending", Description: "verification pending"}
		}
		return true, nil
	})
	return ref, err
}

func prBody(req capability.PublishRequest) string {
	body := fmt.Sprintf("Contract %s\nContract hash: %s\nBase commit: %s\n\nCriteria:\n", req.ContractID, req.ContractHash, req.Repo.BaseCommitSHA)
	for i, c := range req.Criteria {
		body += fmt.Sprintf("%d. %s (%s)\n", i+1, c.Description, c.ID)
	}
	return body
}

// Report adds the proof comment, and on the final verdict sets the commit status on the
// verified SHA: success only when satisfied.
func (d *Deliverer) Report(ctx context.Context, b contracts.Bundle, final bool, comment string) (contracts.PRRef, error) {
	var ref contracts.PRRef
	err := jsonfile.Update(d.recordPath(b.ContractID), func(pr *PR) (bool, error) {
		if pr.ContractID == "" {
			return false, nil // nothing was published (an attempt that failed before publishing)
		}
		summary := b.Verdict
		if len(b.Reasons) > 0 {
			summary += ": " + b.Reasons[0].Message
		}
		body := comment
		if body == "" {
			body = summary
		}
		pr.Comments = append(pr.Comments, Comment{Attempt: b.Attempt, Try: b.Try, Verdict: b.Verdict, Body: body, At: d.now()})
		if b.ImplementationSHA != "" {
			state := "failure"
			if b.Verdict == contracts.Satisfied {
				state = "success"
			}
			if !final && b.Verdict != contracts.Satisfied {
				state = "pending"
			}
			pr.Statuses[b.ImplementationSHA] = Status{Context: StatusContext, State: state, Description: summary}
		}
		pr.UpdatedAt = d.now()
		ref = contracts.PRRef{URL: URL(pr.Remote, pr.Branch), Branch: pr.Branch, Status: "draft"}
		return true, nil
	})
	return ref, err
}

// Head re-reads the PR head from the remote itself, never from the record.
func (d *Deliverer) Head(ctx context.Context, req capability.HeadRequest) (string, error) {
	remote, err := d.Remotes.Path(req.Repo.Owner, req.Repo.Name)
	if err != nil {
		return "", capability.Refused(err)
	}
	return Head(ctx, remote, req.Branch)
}

// Record reads a PR record.
func (d *Deliverer) Record(contractID string) (PR, error) {
	var out PR
	err := jsonfile.Update(d.recordPath(contractID), func(pr *PR) (bool, error) { out = *pr; return false, nil })
	return out, err
}
