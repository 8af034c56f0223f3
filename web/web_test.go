package web_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/activities/index"
	"github.com/signoff/signoff/activities/ledger"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/web"
	"github.com/signoff/signoff/workflows"
)

type recorder struct {
	mu      sync.Mutex
	signals []string
}

func (r *recorder) SignalWorkflow(ctx context.Context, id, run, name string, arg any) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.signals = append(r.signals, id+" "+name)
	return nil
}

func setup(t *testing.T) (*httptest.Server, *ledger.Ledger, *recorder, string) {
	t.Helper()
	dir := t.TempDir()
	l := ledger.Open(filepath.Join(dir, "ledger.json"), "")
	ps, err := l.Authorize(context.Background(), activities.AuthorizeRequest{ContractID: "c-one", ContractHash: strings.Repeat("ab", 32),
		Price: contracts.Price{Amount: 4900, Currency: "usd"}})
	if err != nil {
		t.Fatal(err)
	}
	x := index.Open(filepath.Join(dir, "index.json"))
	_ = x.Put(activities.IndexEntry{ContractID: "c-one", WorkflowID: workflows.WorkflowID("c-one"), State: "approved", ProofDir: "/p"})
	rec := &recorder{}
	lb := &web.Loopback{Index: x, Ledger: l, Signal: rec, UIURL: "http://127.0.0.1:8233", Namespace: "default"}
	srv := httptest.NewServer(lb.Handler())
	t.Cleanup(srv.Close)
	return srv, l, rec, ps.CheckoutSessionID
}

func TestIndexLinksIntoTheWebUI(t *testing.T) {
	srv, _, _, _ := setup(t)
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

func TestLocalCheckoutAuthorizesAndSignals(t *testing.T) {
	srv, l, rec, session := setup(t)
	page := readAll(t, srv.URL+"/checkout/"+session)
	if !strings.Contains(page, "no money moves") || !strings.Contains(page, "49.00 USD") {
		t.Fatalf("checkout page:\n%s", page)
	}
	// A form posted from another site is refused, and nothing changes.
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/checkout/"+session, nil)
	req.Header.Set("Origin", "https://evil.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || len(rec.signals) != 0 {
		t.Fatalf("cross-site post: %d, signals %v", resp.StatusCode, rec.signals)
	}
	resp, err = http.PostForm(srv.URL+"/checkout/"+session, url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	es, _ := l.Entries()
	if es[0].State != activities.PaymentAuthorized || len(rec.signals) != 1 || rec.signals[0] != "contract-c-one payment_authorized" {
		t.Fatalf("after paying: %s, signals %v", es[0].State, rec.signals)
	}
	if readAll(t, srv.URL+"/checkout/cs_unknown") == page {
		t.Fatal("an unknown checkout rendered")
	}
}
