package preview

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// VerificationPath is where a preview states the commit it serves. Signoff's proxy answers
// it; the app does not need a route of its own.
const VerificationPath = "/__verification"

// ProxyHeader marks every answer the proxy itself makes (not the app's), with the reason.
const ProxyHeader = "X-Signoff-Proxy"

// verificationProxy stands in front of a preview's app. It answers VerificationPath from
// what Signoff built, and passes every other request through to the app unchanged (the
// Host header included, so absolute URLs the app makes point back at the proxy).
//
// The app may answer VerificationPath itself (the finance fixture does, from
// SIGNOFF_COMMIT_SHA). When it claims a commit, that claim must be the built one: any other
// is a conflict, answered with 409 and no commit_sha, which the verifier reads as "no SHA"
// and the policy as verification_error. The conflicting claim is never passed on as the
// preview's commit, so an app cannot talk its way past a stale build.
type verificationProxy struct {
	builtSHA string
	upstream *url.URL
	client   *http.Client
	srv      *http.Server
	ln       net.Listener
	// advertise is the host the preview's URL names (see Config.Advertise).
	advertise string
}

// PortSpan is how many ports from Config.FirstPort the previews may take: one per
// preview running at once, so a firewall or a container's port mapping can name the range.
const PortSpan = 64

// startProxy listens on a free port of listenHost (any port, or the first free one of
// PortSpan from firstPort) in front of the app at appAddr (host:port); its URL names
// advertiseHost.
func startProxy(appAddr, builtSHA, listenHost, advertiseHost string, firstPort int) (*verificationProxy, error) {
	upstream := &url.URL{Scheme: "http", Host: appAddr}
	ln, err := listenProxy(listenHost, firstPort)
	if err != nil {
		return nil, fmt.Errorf("preview: proxy: %w", err)
	}
	p := &verificationProxy{
		builtSHA:  builtSHA,
		upstream:  upstream,
		ln:        ln,
		advertise: advertiseHost,
		client: &http.Client{
			Timeout: 10 * time.Second,
			// The app's own answer at this path is what counts, not where it points.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(upstream)
			r.Out.Host = r.In.Host
			r.SetXForwarded()
		},
		// Streamed responses (React server components, server-sent events) flush as they come.
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			w.Header().Set(ProxyHeader, "app-unreachable")
			http.Error(w, "signoff preview proxy: the app did not answer: "+err.Error(), http.StatusBadGateway)
		},
	}
	mux := http.NewServeMux()
	mux.HandleFunc(VerificationPath, p.verification)
	mux.Handle("/", rp)
	p.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

func listenProxy(host string, firstPort int) (net.Listener, error) {
	if firstPort == 0 {
		return net.Listen("tcp", net.JoinHostPort(host, "0"))
	}
	var last error
	for port := firstPort; port < firstPort+PortSpan && port <= 65535; port++ {
		ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err == nil {
			return ln, nil
		}
		last = err
	}
	return nil, fmt.Errorf("no free port in %d-%d (%d previews at once at most): %w", firstPort, firstPort+PortSpan-1, PortSpan, last)
}

// URL is the preview's address as the verifier sees it: the advertised host, the port the
// proxy listens on.
func (p *verificationProxy) URL() string {
	_, port, _ := net.SplitHostPort(p.ln.Addr().String())
	return "http://" + net.JoinHostPort(p.advertise, port)
}

// localURL reaches the proxy from this host, whatever it advertises (a name other hosts
// resolve, an address behind NAT).
func (p *verificationProxy) localURL() string { return "http://" + p.ln.Addr().String() }

// Close stops listening and ends every open connection.
func (p *verificationProxy) Close() { _ = p.srv.Close() }

// verificationBody is what VerificationPath answers.
type verificationBody struct {
	CommitSHA string `json:"commit_sha,omitempty"`
	// Source says who states the commit: "signoff-proxy" (the built directory's git HEAD).
	Source string `json:"source,omitempty"`
	Error  string `json:"error,omitempty"`
	// AppCommitSHA is what the app itself answered, when it differs.
	AppCommitSHA string `json:"app_commit_sha,omitempty"`
}

func (p *verificationProxy) verification(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		p.answer(w, r, http.StatusMethodNotAllowed, "method", verificationBody{Error: "only GET and HEAD"})
		return
	}
	claim, err := p.appClaim(r.Context())
	switch {
	case err != nil:
		// The app is down: the preview states nothing, and the verifier measures nothing.
		p.answer(w, r, http.StatusBadGateway, "app-unreachable", verificationBody{Error: "the app did not answer: " + err.Error()})
	case claim != "" && claim != p.builtSHA:
		p.answer(w, r, http.StatusConflict, "conflict", verificationBody{
			Error:        fmt.Sprintf("the app answers %s with commit %s, but Signoff built %s", VerificationPath, claim, p.builtSHA),
			AppCommitSHA: claim,
		})
	default:
		p.answer(w, r, http.StatusOK, "built", verificationBody{CommitSHA: p.builtSHA, Source: "signoff-proxy"})
	}
}

func (p *verificationProxy) answer(w http.ResponseWriter, r *http.Request, code int, reason string, body verificationBody) {
	w.Header().Set(ProxyHeader, reason)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	if r.Method != http.MethodHead {
		_ = json.NewEncoder(w).Encode(body)
	}
}

// appClaim asks the app for VerificationPath. A JSON object with a string commit_sha under
// 200 is a claim; any other answer (a 404 page, HTML from a catch-all route) is none. An
// error means the app did not answer HTTP at all.
func (p *verificationProxy) appClaim(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.upstream.JoinPath(VerificationPath).String(), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", nil
	}
	var body struct {
		CommitSHA any `json:"commit_sha"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&body); err != nil {
		return "", nil
	}
	switch v := body.CommitSHA.(type) {
	case nil:
		return "", nil
	case string:
		return strings.TrimSpace(v), nil
	default:
		// Not a commit, but a claim all the same: it cannot be the built one.
		return fmt.Sprint(v), nil
	}
}

var hostName = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,62}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*$`)

// CheckHost accepts what a preview URL may name as its host: an IP address or a DNS name,
// without a port, scheme or path (the port is the proxy's own).
func CheckHost(h string) error {
	if net.ParseIP(h) != nil {
		return nil
	}
	if len(h) > 253 || !hostName.MatchString(h) {
		return fmt.Errorf("%q is not an IP address or host name (no port: the preview picks its own)", h)
	}
	return nil
}
