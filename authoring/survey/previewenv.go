// How the survey proposes the environment a preview runs the app with: what the repository
// declares for previews, what its .env.example asks for, and the database its code uses.

package survey

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/signoff/signoff/contracts"
)

// maxEnvFile bounds an environment file the survey parses.
const maxEnvFile = 64 << 10

// envExamples are the files teams list their variables in, without values that matter.
var envExamples = []string{".env.example", ".env.sample", ".env.template", ".env.local.example", ".env.dist"}

// postgresClients are npm packages that talk to PostgreSQL over its own protocol (a socket
// works): an app that depends on one gets a throwaway database in its previews.
var postgresClients = []string{"pg", "postgres", "@vercel/postgres", "pg-promise", "slonik"}

var (
	postgresURLRe   = regexp.MustCompile(`^postgres(?:ql)?://`)
	secretNameRe    = regexp.MustCompile(`(?i)(SECRET|TOKEN|PASSWORD|PASSWD|PRIVATE|API_?KEY|_KEY$|^KEY$|CREDENTIAL|WEBHOOK)`)
	prismaPostgres  = regexp.MustCompile(`provider\s*=\s*"(postgresql|postgres)"`)
	dbScriptNameRes = regexp.MustCompile(`^(db:[\w:-]+|migrate[\w:-]*|seed[\w:-]*)$`)
)

// ParseEnvFile reads KEY=value lines as dotenv writes them: blank lines and # comments
// skipped, an optional "export ", values in single or double quotes or bare (a bare value
// ends at " #"). A malformed line, a name given twice or a variable a preview cannot take
// is an error naming its line.
func ParseEnvFile(data string) (map[string]string, error) {
	if len(data) > maxEnvFile {
		return nil, fmt.Errorf("%d bytes, at most %d", len(data), maxEnvFile)
	}
	out := map[string]string{}
	line := map[string]int{}
	for i, raw := range strings.Split(data, "\n") {
		n := i + 1
		name, value, err := envLine(raw)
		switch {
		case err != nil:
			return nil, fmt.Errorf("line %d: %v", n, err)
		case name == "":
			continue
		}
		if first, dup := line[name]; dup {
			return nil, fmt.Errorf("line %d: %s is already set on line %d", n, name, first)
		}
		if msg := contracts.PreviewEnvProblem(name, value); msg != "" {
			return nil, fmt.Errorf("line %d: %s", n, msg)
		}
		line[name] = n
		out[name] = value
		if len(out) > contracts.MaxPreviewEnv {
			return nil, fmt.Errorf("more than %d variables", contracts.MaxPreviewEnv)
		}
	}
	return out, nil
}

// exampleNames reads an example environment file as loosely as a person would: lines it
// cannot read and names a preview sets itself are passed over.
func exampleNames(data string) map[string]string {
	out := map[string]string{}
	if len(data) > maxEnvFile {
		return out
	}
	for _, raw := range strings.Split(data, "\n") {
		if name, value, err := envLine(raw); err == nil && name != "" && contracts.PreviewEnvProblem(name, value) == "" && len(out) < contracts.MaxPreviewEnv {
			out[name] = value
		}
	}
	return out
}

// envLine is one line of an environment file: "" for a blank line or a comment.
func envLine(raw string) (name, value string, err error) {
	l := strings.TrimSpace(strings.TrimSuffix(raw, "\r"))
	if l == "" || strings.HasPrefix(l, "#") {
		return "", "", nil
	}
	l = strings.TrimPrefix(l, "export ")
	name, value, ok := strings.Cut(l, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return "", "", fmt.Errorf("want NAME=value")
	}
	value = strings.TrimSpace(value)
	switch {
	case len(value) >= 2 && (value[0] == '"' || value[0] == '\'') && value[len(value)-1] == value[0]:
		value = value[1 : len(value)-1]
	case strings.HasPrefix(value, `"`) || strings.HasPrefix(value, "'"):
		return "", "", fmt.Errorf("%s's quote is not closed on its line", name)
	default:
		if i := strings.Index(value, " #"); i >= 0 {
			value = strings.TrimSpace(value[:i])
		}
	}
	return name, value, nil
}

// readPreviewEnv settles the preview's environment and services: the declared file wins;
// names an example file lists are proposed only where the survey knows a value (the
// throwaway database), and the rest are named in the notes, never asked for.
func (sv *surveyor) readPreviewEnv(deps map[string]string) {
	s := sv.s
	env := map[string]string{}
	if sv.r.Has(sv.p(contracts.PreviewEnvFile)) {
		declared, err := ParseEnvFile(sv.r.ReadString(sv.p(contracts.PreviewEnvFile)))
		if err != nil {
			s.PreviewEnvProblem = fmt.Sprintf("%s: %v", contracts.PreviewEnvFile, err)
			return
		}
		env = declared
	}
	usesPostgres := ""
	for _, c := range postgresClients {
		if _, ok := deps[c]; ok {
			usesPostgres = c
			break
		}
	}
	if _, ok := deps["@prisma/client"]; ok && usesPostgres == "" && prismaPostgres.MatchString(sv.r.ReadString(sv.p("prisma/schema.prisma"))) {
		usesPostgres = "@prisma/client"
	}
	var proposed, unset, secrets []string
	for _, f := range envExamples {
		if !sv.r.Has(sv.p(f)) {
			continue
		}
		example := exampleNames(sv.r.ReadString(sv.p(f)))
		for _, name := range slices.Sorted(maps.Keys(example)) {
			if _, ok := env[name]; ok {
				continue
			}
			switch {
			case postgresURLRe.MatchString(example[name]):
				env[name] = contracts.PostgresURLRef
				proposed = append(proposed, name)
				if usesPostgres == "" {
					usesPostgres = f
				}
			case secretNameRe.MatchString(name):
				secrets = append(secrets, name)
			default:
				unset = append(unset, name)
			}
		}
		break
	}
	for _, v := range env {
		if strings.Contains(v, contracts.PostgresURLRef) && usesPostgres == "" {
			usesPostgres = contracts.PreviewEnvFile
		}
	}
	if usesPostgres != "" {
		s.Services = []string{contracts.ServicePostgres}
		note := fmt.Sprintf("the app uses PostgreSQL (%s): each preview starts a throwaway PostgreSQL inside its sandbox, at %s", usesPostgres, contracts.PostgresURLRef)
		if len(proposed) > 0 {
			note += "; " + strings.Join(proposed, ", ") + " point there"
		}
		if sv.r.Has(sv.p(contracts.PreviewSeedFile)) {
			note += "; " + contracts.PreviewSeedFile + " is run on it before the build"
		} else {
			var scripts []string
			for _, name := range slices.Sorted(maps.Keys(s.Scripts)) {
				if dbScriptNameRes.MatchString(name) {
					scripts = append(scripts, name)
				}
			}
			note += "; it starts empty: commit the tables and rows the pages need as " + contracts.PreviewSeedFile
			if len(scripts) > 0 {
				note += " (previews do not run " + strings.Join(scripts, ", ") + ")"
			}
		}
		s.Notes = append(s.Notes, note)
	}
	if len(unset) > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("not set in previews: %s (listed in the app's example environment); if the build or the pages need them, commit non-secret values in %s", strings.Join(unset, ", "), contracts.PreviewEnvFile))
	}
	if len(secrets) > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("not set in previews, and never asked for: %s (secrets); the app must build and render without them", strings.Join(secrets, ", ")))
	}
	if len(env) > 0 {
		s.PreviewEnv = env
	}
}
