// Ranking the files a goal touches, and the survey as people read it.

package survey

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/signoff/signoff/contracts"
)

// rankRelevant lists the files the goal most likely touches: page files of routes the goal
// names, files whose path or content mention its words, and the global stylesheet for layout
// work.
func (sv *surveyor) rankRelevant(goal string) {
	if strings.TrimSpace(goal) == "" {
		return
	}
	words := Keywords(goal)
	type scored struct {
		f      string
		score  int
		reason string
	}
	var list []scored
	layout := hasAny(strings.ToLower(goal), layoutWords)
	for _, f := range sv.appFiles() {
		ext := path.Ext(f)
		if !slices.Contains([]string{".ts", ".tsx", ".js", ".jsx", ".css", ".scss", ".mdx"}, ext) {
			continue
		}
		score, why := 0, ""
		lower := strings.ToLower(f)
		for _, w := range words {
			if strings.Contains(lower, w) {
				score += 5
				why = "path mentions " + w
			}
		}
		if layout && (ext == ".css" || ext == ".scss") {
			score += 3
			if why == "" {
				why = "stylesheet (layout change)"
			}
		}
		if score == 0 && len(words) > 0 {
			src := strings.ToLower(sv.r.ReadString(sv.p(f)))
			for _, w := range words {
				if n := strings.Count(src, w); n > 0 {
					score += min(n, 3)
					if why == "" {
						why = "mentions " + w
					}
				}
			}
		}
		if score > 0 {
			list = append(list, scored{f, score, why})
		}
	}
	sort.SliceStable(list, func(i, j int) bool {
		if list[i].score != list[j].score {
			return list[i].score > list[j].score
		}
		return list[i].f < list[j].f
	})
	for i := 0; i < len(list) && i < 8; i++ {
		sv.s.Relevant = append(sv.s.Relevant, RelevantFile{Path: list[i].f, Reason: list[i].reason})
	}
}

// Summary is a short human account of the survey.
func (s *Survey) Summary() string {
	var b strings.Builder
	where := ""
	if s.AppDir != "" {
		where = " (app in " + s.AppDir + "/)"
	}
	fmt.Fprintf(&b, "%s/%s @ %s%s\n", s.Repo.Owner, s.Repo.Name, contracts.ShortSHA(s.BaseSHA), where)
	fw := s.Framework.Name
	if s.Framework.Name == "nextjs" {
		fw = "Next.js " + s.Framework.Version + ", " + s.Framework.Router + " router"
	} else if s.Framework.Version != "" {
		fw += " " + s.Framework.Version
	}
	if !s.Framework.Supported {
		fw += " — not supported: " + s.Framework.Reason
	}
	lock := s.Lockfile
	if lock == "" {
		lock = "no lockfile"
	}
	var scripts, missing []string
	for _, n := range []string{"build", "start", "lint", "test"} {
		if s.Scripts[n] != "" {
			scripts = append(scripts, n)
		} else {
			missing = append(missing, n)
		}
	}
	fmt.Fprintf(&b, "%s; %s (%s); scripts: %s", fw, s.PackageManager, lock, strings.Join(scripts, ", "))
	if len(missing) > 0 {
		fmt.Fprintf(&b, " (none for %s)", strings.Join(missing, ", "))
	}
	b.WriteString("\n")
	if len(s.Pages) > 0 {
		var ps []string
		for _, p := range s.Pages {
			d := p.Route
			var tags []string
			switch {
			case p.Auth != nil && p.Auth.SignInRoute != "":
				tags = append(tags, "sign-in → "+p.Auth.SignInRoute)
			case p.Auth != nil:
				tags = append(tags, "session required")
			}
			for _, k := range p.Storage {
				tags = append(tags, fmt.Sprintf("localStorage %q", k.Key))
			}
			if len(tags) > 0 {
				d += " [" + strings.Join(tags, ", ") + "]"
			}
			ps = append(ps, d)
		}
		fmt.Fprintf(&b, "pages (%d): %s\n", len(s.Pages), strings.Join(ps, " · "))
	}
	if len(s.APIRoutes) > 0 {
		var as []string
		for _, a := range s.APIRoutes {
			d := strings.Join(a.Methods, ",") + " " + a.Route
			if a.Internal {
				d += " (Signoff hook)"
			}
			as = append(as, strings.TrimSpace(d))
		}
		fmt.Fprintf(&b, "API (%d): %s\n", len(s.APIRoutes), strings.Join(as, " · "))
	}
	switch {
	case s.SignIn != nil:
		fmt.Fprintf(&b, "sign-in: form at %s, demo account in %s\n", s.SignIn.Route, s.SignIn.CredentialsFrom)
	case s.SignInProblem != "":
		fmt.Fprintf(&b, "sign-in: %s\n", s.SignInProblem)
	}
	if len(s.Relevant) > 0 {
		var rs []string
		for _, r := range s.Relevant {
			rs = append(rs, r.Path)
		}
		fmt.Fprintf(&b, "relevant files: %s\n", strings.Join(rs, ", "))
	}
	for _, n := range s.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	return strings.TrimRight(b.String(), "\n")
}
