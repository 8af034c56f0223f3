package preview

import (
	"strings"
	"testing"
)

// Each log is what a tool prints when it fails (trimmed); the diagnosis quotes the line that
// says why and tells the requester what to do.
func TestDiagnose(t *testing.T) {
	for _, tc := range []struct {
		name, step, log, cause, next string
	}{
		{"berry under yarn 1's flags", "deps", "yarn install v1.22.22\nwarning package.json: No license field\n\x1b[31mUsage Error\x1b[39m: Unrecognized or legacy configuration settings found: enableInteractive - run \"yarn config -v\"\n\n$ yarn install [--json]\n",
			"Usage Error: Unrecognized or legacy configuration settings found: enableInteractive", "declare the release"},
		{"pnpm ignored builds", "deps", "Packages: +312\nProgress: resolved 312, reused 0\n ERR_PNPM_IGNORED_BUILDS  Ignored build scripts: sharp, unrs-resolver\n",
			"ERR_PNPM_IGNORED_BUILDS  Ignored build scripts: sharp, unrs-resolver", "packageManager"},
		{"npm ci out of sync", "deps", "npm error code EUSAGE\nnpm error\nnpm error `npm ci` can only install packages when your package.json and package-lock.json or npm-shrinkwrap.json are in sync. Please update your lock file with `npm install` before continuing.\nnpm error A complete log of this run can be found in: /x\n",
			"npm error `npm ci` can only install packages when your package.json and package-lock.json", "commit the lockfile"},
		{"berry lockfile", "deps", "➤ YN0000: ┌ Resolution step\n➤ YN0028: │ The lockfile would have been modified by this install, which is explicitly forbidden.\n➤ YN0000: └ Completed\n",
			"YN0028: │ The lockfile would have been modified by this install, which is explicitly forbidden.", "lockfile"},
		{"google font", "build", "   ▲ Next.js 16.0.0\n   Creating an optimized production build ...\nFailed to fetch font `Geist`: https://fonts.googleapis.com/css2?family=Geist\nError: getaddrinfo ENOTFOUND fonts.googleapis.com\n",
			"Error: getaddrinfo ENOTFOUND fonts.googleapis.com", "package registry only"},
		{"database url", "build", "Collecting page data ...\nError: POSTGRES_URL environment variable is not set\n    at Object.<anonymous> (/app/lib/db.ts:4:9)\n> Build error occurred\n",
			"Error: POSTGRES_URL environment variable is not set", "environment variable"},
		{"type error", "build", "Linting and checking validity of types ...\n./app/page.tsx:12:7\nType error: Property 'title' does not exist on type '{}'.\n",
			"Type error: Property 'title' does not exist on type '{}'.", "does not compile"},
		{"lint", "lint", "./app/page.tsx\n  3:10  Error: 'x' is defined but never used.  @typescript-eslint/no-unused-vars\n\n✖ 1 problem (1 error, 0 warnings)\n",
			"✖ 1 problem (1 error, 0 warnings)", "lint fails"},
		{"seed", "seed", "psql:.signoff/preview.sql:1: ERROR:  relation \"missing\" does not exist\nLINE 1: insert into missing values (1);\n",
			"psql:.signoff/preview.sql:1: ERROR:  relation \"missing\" does not exist", "make it create the tables"},
		{"no database", "build", "Collecting page data ...\nError: connect ECONNREFUSED 127.0.0.1:5432\n    at TCPConnectWrap.afterConnect\n",
			"Error: connect ECONNREFUSED 127.0.0.1:5432", "DATABASE_URL=${SIGNOFF_POSTGRES_URL}"},
		{"something else", "test", "running 3 tests\nFAIL  src/a.test.ts > adds\nAssertionError: expected 2 to be 3\n",
			"AssertionError: expected 2 to be 3", "run the test step"},
		{"silence", "build", "\n\n", "", "says no more"},
	} {
		cause, next := Diagnose(tc.step, []byte(tc.log))
		if !strings.HasPrefix(cause, tc.cause) || (tc.cause == "") != (cause == "") || !strings.Contains(next, tc.next) {
			t.Errorf("%s: cause %q next %q; want cause %q and a next step saying %q", tc.name, cause, next, tc.cause, tc.next)
		}
	}
	long := strings.Repeat("x", 1000) + " error\n"
	if cause, _ := Diagnose("build", []byte(long)); len(cause) > 310 {
		t.Errorf("a long line is quoted whole (%d bytes)", len(cause))
	}
}

// Each log is what a check tool prints when it fails (trimmed): the count a contract compares
// an attempt's failure against the base's by.
func TestCountErrors(t *testing.T) {
	for _, tc := range []struct {
		name, log string
		want      int
	}{
		{"eslint summary", "/app/a.tsx\n  3:10  error  'x' is defined but never used  no-unused-vars\n  4:1  warning  Unexpected console  no-console\n\n\x1b[31m✖ 2 problems (1 error, 1 warning)\x1b[39m\n", 1},
		{"eslint lines without a summary", "./app/page.tsx\n3:10  Error: 'x' is defined but never used.  @typescript-eslint/no-unused-vars\n7:2  Error: Unexpected any.  @typescript-eslint/no-explicit-any\n", 2},
		{"tsc", "app/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.\n\nFound 4 errors in 2 files.\n", 4},
		{"jest", "Tests:       2 failed, 8 passed, 10 total\nSnapshots:   0 total\n", 2},
		{"vitest", " Test Files  1 failed (1)\n      Tests  3 failed | 5 passed (8)\n", 3},
		{"node --test", "ℹ tests 4\nℹ pass 3\nℹ fail 1\n", 1},
		{"mocha", "  3 passing (12ms)\n  2 failing\n", 2},
		{"nothing counted", "Error: something broke\n", 0},
		{"warnings only", "✖ 3 problems (0 errors, 3 warnings)\nESLint found too many warnings (maximum: 0).\n", 0},
	} {
		if got := CountErrors([]byte(tc.log)); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}
