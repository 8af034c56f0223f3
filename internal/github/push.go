package github

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// The branch goes to GitHub with git push from the bare remote, not through the Git Data API:
// a push moves the exact objects the execute queue committed, so the SHA Signoff verifies is
// the SHA on the PR (rebuilding the commit through the API would have to reproduce author,
// committer, dates and message byte for byte, and a large tree costs one call per blob).

// pushCommand builds the git push. The token is handed to git as an http.extraHeader through
// GIT_CONFIG_* environment variables, scoped to the GitHub URL: it is never in argv (which
// every local user can read in ps), never in the remote URL (which git echoes in errors),
// and no credential helper stores it.
func pushCommand(ctx context.Context, dir, gitURL, owner, name, sha, branch, token string) *exec.Cmd {
	remoteURL := gitURL + owner + "/" + name + ".git"
	cmd := exec.CommandContext(ctx, "git",
		"-c", "core.hooksPath=/dev/null", "-c", "safe.directory=*",
		"push", "--porcelain", remoteURL, sha+":refs/heads/"+branch)
	cmd.Dir = dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir(), "LANG=C",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=",
		"GIT_CONFIG_COUNT=2",
		"GIT_CONFIG_KEY_0=http." + gitURL + ".extraHeader",
		"GIT_CONFIG_VALUE_0=Authorization: Basic " + basicAuth(token),
		"GIT_CONFIG_KEY_1=credential.helper",
		"GIT_CONFIG_VALUE_1=",
	}
	return cmd
}

// basicAuth is how GitHub takes a token over git's HTTPS transport.
func basicAuth(token string) string {
	return base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token))
}

// pushBranch pushes sha to refs/heads/<branch> on GitHub. It never forces: a branch that
// moved on GitHub holds commits Signoff did not make, and overwriting them is not its call.
func pushBranch(ctx context.Context, dir, gitURL, owner, name, sha, branch, token string) error {
	cmd := pushCommand(ctx, dir, gitURL, owner, name, sha, branch, token)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		msg := redact(strings.TrimSpace(out.String()), token)
		if strings.Contains(msg, "[rejected]") || strings.Contains(msg, "non-fast-forward") || strings.Contains(msg, "fetch first") {
			return fmt.Errorf("push %s to %s/%s: the branch on GitHub has commits Signoff did not make; not overwriting them: %s", branch, owner, name, msg)
		}
		return fmt.Errorf("push %s to %s/%s: %w: %s", branch, owner, name, err, msg)
	}
	return nil
}

// redact removes the token, in every form git might print it, from text bound for a log.
func redact(s, token string) string {
	if token == "" {
		return s
	}
	s = strings.ReplaceAll(s, basicAuth(token), "[redacted]")
	return strings.ReplaceAll(s, token, "[redacted]")
}
