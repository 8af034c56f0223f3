package survey

import (
	"testing"
)

func TestAppRoute(t *testing.T) {
	cases := map[string]string{
		"":                         "/",
		"watchlist":                "/watchlist",
		"(marketing)/about":        "/about",
		"shop/[id]":                "/shop/[id]",
		"%5F%5Fverification":       "/__verification",
		"_private/page":            "",
		"feed/(.)photo":            "",
		"@modal/settings":          "/settings",
		"dashboard/(group)/charts": "/dashboard/charts",
	}
	for dir, want := range cases {
		got, _, ok := appRoute(dir)
		if !ok {
			got = ""
		}
		if got != want {
			t.Errorf("appRoute(%q) = %q, want %q", dir, got, want)
		}
	}
}
