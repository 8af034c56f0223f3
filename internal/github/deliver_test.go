package github_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/fixtures/fixturerepo"
	"github.com/signoff/signoff/internal/capability"
	signoffgh "github.com/signoff/signoff/internal/github"
	"github.com/signoff/signoff/internal/localgit"
)

const (
	token      = "ghp_testtoken_never_in_argv"
	contractID = "c-watchlist"
	branch     = "signoff/c-watchlist"
	docHeadSHA = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
)

// apiCall is one request the stand-in api.github.com received.
type apiCall struct {
	Method string
	Path   string
	Query  url.Values
	Header http.Header
	Body   map[string]any
}

// fakeGitHub stands in for api.github.com (under /api/, answering with GitHub's documented
// examples) and for github.com's git smart-HTTP endpoint (under /git/, served by the real
// git-http-backend, so a push really lands in a bare repository).
type fakeGitHub struct {
	mu       sync.Mutex
	calls    []apiCall
	gitAuth  []string
	openPRs  string // the List pull requests answer
	comments string // the List issue comments answer
	git      http.Handler
	ghRepo   string // the "GitHub side" bare repository
}

func (f *fakeGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/git/") {
		f.mu.Lock()
		f.gitAuth = append(f.gitAuth, r.Header.Get("Authorization"))
		f.mu.Unlock()
		if r.Header.Get("Authorization") != "Basic "+base64.StdEncoding.EncodeToString([]byte("x-access-token:"+token)) {
			w.Header().Set("WWW-Authenticate", `Basic realm="GitHub"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		f.git.ServeHTTP(w, r)
		return
	}
	c := apiCall{Method: r.Method, Path: strings.TrimPrefix(r.URL.Path, "/api"), Query: r.URL.Query(), Header: r.Header.Clone()}
	if data, _ := io.ReadAll(r.Body); len(data) > 0 {
		if err := json.Unmarshal(data, &c.Body); err != nil {
			http.Error(w, "body is not JSON", http.StatusBadRequest)
			return
		}
	}
	f.mu.Lock()
	f.calls = append(f.calls, c)
	openPRs, comments := f.openPRs, f.comments
	f.mu.Unlock()
	reply := func(status int, body string) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
	const repo = "/repos/octocat/Hello-World"
	switch key := r.Method + " " + c.Path; {
	case key == "GET "+repo:
		reply(200, docRepository)
	case key == "GET "+repo+"/pulls":
		reply(200, openPRs)
	case key == "POST "+repo+"/pulls":
		reply(201, docPullRequest)
	case key == "PATCH "+repo+"/pulls/1347", key == "GET "+repo+"/pulls/1347":
		reply(200, docPullRequest)
	case key == "GET "+repo+"/issues/1347/comments":
		reply(200, comments)
	case key == "POST "+repo+"/issues/1347/comments":
		reply(201, docIssueComment)
	case strings.HasPrefix(key, "POST "+repo+"/statuses/"):
		reply(201, docStatus)
	default:
		reply(404, `{"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}`)
	}
}

func (f *fakeGitHub) take() []apiCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.calls
	f.calls = nil
	return out
}

type world struct {
	d      *signoffgh.Deliverer
	fake   *fakeGitHub
	remote string // the local bare remote the execute queue pushes to
	repo   contracts.Repo
	dir    string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	app := filepath.Join(dir, "app")
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(app, "index.html"), []byte("<h1>Watchlist</h1>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base, err := fixturerepo.Materialize(app, filepath.Join(dir, "src"))
	if err != nil {
		t.Fatal(err)
	}
	remotes := localgit.Remotes{Root: filepath.Join(dir, "remotes")}
	remote, err := remotes.Ensure(ctx, "octocat", "Hello-World", filepath.Join(dir, "src"))
	if err != nil {
		t.Fatal(err)
	}
	ghRoot := filepath.Join(dir, "github")
	ghRepo := filepath.Join(ghRoot, "octocat", "Hello-World.git")
	if err := os.MkdirAll(filepath.Dir(ghRepo), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := localgit.Git(ctx, dir, "clone", "--quiet", "--bare", filepath.Join(dir, "src"), ghRepo); err != nil {
		t.Fatal(err)
	}
	if _, err := localgit.Git(ctx, ghRepo, "config", "http.receivepack", "true"); err != nil {
		t.Fatal(err)
	}
	execPath, err := localgit.Git(ctx, dir, "--exec-path")
	if err != nil {
		t.Fatal(err)
	}
	backend := filepath.Join(strings.TrimSpace(execPath), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Fatalf("git-http-backend (part of git) is missing: %v", err)
	}
	fake := &fakeGitHub{openPRs: "[]", comments: docIssueCommentList, ghRepo: ghRepo,
		git: &cgi.Handler{Path: backend, Root: "/git", Env: []string{"GIT_PROJECT_ROOT=" + ghRoot, "GIT_HTTP_EXPORT_ALL=1",
			"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME=" + dir}}}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	d, err := signoffgh.New(signoffgh.Config{Token: token, APIURL: srv.URL + "/api/", GitURL: srv.URL + "/git/",
		Remotes: remotes, Store: filepath.Join(dir, "prs"), Allow: []string{"octocat/*"}})
	if err != nil {
		t.Fatal(err)
	}
	return &world{d: d, fake: fake, remote: remote, dir: dir,
		repo: contracts.Repo{Owner: "octocat", Name: "Hello-World", BaseCommitSHA: base}}
}

// attempt commits a change on top of parent and pushes it to the local bare remote, as the
// execute queue does.
func (w *world) attempt(t *testing.T, parent, content string) string {
	t.Helper()
	ctx := context.Background()
	clone := filepath.Join(w.dir, "clone-"+content)
	if _, err := localgit.Git(ctx, w.dir, "clone", "--quiet", w.remote, clone); err != nil {
		t.Fatal(err)
	}
	if _, err := localgit.Git(ctx, clone, "checkout", "--quiet", "-B", branch, parent); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(clone, "card.txt"), []byte(content+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"add", "-A"}, {"-c", "user.name=Signoff", "-c", "user.email=executor@signoff.local", "commit", "-q", "-m", content},
		{"push", "--quiet", "--force", w.remote, "HEAD:refs/heads/" + branch}} {
		if _, err := localgit.Git(ctx, clone, args...); err != nil {
			t.Fatal(err)
		}
	}
	sha, err := localgit.Head(ctx, w.remote, branch)
	if err != nil {
		t.Fatal(err)
	}
	return sha
}

func (w *world) publish(attempt int, sha string) capability.PublishRequest {
	return capability.PublishRequest{ContractID: contractID, ContractHash: strings.Repeat("cd", 32), Goal: "Show the watchlist as cards on mobile\n(more words)",
		Repo: w.repo, Branch: branch, CommitSHA: sha, Attempt: attempt,
		Criteria: []contracts.Criterion{{ID: "cards-visible", Description: "Watchlist cards are visible at 390x844"}, {ID: "no-overflow", Description: "No horizontal overflow @everyone"}}}
}

// expect checks the calls, in order, by method and path, and that every API call carried
// the token and the API version go-github pins.
func expect(t *testing.T, calls []apiCall, want ...string) {
	t.Helper()
	var got []string
	for _, c := range calls {
		got = append(got, c.Method+" "+c.Path)
		if c.Header.Get("Authorization") != "Bearer "+token || c.Header.Get("X-GitHub-Api-Version") != "2022-11-28" ||
			!strings.Contains(c.Header.Get("Accept"), "application/vnd.github") || c.Header.Get("User-Agent") != "signoff" {
			t.Errorf("%s %s headers: %v", c.Method, c.Path, c.Header)
		}
		if (c.Method == "POST" || c.Method == "PATCH") && c.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s content type %q", c.Method, c.Path, c.Header.Get("Content-Type"))
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func ghBranch(t *testing.T, w *world) string {
	t.Helper()
	sha, err := localgit.Head(context.Background(), w.fake.ghRepo, branch)
	if err != nil {
		return ""
	}
	return sha
}

func TestPublishReportAndHead(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	sha1 := w.attempt(t, w.repo.BaseCommitSHA, "one")

	// Attempt 1: push, no open PR yet, read the default branch, open the draft, mark pending.
	ref, err := w.d.Publish(ctx, w.publish(1, sha1))
	if err != nil {
		t.Fatal(err)
	}
	if ref.URL != "https://github.com/octocat/Hello-World/pull/1347" || ref.Number != 1347 || ref.Branch != branch {
		t.Fatalf("ref %+v", ref)
	}
	if got := ghBranch(t, w); got != sha1 {
		t.Fatalf("GitHub's branch is at %q, want %s", got, sha1)
	}
	calls := w.fake.take()
	expect(t, calls, "GET /repos/octocat/Hello-World/pulls", "GET /repos/octocat/Hello-World",
		"POST /repos/octocat/Hello-World/pulls", "POST /repos/octocat/Hello-World/statuses/"+sha1)
	if q := calls[0].Query; q.Get("head") != "octocat:"+branch || q.Get("state") != "open" {
		t.Errorf("list query %v", q)
	}
	create := calls[2].Body
	if create["title"] != "Verified contract: Show the watchlist as cards on mobile" || create["head"] != branch ||
		create["base"] != "master" || create["draft"] != true {
		t.Errorf("create body %v", create)
	}
	body, _ := create["body"].(string)
	for _, want := range []string{strings.Repeat("cd", 32), w.repo.BaseCommitSHA, "[cards-visible] Watchlist cards are visible", "```text\nShow the watchlist"} {
		if !strings.Contains(body, want) {
			t.Errorf("PR body lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(strings.ReplaceAll(body, "```text\n1. [cards-visible] Watchlist cards are visible at 390x844\n2. [no-overflow] No horizontal overflow @everyone\n```", ""), "@everyone") {
		t.Error("a mention in the criteria escaped the literal block")
	}
	wantStatus(t, calls[3], "pending", ref.URL)
	for i, a := range w.fake.gitAuth {
		if a == "" {
			t.Errorf("git request %d carried no Authorization", i)
		}
	}

	// Attempt 2 on top: the PR is known, so it is updated, not reopened.
	sha2 := w.attempt(t, sha1, "two")
	if _, err := w.d.Publish(ctx, w.publish(2, sha2)); err != nil {
		t.Fatal(err)
	}
	calls = w.fake.take()
	expect(t, calls, "PATCH /repos/octocat/Hello-World/pulls/1347", "POST /repos/octocat/Hello-World/statuses/"+sha2)
	if calls[0].Body["title"] == nil || calls[0].Body["body"] == nil || calls[0].Body["base"] != nil {
		t.Errorf("update body %v", calls[0].Body)
	}
	if got := ghBranch(t, w); got != sha2 {
		t.Fatalf("GitHub's branch is at %q, want %s", got, sha2)
	}

	// A repairable verdict on attempt 1: proof comment, status pending.
	b1 := contracts.Bundle{ContractID: contractID, ContractHash: strings.Repeat("cd", 32), Attempt: 1, Try: 1, ImplementationSHA: sha1,
		BaseSHA: w.repo.BaseCommitSHA, Verdict: contracts.NotSatisfied, EvidenceDigest: strings.Repeat("e", 64),
		Reasons: []contracts.Reason{{Rule: 3, Criterion: "no-overflow", Message: "scrollWidth = 927, innerWidth = 390 <img src=x>"}}}
	if _, err := w.d.Report(ctx, b1, false, ""); err != nil {
		t.Fatal(err)
	}
	calls = w.fake.take()
	expect(t, calls, "GET /repos/octocat/Hello-World/issues/1347/comments", "POST /repos/octocat/Hello-World/issues/1347/comments",
		"POST /repos/octocat/Hello-World/statuses/"+sha1)
	if calls[0].Query.Get("per_page") != "100" {
		t.Errorf("comments query %v", calls[0].Query)
	}
	comment, _ := calls[1].Body["body"].(string)
	for _, want := range []string{"<!-- signoff-proof contract=c-watchlist attempt=1 try=1 -->", "`not_satisfied`", sha1,
		strings.Repeat("e", 64), "```text\n- no-overflow: scrollWidth = 927, innerWidth = 390 <img src=x>\n```"} {
		if !strings.Contains(comment, want) {
			t.Errorf("comment lacks %q:\n%s", want, comment)
		}
	}
	wantStatus(t, calls[2], "pending", ref.URL)

	// The final satisfied verdict on attempt 2: success on the verified commit.
	b2 := b1
	b2.Attempt, b2.ImplementationSHA, b2.Verdict, b2.Reasons = 2, sha2, contracts.Satisfied, nil
	if _, err := w.d.Report(ctx, b2, true, ""); err != nil {
		t.Fatal(err)
	}
	calls = w.fake.take()
	expect(t, calls, "GET /repos/octocat/Hello-World/issues/1347/comments", "POST /repos/octocat/Hello-World/issues/1347/comments",
		"POST /repos/octocat/Hello-World/statuses/"+sha2)
	wantStatus(t, calls[2], "success", ref.URL)

	// The activity retried after the comment was posted: no second comment.
	w.fake.mu.Lock()
	posted := strings.Replace(docIssueComment, `"body": "Me too"`, `"body": `+jsonString(signoffgh.ProofComment(b2)), 1)
	w.fake.comments = "[" + docIssueComment + "," + posted + "]"
	w.fake.mu.Unlock()
	if _, err := w.d.Report(ctx, b2, true, ""); err != nil {
		t.Fatal(err)
	}
	calls = w.fake.take()
	expect(t, calls, "GET /repos/octocat/Hello-World/issues/1347/comments", "POST /repos/octocat/Hello-World/statuses/"+sha2)

	// A final verdict that is not satisfied sets failure.
	b3 := b1
	b3.Attempt, b3.Try = 3, 2
	if _, err := w.d.Report(ctx, b3, true, ""); err != nil {
		t.Fatal(err)
	}
	calls = w.fake.take()
	wantStatus(t, calls[len(calls)-1], "failure", ref.URL)

	// Head is read from GitHub (the documented example's head), not from Signoff's record.
	head, err := w.d.Head(ctx, capability.HeadRequest{ContractID: contractID, Repo: w.repo, Branch: branch})
	if err != nil {
		t.Fatal(err)
	}
	if head != docHeadSHA {
		t.Fatalf("head %s, want the PR's head on GitHub %s", head, docHeadSHA)
	}
	expect(t, w.fake.take(), "GET /repos/octocat/Hello-World/pulls/1347")
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func wantStatus(t *testing.T, c apiCall, state, target string) {
	t.Helper()
	if c.Body["state"] != state || c.Body["context"] != "signoff/verified-completion" || c.Body["target_url"] != target {
		t.Errorf("status body %v, want state %s", c.Body, state)
	}
	if d, _ := c.Body["description"].(string); d == "" || len([]rune(d)) > 140 {
		t.Errorf("status description %q", d)
	}
}

func TestPublishNeverOverwritesForeignCommits(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	sha1 := w.attempt(t, w.repo.BaseCommitSHA, "one")
	if _, err := w.d.Publish(ctx, w.publish(1, sha1)); err != nil {
		t.Fatal(err)
	}
	w.fake.take()
	// Someone pushes to the PR branch on GitHub (the head moves); then Signoff's next
	// attempt, built on its own commit, must not force over it.
	clone := filepath.Join(w.dir, "human")
	if _, err := localgit.Git(ctx, w.dir, "clone", "--quiet", "--branch", branch, w.fake.ghRepo, clone); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(clone, "human.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"add", "-A"}, {"-c", "user.name=Human", "-c", "user.email=h@example.com", "commit", "-q", "-m", "human"}, {"push", "--quiet", "origin", branch}} {
		if _, err := localgit.Git(ctx, clone, args...); err != nil {
			t.Fatal(err)
		}
	}
	human := ghBranch(t, w)
	sha2 := w.attempt(t, sha1, "two")
	_, err := w.d.Publish(ctx, w.publish(2, sha2))
	if err == nil || !strings.Contains(err.Error(), "commits Signoff did not make") {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), token) {
		t.Fatal("the token reached an error message")
	}
	if ghBranch(t, w) != human {
		t.Fatal("the human's commit was overwritten")
	}
	if calls := w.fake.take(); len(calls) != 0 {
		t.Fatalf("API calls after a refused push: %v", calls)
	}
}

func TestPublishRefusesBeforeTouchingGitHub(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	sha1 := w.attempt(t, w.repo.BaseCommitSHA, "one")
	for name, mutate := range map[string]func(*capability.PublishRequest){
		"repo off the allowlist": func(r *capability.PublishRequest) { r.Repo.Owner = "someone-else" },
		"branch outside prefix":  func(r *capability.PublishRequest) { r.Branch = "main" },
		"another contract":       func(r *capability.PublishRequest) { r.Branch = "signoff/other-contract" },
		"short sha":              func(r *capability.PublishRequest) { r.CommitSHA = sha1[:7] },
	} {
		req := w.publish(1, sha1)
		mutate(&req)
		_, err := w.d.Publish(ctx, req)
		if !errors.Is(err, capability.ErrRefused) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A commit the execute queue never pushed is not published either.
	req := w.publish(1, w.repo.BaseCommitSHA)
	if _, err := w.d.Publish(ctx, req); err == nil {
		t.Error("published a commit that is not the branch head")
	}
	if calls := w.fake.take(); len(calls) != 0 || len(w.fake.gitAuth) != 0 || ghBranch(t, w) != "" {
		t.Fatalf("GitHub was touched: %v", calls)
	}
}

// A PR already open for the branch (opened by a worker that crashed before it kept its
// record) is reused, not duplicated.
func TestPublishReusesAnOpenPR(t *testing.T) {
	w := newWorld(t)
	w.fake.openPRs = docPullRequestList
	sha1 := w.attempt(t, w.repo.BaseCommitSHA, "one")
	ref, err := w.d.Publish(context.Background(), w.publish(1, sha1))
	if err != nil {
		t.Fatal(err)
	}
	expect(t, w.fake.take(), "GET /repos/octocat/Hello-World/pulls", "PATCH /repos/octocat/Hello-World/pulls/1347",
		"POST /repos/octocat/Hello-World/statuses/"+sha1)
	if ref.Number != 1347 {
		t.Fatalf("%+v", ref)
	}
}

func TestReportBeforePublishDoesNothing(t *testing.T) {
	w := newWorld(t)
	ref, err := w.d.Report(context.Background(), contracts.Bundle{ContractID: contractID, Attempt: 1, Verdict: contracts.NotSatisfied}, true, "")
	if err != nil || ref.URL != "" {
		t.Fatalf("%+v %v", ref, err)
	}
	if calls := w.fake.take(); len(calls) != 0 {
		t.Fatalf("calls %v", calls)
	}
}

func TestNewRefusesUnsafeConfig(t *testing.T) {
	good := signoffgh.Config{Token: "t", Store: "/tmp/x", Remotes: localgit.Remotes{Root: "/tmp/r"}, Allow: []string{"a/*"}}
	for name, mutate := range map[string]func(*signoffgh.Config){
		"no token":           func(c *signoffgh.Config) { c.Token = "" },
		"no allowlist":       func(c *signoffgh.Config) { c.Allow = nil },
		"plain http api":     func(c *signoffgh.Config) { c.APIURL = "http://api.example.com/" },
		"plain http git":     func(c *signoffgh.Config) { c.GitURL = "http://github.example.com/" },
		"credentials in url": func(c *signoffgh.Config) { c.GitURL = "https://user:pw@github.com/" },
		"no record store":    func(c *signoffgh.Config) { c.Store = "" },
	} {
		c := good
		mutate(&c)
		if _, err := signoffgh.New(c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := signoffgh.New(good); err != nil {
		t.Fatal(err)
	}
}
