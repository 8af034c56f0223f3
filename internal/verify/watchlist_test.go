package verify

import (
	"os"
	"testing"

	"github.com/signoff/signoff/contracts"
)

// watchlistGood is the W1 outcome as a static page: cards below 640 px, the table above. It
// reads the seeded localStorage watchlist like the fixture app does.
var watchlistGood = page(`<style>
	table{width:100%;border-collapse:collapse} td,th{padding:8px;border-bottom:1px solid #ddd;text-align:left}
	.cards{display:none}
	@media (max-width:639px){table{display:none}.cards{display:grid;gap:8px}
		[data-testid="watchlist-card"]{border:1px solid #ddd;border-radius:8px;padding:12px}}
</style>`, `<h1>Watchlist</h1>
<table><thead><tr><th>Symbol</th><th>Name</th><th>Price</th><th>Change</th><th>Volume</th></tr></thead><tbody id="rows"></tbody></table>
<div class="cards" id="cards"></div>
<script>
	const names = {NVDA: 'Nvidia', AAPL: 'Apple', MSFT: 'Microsoft', SPY: 'S&P 500 ETF'};
	for (const s of JSON.parse(localStorage.getItem('watchlist') || '[]')) {
		document.getElementById('rows').insertAdjacentHTML('beforeend',
			'<tr data-symbol="' + s + '"><td>' + s + '</td><td>' + names[s] + '</td><td>100.00</td><td>+1.0%</td><td>1.2M</td></tr>');
		document.getElementById('cards').insertAdjacentHTML('beforeend',
			'<div data-testid="watchlist-card" data-symbol="' + s + '"><strong>' + s + '</strong> ' + names[s] + '<br>100.00 +1.0%</div>');
	}
</script>`)

// watchlistW2 is the W2 outcome: a "Mobile optimized" header, and the wide table still there.
var watchlistW2 = page(`<style>table{min-width:900px;border-collapse:collapse} td,th{padding:8px;text-align:left}</style>`,
	`<h1>Watchlist <small>Mobile optimized</small></h1>
<table><thead><tr><th>Symbol</th><th>Name</th><th>Price</th><th>Change</th><th>Volume</th></tr></thead><tbody id="rows"></tbody></table>
<script>
	for (const s of JSON.parse(localStorage.getItem('watchlist') || '[]')) {
		document.getElementById('rows').insertAdjacentHTML('beforeend',
			'<tr data-symbol="' + s + '"><td>' + s + '</td><td>Name of ' + s + '</td><td>100.00</td><td>+1.0%</td><td>1.2M</td></tr>');
	}
</script>`)

// loadW1 reads the W1 fixture contract and stamps it with this verifier's digest, as the
// contract freeze does.
func loadW1(t testing.TB) (*contracts.Contract, string) {
	t.Helper()
	data, err := os.ReadFile("../../fixtures/runs/W1/contract.json")
	if err != nil {
		t.Fatal(err)
	}
	c, err := contracts.Load(data, contracts.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.Verifier = Ref()
	h, err := contracts.Hash(*c)
	if err != nil {
		t.Fatal(err)
	}
	return c, h
}

func contractRequest(t testing.TB, c *contracts.Contract, hash, preview string) Request {
	return Request{
		ContractID:     c.ContractID,
		ContractHash:   hash,
		Attempt:        1,
		Criteria:       c.Criteria,
		EvidencePolicy: c.EvidencePolicy,
		Verifier:       c.Verifier,
		ExpectedSHA:    testSHA,
		PreviewURL:     preview,
		OutDir:         t.TempDir(),
	}
}
