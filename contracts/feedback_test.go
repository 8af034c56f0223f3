package contracts

import (
	"encoding/json"
	"testing"
)

func TestFailedElementsNamesTheOffendersBesideTheFailedCheck(t *testing.T) {
	var ev Evidence
	if err := json.Unmarshal([]byte(`{"results": [
		{"criterion_id": "mobile-no-overflow", "observed": {
			"390x844/1.clipped_elements": 2,
			"390x844/1.clipped_offenders": [
				{"selector": "main > div.plans > section:nth-of-type(2)", "right": 734, "width": 320},
				{"selector": "main > div.plans > section:nth-of-type(3)", "right": 1078, "width": 320}],
			"1440x1000/1.clipped_offenders": [{"selector": "not failing here"}]}},
		{"criterion_id": "other", "observed": {"390x844/clipped_offenders": [{"selector": "x"}]}}]}`), &ev); err != nil {
		t.Fatal(err)
	}
	got := FailedElements(&ev, []Reason{
		{Criterion: "mobile-no-overflow", Check: "390x844/1.clipped_elements"},
		{Criterion: "mobile-no-overflow", Check: "390x844/1.clipped_elements"}, // named once
		{Code: "build_failed"},
	})
	if len(got) != 2 || got[0].Selector != "main > div.plans > section:nth-of-type(2)" || got[0].Right != 734 || got[1].Width != 320 {
		t.Fatalf("failed elements %+v", got)
	}
	if FailedElements(nil, nil) != nil {
		t.Fatal("no evidence names no element")
	}
}
