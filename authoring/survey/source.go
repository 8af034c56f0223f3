package survey

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/signoff/signoff/authoring/refusal"
)

// Source is the repository a contract is authored for: its identity (what the allowlist and
// the contract name), where its git data is, the commit-ish to pin, and the folder of the app
// inside it.
type Source struct {
	Owner string `json:"owner"`
	Name  string `json:"name"`
	// URL is what the contract records: the origin remote (credentials stripped), the URL
	// given, or file://<top level> for a repository without a remote.
	URL string `json:"url"`
	// GitDir is where git runs: the work tree's top level, a bare repository, or the clone of
	// a remote URL (empty until Fetch).
	GitDir string `json:"git_dir,omitempty"`
	// AppDir is the app's folder inside the repository, slash-separated, "" for the root.
	AppDir string `json:"app_dir,omitempty"`
	// Base is the commit-ish to pin (default HEAD).
	Base string `json:"base"`
	// Remote is set when GitDir must be cloned from URL first.
	Remote bool `json:"remote,omitempty"`
	// Uncommitted counts changes in the work tree the contract ignores (it is pinned to a commit).
	Uncommitted int `json:"uncommitted,omitempty"`
}

// Slug is owner/name, the form allowlist patterns match.
func (s *Source) Slug() string { return s.Owner + "/" + s.Name }

var (
	ownerRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)
	nameRe  = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)
	scpRe   = regexp.MustCompile(`^[A-Za-z0-9._-]+@([A-Za-z0-9.-]+):(.+)$`)
)

// ResolveSource turns --repo (a local path inside a repository, or a git URL) into a Source
// without reading any of the repository's files: admission runs on the identity before any
// survey or clone. name, when set ("owner/name"), overrides the identity of a local repository.
func ResolveSource(ctx context.Context, pathOrURL, base, name string) (*Source, error) {
	if strings.TrimSpace(pathOrURL) == "" {
		return nil, &refusal.InputError{Field: "repo", Reason: "a repository path or URL is required"}
	}
	if base == "" {
		base = "HEAD"
	}
	if strings.HasPrefix(base, "-") || strings.ContainsAny(base, " \t\n:") {
		return nil, &refusal.InputError{Field: "base", Reason: fmt.Sprintf("%q is not a commit-ish", base)}
	}
	var src *Source
	var err error
	if looksLikeURL(pathOrURL) {
		src, err = remoteSource(pathOrURL)
	} else {
		src, err = localSource(ctx, pathOrURL)
	}
	if err != nil {
		return nil, err
	}
	src.Base = base
	if name != "" {
		owner, n, ok := strings.Cut(name, "/")
		if !ok || !ownerRe.MatchString(owner) || !nameRe.MatchString(n) {
			return nil, &refusal.InputError{Field: "name", Reason: fmt.Sprintf("%q is not owner/name", name)}
		}
		src.Owner, src.Name = owner, n
	}
	return src, nil
}

func looksLikeURL(s string) bool {
	return strings.Contains(s, "://") || scpRe.MatchString(s)
}

func localSource(ctx context.Context, p string) (*Source, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, &refusal.InputError{Field: "repo", Reason: err.Error()}
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, &refusal.InputError{Field: "repo", Reason: err.Error()}
	}
	if !st.IsDir() {
		return nil, &refusal.InputError{Field: "repo", Reason: abs + " is not a directory"}
	}
	src := &Source{}
	if out, err := runGit(ctx, abs, "rev-parse", "--is-bare-repository"); err == nil && strings.TrimSpace(string(out)) == "true" {
		src.GitDir = abs
	} else {
		top, err := runGit(ctx, abs, "rev-parse", "--show-toplevel")
		if err != nil {
			return nil, &refusal.InputError{Field: "repo", Reason: abs + " is not inside a git repository"}
		}
		src.GitDir = strings.TrimSpace(string(top))
		prefix, err := runGit(ctx, abs, "rev-parse", "--show-prefix")
		if err != nil {
			return nil, fmt.Errorf("find the app folder: %w", err)
		}
		src.AppDir = strings.TrimSuffix(strings.TrimSpace(string(prefix)), "/")
		if status, err := runGit(ctx, src.GitDir, "status", "--porcelain", "--untracked-files=no"); err == nil {
			src.Uncommitted = strings.Count(string(status), "\n")
		}
	}
	origin := ""
	if out, err := runGit(ctx, src.GitDir, "config", "--get", "remote.origin.url"); err == nil {
		origin = strings.TrimSpace(string(out))
	}
	if owner, name, clean, ok := parseRepoURL(origin); ok {
		src.Owner, src.Name, src.URL = owner, name, clean
	} else {
		src.Owner, src.Name = "local", sanitizeName(filepath.Base(src.GitDir))
		src.URL = "file://" + filepath.ToSlash(src.GitDir)
	}
	return src, nil
}

func remoteSource(raw string) (*Source, error) {
	owner, name, clean, ok := parseRepoURL(raw)
	if !ok {
		return nil, &refusal.InputError{Field: "repo", Reason: fmt.Sprintf("cannot read owner/name from %q", raw)}
	}
	if u, err := url.Parse(raw); err == nil && u.User != nil && (strings.HasPrefix(u.Scheme, "http") || hasPassword(u.User)) {
		return nil, &refusal.InputError{Field: "repo", Reason: "the URL carries credentials: pass a URL without them (a private repository is read with a read-only token, SIGNOFF_REPO_READ_TOKEN)"}
	}
	switch {
	case strings.HasPrefix(raw, "https://"), strings.HasPrefix(raw, "ssh://"), strings.HasPrefix(raw, "file://"), scpRe.MatchString(raw):
	default:
		return nil, &refusal.InputError{Field: "repo", Reason: fmt.Sprintf("%q: only https, ssh and file URLs are read", raw)}
	}
	return &Source{Owner: owner, Name: name, URL: clean, Remote: true}, nil
}

func hasPassword(u *url.Userinfo) bool {
	_, ok := u.Password()
	return ok
}

// parseRepoURL reads owner and name from a git remote URL, and returns the URL without any
// credentials it carried.
func parseRepoURL(raw string) (owner, name, clean string, ok bool) {
	if raw == "" {
		return "", "", "", false
	}
	var p string
	if m := scpRe.FindStringSubmatch(raw); m != nil && !strings.Contains(raw, "://") {
		p, clean = m[2], raw
	} else {
		u, err := url.Parse(raw)
		if err != nil || u.Scheme == "" {
			return "", "", "", false
		}
		u.User = nil
		p, clean = u.Path, u.String()
	}
	p = strings.TrimSuffix(strings.Trim(path.Clean("/"+p), "/"), ".git")
	parts := strings.Split(p, "/")
	if len(parts) < 2 {
		return "", "", "", false
	}
	owner, name = parts[len(parts)-2], parts[len(parts)-1]
	if !ownerRe.MatchString(owner) || !nameRe.MatchString(name) {
		return "", "", "", false
	}
	return owner, name, clean, true
}

func sanitizeName(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			return r
		}
		return '-'
	}, s)
	if s == "" || s == "." || s == ".." {
		s = "repo"
	}
	if len(s) > 100 {
		s = s[:100]
	}
	return s
}

// Fetch makes a remote source readable: a bare clone under cacheDir, with no credential
// helper and no prompt. Without a token only what the URL gives anonymously is read; with
// one (a read-only token, for private https repositories) it is sent to the URL's own host
// and path only, in a header set through the environment: never in the URL, the command
// line or the clone's config. Local sources need nothing.
func (s *Source) Fetch(ctx context.Context, cacheDir, token string) error {
	if !s.Remote || s.GitDir != "" {
		return nil
	}
	if cacheDir == "" {
		return &refusal.InputError{Field: "repo", Reason: "a remote URL needs a directory to clone into"}
	}
	env, err := readCredential(s.URL, token)
	if err != nil {
		return err
	}
	dir := filepath.Join(cacheDir, sanitizeName(s.Owner)+"+"+sanitizeName(s.Name)+".git")
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err == nil {
		if _, err := runGitEnv(ctx, dir, env, "fetch", "--quiet", "--no-tags", "origin", "+HEAD:refs/heads/signoff-survey-head"); err != nil {
			return fmt.Errorf("update the clone of %s: %w", s.URL, err)
		}
		s.GitDir = dir
		return nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return fmt.Errorf("clone directory: %w", err)
	}
	if _, err := runGitEnv(ctx, cacheDir, env, "clone", "--quiet", "--bare", "--no-tags", "--", s.URL, dir); err != nil {
		return fmt.Errorf("clone %s: %w", s.URL, err)
	}
	s.GitDir = dir
	return nil
}

// resolveBase pins the commit.
func (s *Source) resolveBase(ctx context.Context) (string, error) {
	out, err := runGit(ctx, s.GitDir, "rev-parse", "--verify", "--quiet", "--end-of-options", s.Base+"^{commit}")
	if err != nil {
		return "", &refusal.InputError{Field: "base", Reason: fmt.Sprintf("%q is not a commit of %s", s.Base, s.Slug())}
	}
	return strings.TrimSpace(string(out)), nil
}

// readCredential is the environment that makes git send token to rawURL's host and path
// only: git's per-URL http.<url>.extraHeader, given as GIT_CONFIG_* variables. A token is
// for https; other URLs are refused rather than sent it.
func readCredential(rawURL, token string) ([]string, error) {
	if token == "" {
		return nil, nil
	}
	if strings.ContainsAny(token, "\r\n") {
		return nil, &refusal.InputError{Field: "token", Reason: "the read token contains a line break"}
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, &refusal.InputError{Field: "token", Reason: fmt.Sprintf("a read token is sent over https only, and %q is not an https URL", rawURL)}
	}
	scope := "https://" + u.Host + strings.TrimSuffix(u.EscapedPath(), "/")
	basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token))
	return []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http." + scope + ".extraHeader",
		"GIT_CONFIG_VALUE_0=Authorization: Basic " + basic}, nil
}
