// Reading a goal's words: the survey ranks the files a goal touches by them, and package
// criteria reads goals with the same words.

package survey

import (
	"regexp"
	"slices"
	"strings"
)

var wordRe = regexp.MustCompile(`[a-z0-9]+(?:['’-][a-z0-9]+)*`)

// Words are the words of s as goals are read: runs of letters and digits, with inner
// apostrophes and hyphens. Exported for package criteria, which makes slugs of them.
func Words(s string) []string { return wordRe.FindAllString(s, -1) }

var layoutWords = []string{"mobile", "responsive", "layout", "card", "cards", "table", "column", "columns", "grid",
	"breakpoint", "overflow", "screen", "screens", "phone", "phones", "wrap", "desktop"}

var stopwords = map[string]bool{"the": true, "and": true, "for": true, "with": true, "that": true, "this": true,
	"should": true, "would": true, "could": true, "make": true, "page": true, "pages": true, "screen": true, "from": true,
	"into": true, "each": true, "every": true, "when": true, "where": true, "while": true, "also": true, "just": true,
	"have": true, "show": true, "shows": true, "showing": true, "add": true, "adds": true, "work": true, "well": true,
	"instead": true, "keep": true, "kept": true, "below": true, "under": true, "their": true, "them": true, "they": true,
	"your": true, "user": true, "users": true, "people": true, "need": true, "needs": true, "want": true, "what": true,
	"which": true, "there": true, "than": true, "then": true, "goes": true, "only": true, "some": true, "more": true,
	"less": true, "still": true, "top": true, "new": true, "are": true, "was": true, "were": true, "been": true,
	"being": true, "onto": true, "over": true, "about": true, "like": true, "see": true, "display": true,
	"include": true, "includes": true, "return": true, "returns": true, "returned": true, "field": true, "value": true,
	"set": true, "get": true, "api": true, "endpoint": true, "mobile": true, "desktop": true, "responsive": true,
	"link": true, "label": true, "strip": true, "section": true, "button": true, "cards": true, "card": true,
	"table": true, "layout": true, "phones": true, "phone": true, "small": true, "screens": true, "wide": true,
	"signed": true, "signed-in": true, "sign": true, "app": true, "site": true, "view": true, "pointing": true}

// IsStopword reports whether w (lower case) is too common a word to identify anything.
// Exported for package criteria, which does not take such a word for a response field's name.
func IsStopword(w string) bool { return stopwords[w] }

// Keywords are the goal's content words (4+ letters, no stopwords), in order. Exported for
// package criteria, which matches pages and texts by the words the survey ranks files by.
func Keywords(goal string) []string {
	var out []string
	for _, w := range Words(strings.ToLower(goal)) {
		if len(w) >= 4 && !stopwords[w] {
			out = AppendUnique(out, w)
		}
	}
	return out
}

// hasAny reports whether s has one of the words.
func hasAny(s string, words []string) bool {
	for _, w := range Words(s) {
		if slices.Contains(words, w) {
			return true
		}
	}
	return false
}
