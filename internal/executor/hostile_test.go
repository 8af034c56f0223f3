//go:build unix

package executor_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/signoff/signoff/internal/hostiletest"
	"github.com/signoff/signoff/internal/localgit"
)

// TestHostileCLIChangesNothingOutsideItsSandbox runs a coding CLI that tries what a
// prompt-injected agent would: reach the host's services on loopback, read keys and a data
// dir left world-readable, look at the worker's processes, reach another contract's job,
// and leave a detached daemon and rewired git configuration behind. Every attempt fails;
// the attempt's own change is still committed, as Signoff.
func TestHostileCLIChangesNothingOutsideItsSandbox(t *testing.T) {
	var ports []string
	counters := map[string]func() int64{}
	for _, name := range []string{"temporal-frontend", "web-ui", "chat-endpoint", "stripe-double", "other-preview"} {
		port, reached := hostiletest.Service(t)
		ports = append(ports, strconv.Itoa(port))
		counters[name] = reached
	}

	// A key the worker keeps private, and a data dir someone left world-readable: the
	// sandbox mounts neither, whatever their modes.
	keys := filepath.Join(t.TempDir(), "keys")
	if err := os.Mkdir(keys, 0o700); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(keys, "control.key")
	if err := os.WriteFile(key, []byte("PRIVATE"), 0o600); err != nil {
		t.Fatal(err)
	}
	open, err := os.MkdirTemp("", "executor-open-data-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(open) })
	if err := os.Chmod(open, 0o755); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(open, "index.json")
	if err := os.WriteFile(index, []byte(`{"contracts":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	worker := strconv.Itoa(os.Getpid())
	paths := []string{key, keys, index, open, "/proc/" + worker + "/environ", "/root", "/etc/shadow"}

	e := newCmdEnv(t, "/bin/bash", script("hostile.sh"), "{dump}", strings.Join(ports, " "), strings.Join(paths, " "), "{other}", "{prompt_file}")
	other := filepath.Join(e.exec.JobsDir, "cmd-c-other-attempt-1", "repo")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, a := range e.exec.Argv {
		e.exec.Argv[i] = strings.ReplaceAll(a, "{other}", other)
	}
	e.exec.SecretPaths = []string{key}

	res, err := e.exec.Run(context.Background(), e.request(1))
	if err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(e.dump, "breaches")); err == nil {
		t.Errorf("the CLI got through:\n%s", data)
	}
	for name, reached := range counters {
		if n := reached(); n > 0 {
			t.Errorf("the %s stand-in was reached %d times", name, n)
		}
	}
	if entries, _ := os.ReadDir(other); len(entries) > 0 {
		t.Errorf("the other contract's job was written: %v", entries)
	}
	if left := hostiletest.Running(e.dump); len(left) > 0 {
		t.Errorf("survived the job: %v", left)
	}
	// The worker's own processes are not visible: only the sandbox's.
	seen := e.read(t, "seen")
	if strings.Contains(seen, filepath.Base(os.Args[0])) {
		t.Errorf("the CLI saw the worker's processes:\n%s", seen)
	}
	if pwned, _ := filepath.Glob(filepath.Join(e.dump, "pwned-*")); len(pwned) > 0 {
		t.Errorf("git ran the CLI's programs outside its sandbox: %v", pwned)
	}
	if got, _ := localgit.Git(context.Background(), e.remote, "show", res.CommitSHA+":index.html"); got != "hostile but harmless\n" {
		t.Fatalf("pushed index.html = %q", got)
	}
	if _, err := localgit.Git(context.Background(), e.remote, "cat-file", "-e", res.CommitSHA+":late.txt"); err == nil {
		t.Error("the detached daemon's late write reached the commit")
	}
	if data, _ := os.ReadFile(key); string(data) != "PRIVATE" {
		t.Error("the key changed")
	}
}
