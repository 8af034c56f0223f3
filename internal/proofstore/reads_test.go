package proofstore

import (
	"testing"

	"github.com/signoff/signoff/contracts"
)

func TestReadsOffOrigin(t *testing.T) {
	ev := &contracts.Evidence{PreviewURL: "http://127.0.0.1:4000/app", Results: []contracts.CriterionResult{
		{Reads: []contracts.Read{{URL: "http://127.0.0.1:4000/watchlist"}, {URL: ""}}},
	}}
	if off := readsOffOrigin(ev); off != "" {
		t.Errorf("reads on the preview were reported off origin: %s", off)
	}
	ev.Results = append(ev.Results, contracts.CriterionResult{Reads: []contracts.Read{{URL: "http://127.0.0.1:4001/watchlist"}}})
	if off := readsOffOrigin(ev); off != "http://127.0.0.1:4001/watchlist" {
		t.Errorf("a read on another port was not reported: %q", off)
	}
	ev.Results[1].Reads[0].URL = "https://127.0.0.1:4000/watchlist"
	if off := readsOffOrigin(ev); off == "" {
		t.Error("a read on another scheme was not reported")
	}
	// A preview written with its default port: its pages report the origin without it.
	ev = &contracts.Evidence{PreviewURL: "https://Preview.Example.TEST:443/", Results: []contracts.CriterionResult{
		{Reads: []contracts.Read{{URL: "https://preview.example.test/watchlist"}}},
	}}
	if off := readsOffOrigin(ev); off != "" {
		t.Errorf("a read on the preview written without its default port was reported off origin: %s", off)
	}
}
