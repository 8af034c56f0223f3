// Package staticpreview previews a static site: it checks the commit out of the bare remote
// into a fresh job directory and serves the files on a loopback port, with /__verification
// answering the SHA read by `git rev-parse HEAD` in that directory. There is no build step, so
// the repository's code never runs; it is the preview for static stacks and for tests of the
// workflow machinery that must not pay for a framework build.
package staticpreview

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/hostcheck"
	"github.com/signoff/signoff/internal/localgit"
)

// Previews serves checked-out commits and states each one's SHA at /__verification.
type Previews struct {
	Remotes localgit.Remotes
	JobsDir string

	mu      sync.Mutex
	running map[string]*running
}

type running struct {
	srv  *http.Server
	dir  string
	root *os.Root
}

// Start checks out the commit and serves it.
func (p *Previews) Start(ctx context.Context, req capability.PreviewRequest) (capability.PreviewResult, error) {
	remote, err := p.Remotes.Path(req.Repo.Owner, req.Repo.Name)
	if err != nil {
		return capability.PreviewResult{}, capability.Refused(err)
	}
	if req.Stack.AppDir != "" {
		return capability.PreviewResult{}, capability.Refused(fmt.Errorf("the static preview serves repository roots, not the app folder %s/", req.Stack.AppDir))
	}
	started := time.Now()
	id := fmt.Sprintf("static-%s-a%d-t%d-%d", req.ContractID, req.Attempt, req.Try, started.UnixNano())
	dir := filepath.Join(p.JobsDir, id)
	if err := os.MkdirAll(p.JobsDir, 0o755); err != nil {
		return capability.PreviewResult{}, err
	}
	if _, err := localgit.Git(ctx, p.JobsDir, "clone", "--quiet", "--no-checkout", remote, dir); err != nil {
		return capability.PreviewResult{}, err
	}
	if _, err := localgit.Git(ctx, dir, "checkout", "--quiet", "--detach", req.CommitSHA); err != nil {
		os.RemoveAll(dir)
		return capability.PreviewResult{}, fmt.Errorf("check out %s: %w", req.CommitSHA, err)
	}
	out, err := localgit.Git(ctx, dir, "rev-parse", "HEAD")
	if err != nil {
		os.RemoveAll(dir)
		return capability.PreviewResult{}, err
	}
	sha := strings.TrimSpace(out)

	// The commit is hostile: a committed symlink (say, to the control key) must not be served.
	// os.Root refuses any path that resolves outside the checkout.
	root, err := os.OpenRoot(dir)
	if err != nil {
		os.RemoveAll(dir)
		return capability.PreviewResult{}, fmt.Errorf("static preview: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		root.Close()
		os.RemoveAll(dir)
		return capability.PreviewResult{}, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /__verification", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"commit_sha": sha})
	})
	mux.Handle("/", http.FileServer(noDotFiles{http.FS(root.FS())}))
	srv := &http.Server{Handler: hostcheck.Wrap(mux, ln.Addr()), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // ends with Shutdown
	p.mu.Lock()
	if p.running == nil {
		p.running = map[string]*running{}
	}
	p.running[id] = &running{srv: srv, dir: dir, root: root}
	p.mu.Unlock()
	build := contracts.BuildResult{Passed: true, Steps: []contracts.BuildStep{{Name: "checkout", Passed: true,
		DurationMS: time.Since(started).Milliseconds()}}}
	return capability.PreviewResult{PreviewID: id, URL: "http://" + ln.Addr().String(), Build: build}, nil
}

// Stop shuts a preview down and removes its job directory.
func (p *Previews) Stop(ctx context.Context, id string) error {
	p.mu.Lock()
	r := p.running[id]
	delete(p.running, id)
	p.mu.Unlock()
	if r == nil {
		return nil
	}
	err := r.srv.Shutdown(ctx)
	r.root.Close()
	os.RemoveAll(r.dir)
	return err
}

// noDotFiles hides .git and other dot files from the file server.
type noDotFiles struct{ fs http.FileSystem }

func (n noDotFiles) Open(name string) (http.File, error) {
	for _, part := range strings.Split(name, "/") {
		if strings.HasPrefix(part, ".") {
			return nil, os.ErrNotExist
		}
	}
	return n.fs.Open(name)
}
