package contracts_test

import (
	"testing"

	"github.com/signoff/signoff/contracts"
)

func TestShortSHA(t *testing.T) {
	for in, want := range map[string]string{
		"":                  "",
		"abc":               "abc",
		"0123456789ab":      "0123456789ab",
		"0123456789abcdef0": "0123456789ab",
	} {
		if got := contracts.ShortSHA(in); got != want {
			t.Errorf("ShortSHA(%q) = %q, want %q", in, got, want)
		}
	}
}

// One rendering everywhere: major units, two decimals, the currency in capitals.
func TestPriceString(t *testing.T) {
	for _, c := range []struct {
		p    contracts.Price
		want string
	}{
		{contracts.Price{Amount: 4900, Currency: "usd"}, "49.00 USD"},
		{contracts.Price{Amount: 4905, Currency: "USD"}, "49.05 USD"},
		{contracts.Price{Amount: 7, Currency: "eur"}, "0.07 EUR"},
	} {
		if got := c.p.String(); got != c.want {
			t.Errorf("%+v.String() = %q, want %q", c.p, got, c.want)
		}
	}
}

func TestRepoKey(t *testing.T) {
	r := contracts.Repo{Owner: "signoff-fixtures", Name: "finance", URL: "file:///x", BaseCommitSHA: "abc"}
	if got := r.Key(); got != "signoff-fixtures/finance" {
		t.Fatalf("Key() = %q", got)
	}
}

// Every event type that records a failed side effect ends in _error and is told apart by
// IsErrorEvent; no other does.
func TestIsErrorEvent(t *testing.T) {
	for typ, want := range map[string]bool{
		contracts.EventLockError: true, contracts.EventPaymentCancelError: true, contracts.EventIndexError: true,
		contracts.EventVerdict: false, contracts.EventCaptureRefused: false, contracts.EventMergeEligibilityUnknown: false,
	} {
		if got := contracts.IsErrorEvent(typ); got != want {
			t.Errorf("IsErrorEvent(%q) = %v, want %v", typ, got, want)
		}
	}
}
