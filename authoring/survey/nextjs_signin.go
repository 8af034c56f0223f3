// How the survey finds a sign-in a criterion can replay: the form, and demo credentials the
// repository itself ships.

package survey

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

var (
	// A form is often built from a design system's components (<Input type="email">,
	// <Button type="submit">), which render the same input and button elements with the
	// attributes passed through.
	signInInputRe = regexp.MustCompile(`<(?:input|Input|TextField|PasswordInput)\b[^>]*>`)
	submitRe      = regexp.MustCompile(`<(?:button|Button)\b[^>]*type=["']submit["']`)
	credObjRe     = regexp.MustCompile(`(?s)\{[^{}]*?\bemail\s*:\s*["']([^"'\s]+@[^"'\s]+)["'][^{}]*?\}`)
	credPassRe    = regexp.MustCompile(`\bpassword\s*:\s*["']([^"']+)["']`)
	credEnvRe     = regexp.MustCompile(`\bpassword\s*:\s*process\.env`)
	demoTextRe    = regexp.MustCompile(`(?i)demo[^<\n]{0,40}?([\w.+-]+@[\w.-]+\.\w+)\s*/\s*([^\s<{]+)`)
	credPathRe    = regexp.MustCompile(`(?i)(session|auth|demo|seed|user|account|fixture)[^/]*\.(ts|tsx|js|jsx|mjs)$`)
	submitAnyRe   = regexp.MustCompile(`<(?:button|Button)\b`)
)

// readSignIn finds the sign-in route the gated pages use and, if the repository commits a
// demo account, how to sign in with the browser.
func (sv *surveyor) readSignIn() {
	s := sv.s
	targets := map[string]int{}
	gated := false
	for _, pg := range s.Pages {
		if pg.Auth != nil {
			gated = true
			if pg.Auth.SignInRoute != "" {
				targets[pg.Auth.SignInRoute]++
			}
		}
	}
	if gated && len(targets) == 0 {
		// Pages check a session without naming a sign-in route: use the app's sign-in page.
		for _, pg := range s.Pages {
			if regexp.MustCompile(`^` + signInPath + `$`).MatchString(pg.Route) {
				targets[pg.Route]++
			}
		}
		if len(targets) == 0 {
			s.SignInProblem = "pages check for a session but the app has no sign-in page"
			return
		}
	}
	route := ""
	for t, n := range targets {
		if route == "" || n > targets[route] || n == targets[route] && t < route {
			route = t
		}
	}
	if route == "" {
		return // nothing is gated
	}
	pg := s.PageAt(route)
	if pg == nil {
		s.SignInProblem = "pages redirect to " + route + ", which is not a page of this app"
		return
	}
	// The form may be in a component the page imports (one level is followed).
	src := sv.r.ReadString(sv.p(pg.File))
	for _, imp := range pg.Imports {
		src += "\n" + sv.r.ReadString(sv.p(imp))
	}
	si := &SignIn{Route: route, File: pg.File}
	for _, tag := range signInInputRe.FindAllString(src, -1) {
		attrs := map[string]string{}
		for _, a := range attrRe.FindAllStringSubmatch(tag, -1) {
			attrs[a[1]] = a[2]
		}
		sel := inputSelector(attrs)
		switch {
		case attrs["type"] == "password" && si.PasswordSelector == "":
			si.PasswordSelector = sel
		case si.EmailSelector == "" && (attrs["type"] == "email" || slices.Contains([]string{"email", "username", "user", "login"}, strings.ToLower(attrs["name"]))):
			si.EmailSelector = sel
		}
	}
	switch {
	case submitRe.MatchString(src):
		si.SubmitSelector = `form button[type="submit"]`
	case submitAnyRe.MatchString(src):
		si.SubmitSelector = "form button"
	}
	if si.EmailSelector == "" || si.PasswordSelector == "" || si.SubmitSelector == "" {
		s.SignInProblem = route + " has no email/password form the browser can fill"
		return
	}
	// The demo account: the sign-in page, what it imports, and files named for sessions or
	// users. Credentials read from the environment are not in the repository.
	files := []string{pg.File}
	for _, imp := range pg.Imports {
		files = AppendUnique(files, imp)
		files = AppendUnique(files, sv.imports(imp, sv.r.ReadString(sv.p(imp)))...)
	}
	for _, f := range sv.appFiles() {
		if credPathRe.MatchString(f) && !strings.Contains(f, "test") {
			files = AppendUnique(files, f)
		}
	}
	envOnly := false
	for _, f := range files {
		fsrc := sv.r.ReadString(sv.p(f))
		for _, obj := range credObjRe.FindAllStringSubmatch(fsrc, -1) {
			if pm := credPassRe.FindStringSubmatch(obj[0]); pm != nil {
				si.Email, si.Password, si.CredentialsFrom = obj[1], pm[1], f
				s.SignIn = si
				return
			}
			if credEnvRe.MatchString(obj[0]) {
				envOnly = true
			}
		}
		if m := demoTextRe.FindStringSubmatch(fsrc); m != nil && !strings.Contains(m[2], "{") {
			si.Email, si.Password, si.CredentialsFrom = m[1], m[2], f
			s.SignIn = si
			return
		}
	}
	if envOnly {
		s.SignInProblem = "the demo password comes from the environment, not the repository: the verifier cannot sign in"
		return
	}
	s.SignInProblem = "no demo account is committed to the repository: the verifier cannot sign in to " + route
}

func inputSelector(attrs map[string]string) string {
	switch {
	case attrs["name"] != "":
		return fmt.Sprintf(`input[name=%q]`, attrs["name"])
	case attrs["id"] != "":
		return "#" + attrs["id"]
	case attrs["type"] != "":
		return fmt.Sprintf(`input[type=%q]`, attrs["type"])
	}
	return "input"
}
