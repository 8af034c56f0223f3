package contracts

import "testing"

func TestOriginIsWhatABrowserWrites(t *testing.T) {
	for raw, want := range map[string]string{
		"https://preview.example.test/watchlist":  "https://preview.example.test",
		"HTTPS://Preview.Example.TEST:443/app":    "https://preview.example.test",
		"https://preview.example.test:0443/":      "https://preview.example.test",
		"https://preview.example.test:8443/x?y#z": "https://preview.example.test:8443",
		"http://preview.example.test:80":          "http://preview.example.test",
		"http://preview.example.test:443":         "http://preview.example.test:443",
		"http://127.0.0.1:3000/":                  "http://127.0.0.1:3000",
		"http://[::1]:80/x":                       "http://[::1]",
		"http://[::1]:8080/x":                     "http://[::1]:8080",
		"https://preview.example.test:99999/":     "",
		"https://preview.example.test:x/":         "",
		"about:blank":                             "",
		"/watchlist":                              "",
		"%zz":                                     "",
	} {
		if got := Origin(raw); got != want {
			t.Errorf("Origin(%q) = %q, want %q", raw, got, want)
		}
	}
}
