package web_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/index"
	"github.com/signoff/signoff/web"
	"github.com/signoff/signoff/workflows/contractapi"
)

func setup(t *testing.T, checkoutBase string) *httptest.Server {
	t.Helper()
	x := index.Open(filepath.Join(t.TempDir(), "index.json"))
	_ = x.Put(capability.IndexEntry{ContractID: "c-one", WorkflowID: contractapi.WorkflowID("c-one"), State: "approved", ProofDir: "/p"})
	lb := &web.Loopback{Index: x, CheckoutBase: checkoutBase, UIURL: "http://127.0.0.1:8233", Namespace: "default"}
	srv := httptest.NewServer(lb.Handler())
	t.Cleanup(srv.Close)
	return srv
}

func TestIndexLinksIntoTheWebUI(t *testing.T) {
	srv := setup(t, "")
	body := readAll(t, srv.URL+"/")
	if !strings.Contains(body, "http://127.0.0.1:8233/namespaces/default/workflows/contract-c-one") || !strings.Contains(body, `href="/proofs/c-one/"`) {
		t.Fatalf("index page:\n%s", body)
	}
}

func readAll(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCheckoutLinkLeadsToTheTestDouble: the loopback checkout link sends the payer to the
// local Stripe test double's checkout page, which authorizes; the loopback listener itself
// authorizes nothing, and with real Stripe it has no checkout at all.
func TestCheckoutLinkLeadsToTheTestDouble(t *testing.T) {
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, u string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, u, nil)
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	srv := setup(t, "http://127.0.0.1:12111/")
	resp := do(http.MethodGet, srv.URL+"/checkout/cs_test_a1")
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != "http://127.0.0.1:12111/checkout/cs_test_a1" {
		t.Fatalf("checkout link: HTTP %d to %q", resp.StatusCode, loc)
	}
	if resp := do(http.MethodPost, srv.URL+"/checkout/cs_test_a1"); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("a post to the loopback checkout: HTTP %d, want 405 (only the double authorizes)", resp.StatusCode)
	}

	srv = setup(t, "")
	if resp := do(http.MethodGet, srv.URL+"/checkout/cs_test_a1"); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("checkout link with real Stripe: HTTP %d, want 404", resp.StatusCode)
	}
}
