// Package settings is Signoff's one configuration: every environment variable in the README's
// configuration table, read once (Load) with its default into one struct. The command factory
// hands it out; commands and the composition root take its fields and never read the
// environment themselves, so a variable has one name, one default and one parser.
//
// Each field names its variable in an `env` tag and, where it has one, its default in a
// `default` tag; a test keeps the tags and the README's table in step. An empty string field
// whose doc says "the capability's default" leaves the choice to the package that owns it
// (a path under the repository's .cache, found from the working directory).
package settings

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Settings is the process's configuration.
type Settings struct {
	// DataDir holds keys, payment state, the index, proofs and remotes.
	DataDir string `env:"SIGNOFF_DATA_DIR" default:".signoff"`
	// TemporalAPIKey authenticates to an external cluster or Temporal Cloud (never a flag:
	// flags show in process lists).
	TemporalAPIKey string `env:"TEMPORAL_API_KEY"`
	// HeartbeatTimeout is how long a long activity of a contract this process starts (the
	// coding CLI, the build, verification) may go unheard before its worker counts as lost
	// and the activity is retried on another. Its workers heartbeat three times as often.
	HeartbeatTimeout time.Duration `env:"SIGNOFF_HEARTBEAT_TIMEOUT" default:"1m" want:"a Go duration from 3s to 1h"`

	Browser   Browser
	Stripe    Stripe
	GitHub    GitHub
	Executor  Executor
	Sentry    Sentry
	Authoring Authoring
	Chat      Chat

	// PackageManagersDir is where the pinned pnpm, yarn and bun are; "": the capability's
	// default (.cache/pm of the repository).
	PackageManagersDir string `env:"SIGNOFF_PM_DIR"`
	// StripeMock is the stripe-mock binary the local Stripe test double runs; "": the
	// capability's default (.bin/stripe-mock, then $PATH).
	StripeMock string `env:"SIGNOFF_STRIPE_MOCK"`
	// TestBarrier (DIR:<Activity>:start|applied) stops a worker at one activity point until a
	// file appears: the crash tests' hook. Production never sets it.
	TestBarrier string `env:"SIGNOFF_TEST_BARRIER"`
}

// Browser is where the verifier's browser comes from and how much real time it gets.
type Browser struct {
	// DriverDir is the Playwright driver; "": the capability's default.
	DriverDir string `env:"SIGNOFF_PW_DRIVER_DIR"`
	// Chromium is the local browser binary; "": the capability's default.
	Chromium string `env:"SIGNOFF_CHROMIUM"`
	// User is who a root worker runs local Chromium as; "": the capability's default.
	User string `env:"SIGNOFF_BROWSER_USER"`
	// RealTimeFactor is a criterion's real time per viewport as a multiple of its
	// max_runtime_ms, before the host's load stretches it.
	RealTimeFactor float64 `env:"SIGNOFF_VERIFY_REAL_TIME_FACTOR" default:"2" want:"a number from 1 to 20"`
	// AllowNoSandbox runs local Chromium without its sandbox where user namespaces are missing.
	AllowNoSandbox bool `env:"SIGNOFF_ALLOW_NO_BROWSER_SANDBOX" want:"1 or 0"`
	// CDPURL verifies in a remote browser over the DevTools protocol.
	CDPURL string `env:"SIGNOFF_CDP_URL"`
	// BrowserbaseAPIKey and BrowserbaseProjectID verify in Browserbase sessions; both needed.
	BrowserbaseAPIKey    string `env:"BROWSERBASE_API_KEY"`
	BrowserbaseProjectID string `env:"BROWSERBASE_PROJECT_ID"`
	// BrowserbaseURL is another Browserbase API base (tests: a loopback server).
	BrowserbaseURL string `env:"BROWSERBASE_API_URL"`
}

// Stripe switches payments from the local test double to Stripe.
type Stripe struct {
	SecretKey     string `env:"STRIPE_SECRET_KEY"`
	WebhookSecret string `env:"STRIPE_WEBHOOK_SECRET"`
	APIBase       string `env:"STRIPE_API_BASE"`
}

// GitHub switches the deliverable from the local bare remote to GitHub pull requests.
type GitHub struct {
	Token         string `env:"GITHUB_TOKEN"`
	WebhookSecret string `env:"GITHUB_WEBHOOK_SECRET"`
	APIURL        string `env:"GITHUB_API_URL"`
	GitURL        string `env:"GITHUB_GIT_URL"`
	BaseBranch    string `env:"GITHUB_BASE_BRANCH"`
}

// Executor configures the coding CLI of the command executor.
type Executor struct {
	// Command is the CLI's template ({prompt}, {prompt_file}, {workdir}); set, it is the
	// execute queue's default executor.
	Command string `env:"SIGNOFF_EXECUTOR_COMMAND"`
	// Stdin feeds the prompt on the CLI's standard input.
	Stdin bool `env:"SIGNOFF_EXECUTOR_STDIN" want:"1 or 0"`
	// PassEnv names variables the CLI may see besides PATH, LANG and TERM (comma or space
	// separated); the executor refuses Signoff's secrets.
	PassEnv []string `env:"SIGNOFF_EXECUTOR_PASS_ENV"`
	// Timeout is one run's limit; the composition root bounds it by the activity's.
	Timeout time.Duration `env:"SIGNOFF_EXECUTOR_TIMEOUT" default:"25m" want:"a Go duration such as 25m"`
	// Network is what the CLI may reach from its sandbox.
	Network string `env:"SIGNOFF_EXECUTOR_NETWORK" default:"egress" want:"egress or none"`
	// RunAs is the user the CLI runs as ("-": the worker's own, never root); "": the
	// preview user when the worker is root.
	RunAs string `env:"SIGNOFF_EXECUTOR_RUN_AS"`
}

// Sentry is the verify queue's runtime gate (AuthToken, Org, Project, URL) and Signoff's own
// error reports (DSN, Environment).
type Sentry struct {
	AuthToken   string `env:"SENTRY_AUTH_TOKEN"`
	Org         string `env:"SENTRY_ORG"`
	Project     string `env:"SENTRY_PROJECT"`
	URL         string `env:"SENTRY_URL"`
	DSN         string `env:"SENTRY_DSN"`
	Environment string `env:"SENTRY_ENVIRONMENT" default:"signoff"`
}

// Authoring bounds who may be quoted what, for `contract new` and chat alike.
type Authoring struct {
	// RepoAllowlist is the owner/name patterns that may be quoted and touched.
	RepoAllowlist []string `env:"SIGNOFF_REPO_ALLOWLIST" default:"signoff-fixtures/*,local/*"`
	// RepoReadToken reads a private https repository for a survey; never stored.
	RepoReadToken string `env:"SIGNOFF_REPO_READ_TOKEN"`
	// RateLimit is quote requests per requester per hour; 0 turns it off.
	RateLimit int `env:"SIGNOFF_RATE_LIMIT" default:"20" want:"a number of requests per hour (0 turns the limit off)"`
}

// Chat is the identities and the Agentverse account of the chat bridge and client.
type Chat struct {
	// AgentSeed is the bridge agent's identity; "": a seed generated once into the data dir.
	AgentSeed string `env:"SIGNOFF_AGENT_SEED"`
	// ClientSeed is `signoff chat`'s own identity; "": a seed kept in the data dir.
	ClientSeed       string `env:"SIGNOFF_CHAT_SEED"`
	AgentverseAPIKey string `env:"AGENTVERSE_API_KEY"`
	AgentverseTeam   string `env:"AGENTVERSE_TEAM"`
}

// Defaults are the settings of an empty environment.
func Defaults() Settings {
	s, err := Load(func(string) string { return "" })
	if err != nil {
		panic("settings: a default does not parse: " + err.Error())
	}
	return s
}

// Load reads every variable through getenv (nil: none set). A value that does not parse is
// an error naming the variable and what it wants; the other fields are still filled, and the
// bad one keeps its default.
func Load(getenv func(string) string) (Settings, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	var s Settings
	var errs []error
	walk(reflect.ValueOf(&s).Elem(), func(f reflect.StructField, v reflect.Value) {
		name := f.Tag.Get("env")
		def := f.Tag.Get("default")
		raw := strings.TrimSpace(getenv(name))
		if def != "" {
			if err := set(v, def); err != nil {
				panic(fmt.Sprintf("settings: default of %s: %v", name, err))
			}
		}
		if raw == "" {
			return
		}
		if err := set(v, raw); err != nil {
			errs = append(errs, badValue(f, raw))
			return
		}
		if msg := check(name, v); msg != "" {
			errs = append(errs, badValue(f, raw))
			_ = set(v, def) // back to the default (or zero)
		}
	})
	return s, errors.Join(errs...)
}

// Names lists every variable Settings reads, in field order.
func Names() []string {
	var out []string
	walk(reflect.ValueOf(&Settings{}).Elem(), func(f reflect.StructField, _ reflect.Value) {
		out = append(out, f.Tag.Get("env"))
	})
	return out
}

// walk calls fn for each tagged field, descending into the groups.
func walk(v reflect.Value, fn func(reflect.StructField, reflect.Value)) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Type.Kind() == reflect.Struct && f.Tag.Get("env") == "" {
			walk(v.Field(i), fn)
			continue
		}
		if f.Tag.Get("env") != "" {
			fn(f, v.Field(i))
		}
	}
}

var durationType = reflect.TypeFor[time.Duration]()

// set parses raw into v by v's type; an empty raw sets the zero value.
func set(v reflect.Value, raw string) error {
	if raw == "" {
		v.SetZero()
		return nil
	}
	switch {
	case v.Type() == durationType:
		d, err := time.ParseDuration(raw)
		if err != nil {
			return err
		}
		v.SetInt(int64(d))
	case v.Kind() == reflect.String:
		v.SetString(raw)
	case v.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return err
		}
		v.SetBool(b)
	case v.Kind() == reflect.Int:
		n, err := strconv.Atoi(raw)
		if err != nil {
			return err
		}
		v.SetInt(int64(n))
	case v.Kind() == reflect.Float64:
		x, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return err
		}
		v.SetFloat(x)
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.String:
		parts := strings.FieldsFunc(raw, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
		v.Set(reflect.ValueOf(parts))
	default:
		return fmt.Errorf("unsupported type %s", v.Type())
	}
	return nil
}

// check is each variable's range beyond its type; "" when the value is acceptable.
func check(name string, v reflect.Value) string {
	switch name {
	case "SIGNOFF_VERIFY_REAL_TIME_FACTOR":
		if x := v.Float(); !(x >= 1 && x <= 20) { // NaN too
			return "out of range"
		}
	case "SIGNOFF_EXECUTOR_TIMEOUT":
		if v.Int() <= 0 {
			return "not positive"
		}
	case "SIGNOFF_HEARTBEAT_TIMEOUT":
		// Under 3 s a heartbeat (every third of it) competes with a loaded worker's own
		// work; over an hour a lost worker holds its contract longer than anyone waits.
		if d := time.Duration(v.Int()); d < 3*time.Second || d > time.Hour {
			return "out of range"
		}
	case "SIGNOFF_EXECUTOR_NETWORK":
		if s := v.String(); s != "egress" && s != "none" {
			return "unknown"
		}
	case "SIGNOFF_RATE_LIMIT":
		if v.Int() < 0 {
			return "negative"
		}
	}
	return ""
}

func badValue(f reflect.StructField, raw string) error {
	want := f.Tag.Get("want")
	if want == "" {
		want = "a " + f.Type.String()
	}
	return fmt.Errorf("$%s=%q: want %s", f.Tag.Get("env"), raw, want)
}
