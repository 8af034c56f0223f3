// Criteria for an endpoint change: http checks, no browser.

package criteria

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/signoff/signoff/authoring/refusal"
	"github.com/signoff/signoff/authoring/survey"
	"github.com/signoff/signoff/contracts"
)

// backendPlan builds http criteria for an endpoint change: no browser, no viewport.
func backendPlan(s *survey.Survey, it *intent, apis []string, d *Draft) error {
	route := apis[0]
	a := s.APIAt(route)
	if a != nil && a.Auth {
		return refusal.New(refusal.Auth, route+" answers only with a session, and http criteria carry no cookies", "choose a public endpoint or a page that uses it")
	}
	if len(it.fields) == 0 {
		return refusal.New(refusal.Unspecified, "the goal does not say which response field must have which value",
			`for example: add a currency field set to "USD" to each quote from `+route)
	}
	method := "GET"
	if it.method == "POST" && (a == nil || slices.Contains(a.Methods, "POST")) {
		method = "POST"
	}
	word := RouteWord(route)
	d.Scope = Scope{Endpoints: apis, BackendOnly: true}
	add := func(id, desc, role, why string, checks []contracts.JSONCheck, path string) {
		c := contracts.Criterion{ID: id, Description: desc, Route: path,
			Assert:       contracts.Assertion{Kind: contracts.KindHTTP, Method: method, Status: 200, JSON: checks},
			MaxRuntimeMS: 10000, RequiredArtifacts: []string{contracts.ArtifactObserved}}
		d.Criteria = append(d.Criteria, c)
		d.Plan = append(d.Plan, PlannedCriterion{ID: id, Role: role, Why: why})
	}
	add(word+"-status", fmt.Sprintf("%s %s answers 200.", method, route), RoleGuard, "the endpoint must keep answering", nil, route)
	col := (*survey.Collection)(nil)
	if a != nil {
		col = a.Collection
	}
	if col != nil && col.KeyField != "" && len(col.Items) > 0 {
		ptr := "/" + escapePointer(col.Member) + "/0/" + escapePointer(col.KeyField)
		add(word+"-shape", fmt.Sprintf("%s %s still returns %s[0].%s = %q.", method, route, col.Member, col.KeyField, col.Items[0]), RoleGuard,
			"the existing response shape must be preserved (items from "+col.From+")",
			[]contracts.JSONCheck{{Pointer: ptr, Operator: contracts.OpEQ, Expected: mustJSON(col.Items[0])}}, route)
	}
	fieldChecks := func(prefix string) []contracts.JSONCheck {
		var out []contracts.JSONCheck
		for _, f := range it.fields {
			out = append(out, contracts.JSONCheck{Pointer: prefix + "/" + escapePointer(f.Name), Operator: contracts.OpEQ, Expected: f.Value})
		}
		return out
	}
	names := make([]string, len(it.fields))
	for i, f := range it.fields {
		names[i] = fmt.Sprintf("%s = %s", f.Name, string(f.Value))
	}
	fieldID := slug(it.fields[0].Name)
	if col != nil && len(col.Items) > 0 {
		first := "/" + escapePointer(col.Member) + "/0"
		add(word+"-"+fieldID+"-first", fmt.Sprintf("%s %s returns %s on the first of %s.", method, route, humanList(names, "and"), col.Member), RoleChange,
			"the response field the goal asks for", fieldChecks(first), route)
		if n := len(col.Items); n > 1 {
			last := fmt.Sprintf("/%s/%d", escapePointer(col.Member), n-1)
			add(word+"-"+fieldID+"-last", fmt.Sprintf("%s %s returns %s on the last of %s (item %d).", method, route, humanList(names, "and"), col.Member, n), RoleChange,
				"every item carries the field, not just the first", fieldChecks(last), route)
		}
	} else {
		add(word+"-"+fieldID, fmt.Sprintf("%s %s returns %s.", method, route, humanList(names, "and")), RoleChange,
			"the response field the goal asks for", fieldChecks(""), route)
	}
	// Fill up to the minimum with what must keep answering: the home page, then other public
	// endpoints.
	var extra []string
	if s.PageAt("/") != nil && s.PageAt("/").Auth == nil {
		extra = append(extra, "/")
	}
	for _, o := range s.APIRoutes {
		if o.Route != route && !o.Internal && !o.Auth && slices.Contains(o.Methods, "GET") {
			extra = append(extra, o.Route)
		}
	}
	for _, r := range extra {
		if len(d.Criteria) >= contracts.MinCriteria {
			break
		}
		add(RouteWord(r)+"-still-serves", fmt.Sprintf("GET %s still answers 200.", r), RoleGuard, "the rest of the app keeps serving", nil, r)
	}
	if len(d.Criteria) < contracts.MinCriteria {
		return refusal.New(refusal.Unspecified, "the endpoint change gives fewer than four independent checks",
			"name more fields and values, or the items the response should hold")
	}
	return nil
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
