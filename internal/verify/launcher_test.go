package verify

import (
	"slices"
	"strings"
	"testing"
)

func TestMergeFeatures(t *testing.T) {
	got := mergeFeatures([]string{
		"--a", "--disable-features=X,Y", "--enable-features=E", "--b=1",
		"--disable-features=Y,Z,", "--enable-features=F", "--disable-features-extra=Q",
	})
	want := []string{"--a", "--disable-features=X,Y,Z", "--enable-features=E,F", "--b=1", "--disable-features-extra=Q"}
	if !slices.Equal(got, want) {
		t.Errorf("mergeFeatures:\n got  %q\n want %q", got, want)
	}
	if got := mergeFeatures([]string{"--headless"}); !slices.Equal(got, []string{"--headless"}) {
		t.Errorf("no feature switch: %q", got)
	}
}

// TestBrowserLoadsNoBrowserUI: the launched browser is given Playwright's disabled features and
// LaunchArgs' in one switch, and a page's window comes without the omnibox's WebUI pages,
// each of which cost a renderer per page (most of a verification's browser CPU).
func TestBrowserLoadsNoBrowserUI(t *testing.T) {
	sess := testBrowserSession(t)
	// The browser's own command line, as chrome://version shows it.
	vctx, err := sess.Browser.NewContext()
	if err != nil {
		t.Fatal(err)
	}
	vpage, err := vctx.NewPage()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := vpage.Goto("chrome://version"); err != nil {
		t.Fatal(err)
	}
	line, err := vpage.Locator("#command_line").TextContent()
	if err != nil {
		t.Fatal(err)
	}
	if err := vctx.Close(); err != nil {
		t.Fatal(err)
	}
	var disabled []string
	for _, s := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(s, "--disable-features="); ok {
			if disabled != nil {
				t.Errorf("Chromium got --disable-features twice and keeps only the last")
			}
			disabled = strings.Split(v, ",")
		}
	}
	for _, f := range noBrowserUI {
		if !slices.Contains(disabled, f) {
			t.Errorf("%s is not among the disabled features %q", f, disabled)
		}
	}
	if len(disabled) <= len(noBrowserUI) {
		t.Errorf("Playwright's own disabled features are lost: %q", disabled)
	}

	cdp, err := sess.Browser.NewBrowserCDPSession()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cdp.Detach() }()
	srv := site(t, testSHA, map[string]string{"/watchlist": watchlistGood}, nil)
	bctx, err := sess.Browser.NewContext()
	if err != nil {
		t.Fatal(err)
	}
	defer bctx.Close()
	page, err := bctx.NewPage()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := page.Goto(srv.URL + "/watchlist"); err != nil {
		t.Fatal(err)
	}
	targets, err := cdp.Send("Target.getTargets", map[string]any{"filter": []any{map[string]any{}}})
	if err != nil {
		t.Fatal(err)
	}
	infos, _ := dig(targets, "targetInfos").([]any)
	for _, ti := range infos {
		typ, _ := dig(ti, "type").(string)
		url, _ := dig(ti, "url").(string)
		if typ == "browser_ui" || strings.HasPrefix(url, "chrome://") {
			t.Errorf("the browser loaded its own UI: %s %s", typ, url)
		}
	}
}
