// Next.js app router: the layouts that wrap a page.

package survey

import (
	"path"
	"strings"
)

// readFrame reads the layouts that wrap an app-router page (app/layout.tsx, then each
// folder's layout on the way down to the page) and the components they render: what the
// page shows around its own content.
func (sv *surveyor) readFrame(pageFile string) Anchors {
	var a Anchors
	m := pageFileRe.FindStringSubmatch(pageFile)
	if m == nil {
		return a
	}
	root := strings.TrimSuffix(pageFile, "page"+path.Ext(pageFile))
	root = strings.TrimSuffix(root, m[1]+"/")
	dirs := []string{strings.TrimSuffix(root, "/")}
	if m[1] != "" {
		acc := strings.TrimSuffix(root, "/")
		for _, seg := range strings.Split(m[1], "/") {
			acc += "/" + seg
			dirs = append(dirs, acc)
		}
	}
	for _, dir := range dirs {
		for _, ext := range []string{".tsx", ".jsx", ".js", ".ts"} {
			f := dir + "/layout" + ext
			src := sv.r.ReadString(sv.p(f))
			if src == "" {
				continue
			}
			readAnchors(src, &a)
			for _, imp := range sv.imports(f, src) {
				if ext := path.Ext(imp); ext == ".tsx" || ext == ".jsx" {
					readAnchors(sv.r.ReadString(sv.p(imp)), &a)
				}
			}
			break
		}
	}
	return a
}
