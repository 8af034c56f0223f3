// Package sitetest serves static implementations on a loopback address for tests that drive
// the real verifier against them: each page's HTML at its exact path, extra handlers, and
// /__verification answering with the commit SHA the implementation claims to be.
package sitetest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// Serve starts the site and closes it when the test ends. An empty sha makes
// /__verification answer 404; an extra handler for that path replaces it.
func Serve(t testing.TB, sha string, pages map[string]string, extra map[string]http.HandlerFunc) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	if _, own := extra["/__verification"]; !own {
		mux.HandleFunc("/__verification", func(w http.ResponseWriter, r *http.Request) {
			if sha == "" {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"commit_sha":%q}`, sha)
		})
	}
	for path, html := range pages {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != path {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			fmt.Fprint(w, html)
		})
	}
	for path, h := range extra {
		mux.HandleFunc(path, h)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}
