package contracts

import "testing"

// The syntax a contract may use for a role locator, and what it refuses.
func TestRoleLocatorSyntax(t *testing.T) {
	for _, ok := range []string{`role=link`, `role=link[name="Docs"]`, `role=link[name="Docs"i]`, `role=button[name="Save"s]`,
		`role=link[name=/^(?:Docs|GitHub)$/i]`, `role=heading[level=2][name="A \"b\""i]`, RoleSelector("link", "a.b (c)", "d|e")} {
		if _, err := ParseRoleLocator(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{`role=`, `role=banana`, `role=link[name=Docs]`, `role=link[level=1]`, `role=link[name="a"][name="b"]`,
		`role=link[name=/(?=x)/]`, `role=link[name=/(a/]`, `role=link[name="a"x]`, `role=link` + string(make([]byte, 600))} {
		if _, err := ParseRoleLocator(bad); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}
