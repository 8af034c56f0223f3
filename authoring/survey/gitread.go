package survey

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
)

// Limits on what a survey reads: a repository is untrusted input.
const (
	maxTreeEntries = 50000
	maxFileBytes   = 512 << 10
)

// gitEnv is the environment of every git call: no user or system configuration (so no
// credential helper, pager or alias of the caller's applies), no prompts, no optional locks
// (a survey must not even refresh the index).
func gitEnv() []string {
	env := []string{
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_OPTIONAL_LOCKS=0",
		"LC_ALL=C",
	}
	// The CA settings let https clones work behind a corporate (or test) certificate authority.
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "GIT_SSL_CAINFO", "SSL_CERT_FILE"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// gitArgs prefixes settings that keep a repository's own config from running anything:
// fsmonitor and hooks are commands a hostile repository could name.
func gitArgs(args ...string) []string {
	fixed := []string{
		"-c", "core.fsmonitor=false",
		"-c", "core.hooksPath=/dev/null",
		"-c", "safe.directory=*",
		"-c", "protocol.ext.allow=never",
	}
	return append(fixed, args...)
}

// GitError is a failed git command with what it printed.
type GitError struct {
	Args   []string
	Err    error
	Stderr string
}

func (e *GitError) Error() string {
	return fmt.Sprintf("git %s: %v: %s", strings.Join(e.Args, " "), e.Err, e.Stderr)
}

func (e *GitError) Unwrap() error { return e.Err }

// runGit runs a read-only git command in dir and returns its standard output.
func runGit(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return runGitEnv(ctx, dir, nil, args...)
}

// runGitEnv is runGit with extra environment (a read credential for one host).
func runGitEnv(ctx context.Context, dir string, extra []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", gitArgs(args...)...)
	cmd.Dir = dir
	cmd.Env = append(gitEnv(), extra...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, &GitError{Args: args, Err: err, Stderr: strings.TrimSpace(stderr.String())}
	}
	return stdout.Bytes(), nil
}

// commitReader reads one commit's files through `git cat-file --batch`: one process for
// the whole survey, never the work tree.
type commitReader struct {
	dir, sha string

	mu     sync.Mutex
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	cache  map[string]readResult
	files  []string
	index  map[string]bool
}

type readResult struct {
	data []byte
	err  error
}

// errNoFile is returned for a path the commit does not have.
var errNoFile = errors.New("no such file in the commit")

// errTooLarge is returned for a file the survey will not read.
var errTooLarge = errors.New("file too large to survey")

func newCommitReader(ctx context.Context, dir, sha string) (*commitReader, error) {
	out, err := runGit(ctx, dir, "ls-tree", "-r", "-z", "--full-tree", "--name-only", sha)
	if err != nil {
		return nil, fmt.Errorf("list files of %s: %w", sha, err)
	}
	r := &commitReader{dir: dir, sha: sha, cache: map[string]readResult{}, index: map[string]bool{}}
	for _, name := range strings.Split(string(out), "\x00") {
		if name == "" {
			continue
		}
		if len(r.files) >= maxTreeEntries {
			return nil, fmt.Errorf("commit %s has more than %d files: too large to survey", sha, maxTreeEntries)
		}
		r.files = append(r.files, name)
		r.index[name] = true
	}
	cmd := exec.CommandContext(ctx, "git", gitArgs("cat-file", "--batch")...)
	cmd.Dir = dir
	cmd.Env = gitEnv()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start git cat-file: %w", err)
	}
	r.cmd, r.stdin, r.stdout = cmd, stdin, bufio.NewReaderSize(stdout, 64<<10)
	return r, nil
}

// Files lists every path in the commit.
func (r *commitReader) Files() []string { return r.files }

// Has reports whether the commit has the file.
func (r *commitReader) Has(path string) bool { return r.index[path] }

// Read returns a file's content at the commit.
func (r *commitReader) Read(path string) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if res, ok := r.cache[path]; ok {
		return res.data, res.err
	}
	data, err := r.read(path)
	r.cache[path] = readResult{data, err}
	return data, err
}

func (r *commitReader) read(path string) ([]byte, error) {
	if !r.index[path] {
		return nil, errNoFile
	}
	if strings.ContainsAny(path, "\n") {
		return nil, fmt.Errorf("path %q has a newline", path)
	}
	if _, err := fmt.Fprintf(r.stdin, "%s:%s\n", r.sha, path); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	header, err := r.stdout.ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	fields := strings.Fields(header)
	if len(fields) == 2 && fields[1] == "missing" {
		return nil, errNoFile
	}
	if len(fields) != 3 {
		return nil, fmt.Errorf("read %s: unexpected cat-file header %q", path, header)
	}
	size, err := strconv.ParseInt(fields[2], 10, 64)
	if err != nil {
		return nil, fmt.Errorf("read %s: size %q: %w", path, fields[2], err)
	}
	if fields[1] != "blob" || size > maxFileBytes {
		if _, err := io.CopyN(io.Discard, r.stdout, size+1); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		if fields[1] != "blob" {
			return nil, fmt.Errorf("%s is a %s, not a file", path, fields[1])
		}
		return nil, errTooLarge
	}
	buf := make([]byte, size+1) // content plus the trailing newline
	if _, err := io.ReadFull(r.stdout, buf); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return buf[:size], nil
}

// ReadString is Read for text; a missing or unreadable file reads as "".
func (r *commitReader) ReadString(path string) string {
	b, err := r.Read(path)
	if err != nil {
		return ""
	}
	return string(b)
}

// Close ends the cat-file process.
func (r *commitReader) Close() error {
	if r.cmd == nil {
		return nil
	}
	_ = r.stdin.Close()
	err := r.cmd.Wait()
	r.cmd = nil
	return err
}
