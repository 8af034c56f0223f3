package basecheck_test

import (
	"context"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	"github.com/signoff/signoff/authoring/survey"
	"github.com/signoff/signoff/fixtures/fixturerepo"
	"github.com/signoff/signoff/internal/preview"
	"github.com/signoff/signoff/internal/realapps"
)

// What a SaaS starter adds to create-next-app: a middleware that runs on every path but
// redirects only /dashboard without a session, and a sign-in page whose form is an imported
// component built from design-system components (shadcn's Input and Button), with the demo
// account its seed script creates.
var saasFiles = map[string]string{
	"middleware.ts": `import { NextResponse, type NextRequest } from "next/server";

const protectedRoutes = "/dashboard";

export async function middleware(request: NextRequest) {
  const { pathname } = request.nextUrl;
  if (pathname.startsWith(protectedRoutes) && !request.cookies.get("session")) {
    return NextResponse.redirect(new URL("/sign-in", request.url));
  }
  return NextResponse.next();
}

export const config = { matcher: ["/((?!api|_next/static|_next/image|favicon.ico).*)"] };
`,
	"app/pricing/page.tsx":   "export default function Pricing() {\n  return <main><h1>Pricing</h1><p>Base $8, Plus $12.</p></main>;\n}\n",
	"app/dashboard/page.tsx": "export default function Dashboard() {\n  return <main><h1>Team settings</h1></main>;\n}\n",
	"app/(login)/sign-in/page.tsx": `import { Login } from "../login";

export default function SignInPage() {
  return <Login mode="signin" />;
}
`,
	"app/(login)/login.tsx": `"use client";
import { Button } from "@/components/ui/button";
import { Input } from "@/components/ui/input";

export function Login({ mode }: { mode: "signin" | "signup" }) {
  return (
    <form action="/api/sign-in" method="post">
      <Input id="email" name="email" type="email" placeholder="Enter your email" required />
      <Input id="password" name="password" type="password" required />
      <Button type="submit">{mode === "signin" ? "Sign in" : "Sign up"}</Button>
    </form>
  );
}
`,
	"components/ui/input.tsx":  "import * as React from \"react\";\n\nexport function Input(props: React.ComponentProps<\"input\">) {\n  return <input data-slot=\"input\" {...props} />;\n}\n",
	"components/ui/button.tsx": "import * as React from \"react\";\n\nexport function Button(props: React.ComponentProps<\"button\">) {\n  return <button data-slot=\"button\" {...props} />;\n}\n",
	"lib/db/seed.ts":           "const email = \"test@test.com\";\nconst user = { email: \"test@test.com\", password: \"admin123\" };\nexport default user;\n",
}

// TestSurveyOnASaaSStarter is issue 27's survey must-show on an app made by create-next-app:
// the public home and pricing pages stay quotable under a middleware that gates only
// /dashboard, and the sign-in form in the imported component is found, with its account.
func TestSurveyOnASaaSStarter(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a Next.js app from the npm registry")
	}
	mod := moduleRoot(t)
	maker, err := realapps.NewMaker(mod, preview.DefaultUser, preview.FindPackageManagers(""), nil, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	tree, err := maker.Make(ctx, realapps.Recipes[1])
	if err != nil {
		t.Fatal(err)
	}
	app, err := realapps.Files(tree)
	if err != nil {
		t.Fatal(err)
	}
	for p, s := range saasFiles {
		app[p] = &fstest.MapFile{Data: []byte(s), Mode: 0o644}
	}
	repo := filepath.Join(t.TempDir(), "saas")
	base, err := fixturerepo.MaterializeFS(app, repo)
	if err != nil {
		t.Fatal(err)
	}
	src, err := survey.ResolveSource(ctx, repo, base, "acme/saas")
	if err != nil {
		t.Fatal(err)
	}
	s, err := survey.Read(ctx, src, survey.Options{})
	if err != nil {
		t.Fatal(err)
	}
	gated := map[string]bool{}
	for _, p := range s.Pages {
		gated[p.Route] = p.Auth != nil
	}
	for route, want := range map[string]bool{"/": false, "/pricing": false, "/sign-in": false, "/dashboard": true} {
		if got, ok := gated[route]; !ok || got != want {
			t.Errorf("%s: found %v, gated %v; want gated %v (pages %v)", route, ok, got, want, gated)
		}
	}
	si := s.SignIn
	if si == nil {
		t.Fatalf("no sign-in found: %s", s.SignInProblem)
	}
	if si.Route != "/sign-in" || si.EmailSelector != `input[name="email"]` || si.PasswordSelector != `input[name="password"]` ||
		si.SubmitSelector != `form button[type="submit"]` || si.Email != "test@test.com" || si.Password != "admin123" {
		t.Errorf("sign-in %+v", si)
	}
}
