package survey

import (
	"path"
	"regexp"
	"slices"
	"strings"
)

// The origins besides its own that the app's pages load from: a stylesheet or font host named in
// a <link>, a script, an image, a CSS url() or @import. The verifier's browser blocks every other
// origin, so the contract must name these (allowed_origins) or the page would be measured
// without them. An origin is proposed only when the code names it literally with https.

// maxOriginFiles and maxOriginFileBytes bound what the scan reads.
const (
	maxOriginFiles     = 400
	maxOriginFileBytes = 256 << 10
	maxOrigins         = 20
)

var (
	originRefRe = regexp.MustCompile(`(?i)(?:\b(?:href|src|srcset)\s*=\s*\{?\s*["'` + "`" + `]|url\(\s*["']?|@import\s+["'])(https://[a-z0-9.-]+(?::[0-9]{1,5})?)[/"'` + "`" + `) ]`)
	// originRe is the contract schema's pattern for an allowed origin.
	originRe = regexp.MustCompile(`^https://[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+(:[0-9]{1,5})?$`)
)

var originExts = []string{".tsx", ".jsx", ".ts", ".js", ".mjs", ".css", ".scss", ".html", ".mdx"}

// readOrigins fills ExternalOrigins from the app's source files.
func (sv *surveyor) readOrigins() {
	seen := map[string]bool{}
	files := 0
	for _, f := range sv.r.Files() {
		if files >= maxOriginFiles || len(seen) >= maxOrigins {
			break
		}
		if sv.s.AppDir != "" && !strings.HasPrefix(f, sv.s.AppDir+"/") {
			continue
		}
		if strings.Contains(f, "node_modules/") || strings.Contains(f, ".test.") || strings.Contains(f, ".spec.") || !slices.Contains(originExts, path.Ext(f)) {
			continue
		}
		files++
		data, err := sv.r.Read(f)
		if err != nil || len(data) > maxOriginFileBytes {
			continue
		}
		for _, m := range originRefRe.FindAllStringSubmatch(string(data), -1) {
			o := strings.ToLower(m[1])
			if originRe.MatchString(o) && len(o) <= 255 && !seen[o] && len(seen) < maxOrigins {
				seen[o] = true
			}
		}
	}
	for o := range seen {
		sv.s.ExternalOrigins = append(sv.s.ExternalOrigins, o)
	}
	slices.Sort(sv.s.ExternalOrigins)
}
