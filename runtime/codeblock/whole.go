package codeblock

import (
	"path"
	"regexp"
	"slices"
	"strings"

	"flow/runtime/lang"
)

// Whole is one file an answer gives whole, in the declared whole-file
// format: a fenced block named by the file's path.
type Whole struct {
	Path string
	Text string
	// Elided names the line that leaves code out ("// ... rest unchanged"),
	// "" when there is none: such a block is not the whole file.
	Elided string
}

// WholeFiles returns the fenced blocks of answer that are named by a
// path: the last non-blank line before the fence (as `stats.go`,
// **stats.go**, `### File: stats.go` or "stats.go:"), or the fence's info
// string (```go stats.go, ```stats.go). A sentence ending in a colon that
// names one existing file ("Here's the updated `arrays.js`:") names its
// block only when the block keeps that file's top-level lines (keepsFile):
// a sentence over a fence of one changed function would otherwise replace
// the file with the function. A block's first line is dropped
// when it only names the block's own path in a comment ("// stats.go")
// and the file as it is (old, which may return "", false for a new file)
// does not start with it. A path named twice keeps its last block; an
// unclosed block (a reply cut short) and an unnamed one are left out.
func WholeFiles(answer string, old func(path string) (string, bool)) []Whole {
	var out []Whole
	at := map[string]int{}
	for _, b := range fenced(answer) {
		p := namedPath(b.hint)
		if p == "" {
			p = namedPath(b.info)
		}
		if p == "" {
			p = sentencePath(b.hint, old)
			if prev, _ := old(p); p == "" || !keepsFile(prev, b.body) {
				continue
			}
		}
		text := b.body
		if first, rest, ok := strings.Cut(text, "\n"); ok && commentNames(first, p) {
			if prev, exists := old(p); !exists || !strings.HasPrefix(prev, first+"\n") {
				text = rest
			}
		}
		prev, _ := old(p)
		w := Whole{Path: p, Text: text, Elided: elision(text, prev)}
		if i, ok := at[p]; ok {
			out[i] = w
			continue
		}
		at[p] = len(out)
		out = append(out, w)
	}
	return out
}

// fence is one closed fenced block, as written (not dedented: a whole
// file keeps its own indentation).
type fence struct {
	info string // the text after the opening ```
	hint string // the last non-blank line before it
	body string // its lines, each ending in "\n"
}

// fenced returns the closed fenced blocks of answer. The closing fence is
// a line of only backticks, at least as many as the opening one, so a
// file holding a shorter fence in a string stays whole.
func fenced(answer string) []fence {
	var (
		out  []fence
		cur  *fence
		tick string
		body strings.Builder
		prev string
	)
	for _, line := range strings.Split(answer, "\n") {
		t := strings.TrimSpace(line)
		if cur == nil {
			if strings.HasPrefix(t, "```") {
				n := len(t) - len(strings.TrimLeft(t, "`"))
				tick = t[:n]
				cur = &fence{info: strings.TrimSpace(t[n:]), hint: prev}
				body.Reset()
			} else if t != "" {
				prev = t
			}
			continue
		}
		if strings.HasPrefix(t, tick) && strings.Trim(t, "`") == "" {
			cur.body = body.String()
			out = append(out, *cur)
			cur, prev = nil, ""
			continue
		}
		body.WriteString(line)
		body.WriteString("\n")
	}
	return out
}

// namePattern is a workspace path as a model writes one: slash-separated
// names with an extension on the last (or a known extensionless name).
var namePattern = regexp.MustCompile(`^[A-Za-z0-9_.\-]+(/[A-Za-z0-9_.\-]+)*$`)

// namedPath returns the path a hint line or a fence's info string names,
// or "": decorations around it (list marks, headings, bold, backticks,
// "File:", a trailing colon, a language word before it) are dropped.
func namedPath(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimLeft(s, "#*->+ \t")
	// "stats.go (as the run found it):", "a.go (new file)": the name
	// before a parenthesised remark.
	if i := strings.Index(s, " ("); i > 0 {
		s = s[:i]
	}
	for _, w := range []string{"File:", "file:", "FILE:", "Path:", "path:", "Filename:", "filename:"} {
		s = strings.TrimSpace(strings.TrimPrefix(s, w))
	}
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return ""
	}
	// ```go stats.go, or a name with a language after it.
	cand := fields[len(fields)-1]
	if len(fields) > 1 && fenceLanguage(strings.Trim(fields[0], "`*")) != "" {
		cand = fields[1]
	} else if len(fields) > 2 {
		return "" // a sentence, not a name
	}
	cand = strings.Trim(cand, "`*\"':()[]")
	cand = strings.TrimPrefix(cand, "./")
	if cand == "" || !namePattern.MatchString(cand) || strings.Contains(cand, "..") {
		return ""
	}
	base := path.Base(cand)
	if !strings.Contains(base, ".") && base != "Makefile" && base != "Dockerfile" {
		return ""
	}
	if strings.HasPrefix(base, ".") && strings.Count(base, ".") == 1 && len(base) < 3 {
		return ""
	}
	return cand
}

// sentencePath returns the file a sentence over a fence names: the hint
// ends in a colon and, of its words, exactly one is the path of a file
// that exists (old); "" otherwise.
func sentencePath(hint string, old func(path string) (string, bool)) string {
	t := strings.TrimRight(strings.TrimSpace(hint), "*")
	if !strings.HasSuffix(t, ":") {
		return ""
	}
	found := ""
	for _, w := range strings.Fields(strings.TrimSuffix(t, ":")) {
		w = strings.TrimRight(strings.Trim(w, "`*\"'()[]"), ".,;")
		p := namedPath(w)
		if p == "" || p == found {
			continue
		}
		if _, exists := old(p); !exists {
			continue
		}
		if found != "" {
			return "" // two files: which one the block is cannot be told
		}
		found = p
	}
	return found
}

// keepsFile reports whether text, given as the whole of a file that now
// holds old, keeps old's top-level lines: each line of old that starts at
// the margin, other than imports and lines of only closing brackets, is
// one of text's lines. A whole file changed for a task keeps the
// definitions it does not touch, and their first lines with them.
func keepsFile(old, text string) bool {
	has := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		has[strings.TrimRight(line, " \t\r")] = true
	}
	for _, line := range strings.Split(old, "\n") {
		line = strings.TrimRight(line, " \t\r")
		switch {
		case line == "", line[0] == ' ' || line[0] == '\t',
			strings.Trim(line, ")]};,") == "",
			strings.HasPrefix(line, "import ") || strings.HasPrefix(line, "import(") || strings.HasPrefix(line, "from ") || strings.HasPrefix(line, "package "):
			continue
		}
		if !has[line] {
			return false
		}
	}
	return true
}

// commentNames reports whether line is a comment that only names p.
func commentNames(line, p string) bool {
	t := strings.TrimSpace(line)
	for _, c := range []string{"//", "#", "--", "/*", "<!--"} {
		if rest, ok := strings.CutPrefix(t, c); ok {
			rest = strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(rest, "*/"), "-->"))
			return namedPath(rest) == p
		}
	}
	return false
}

// elisionStart is how a comment that stands for left-out code begins
// ("// rest of the file unchanged", "# existing code"); a comment that
// only mentions such a word further on ("// leaves the count unchanged")
// is the file's own.
var elisionStart = regexp.MustCompile(`(?i)^\(?\s*(rest of|remainder of|remaining (code|functions|methods|lines)|existing (code|functions|methods|imports|tests)|unchanged|same as (before|above)|other (functions|methods|code)|omitted|code (omitted|unchanged))`)

// elision returns the first line of text that stands for code left out:
// a line of only "..." or "…", or a comment that says so ("// ... rest of
// the file", "# existing code unchanged"). A line the file as it was (old)
// already holds is the file's own (Python's "..." body, say). "" when
// there is none.
func elision(text, old string) string {
	had := map[string]bool{}
	for _, line := range strings.Split(old, "\n") {
		had[strings.TrimSpace(line)] = true
	}
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if had[t] {
			continue
		}
		if t == "..." || t == "…" {
			return t
		}
		for _, c := range []string{"//", "#", "/*", "<!--", "--"} {
			rest, ok := strings.CutPrefix(t, c)
			if !ok {
				continue
			}
			rest = strings.TrimSpace(rest)
			if strings.HasPrefix(rest, "...") || strings.HasPrefix(rest, "…") || elisionStart.MatchString(rest) ||
				strings.HasSuffix(rest, "...") || strings.HasSuffix(rest, "…") {
				return t
			}
		}
	}
	return ""
}

// LeftOut returns the top-level definitions of old, a file of language
// (as [lang.Decls] reads it), that text, given whole for that file, no
// longer defines, in old's order: functions, types, classes, methods (a
// Go method as "Type.Method", a Python class's as "Class.method") and
// bindings, by name. A definition that text gives under a new name (a new
// definition of its kind with more than half of its code lines, the name
// changed) is renamed, not left out. A small model asked for a whole file
// often gives the new function alone, or a test file with only its new
// tests, and the whole file would then delete the rest (doc/design.md
// §6.7). It is nil when either text cannot be read: whether anything is
// left out cannot be told, and the checks will say what the file does.
func LeftOut(language, old, text string) []string {
	if !lang.Scans(language) {
		return nil
	}
	before, ok := lang.Decls(language, old)
	if !ok {
		return nil
	}
	after, ok := lang.Decls(language, text)
	if !ok {
		return nil
	}
	has, had := declared(after), declared(before)
	var added []lang.Decl
	for _, d := range after {
		if d.Name != "" && !had[d.Name] {
			added = append(added, d)
		}
	}
	var out []string
	for _, d := range before {
		if d.Kind == lang.Import || d.Kind == lang.Package {
			continue
		}
		for _, n := range declNames(d) {
			switch {
			case n == "" || n == "_" || has[n] || slices.Contains(out, n):
			case n == d.Name && slices.ContainsFunc(added, func(a lang.Decl) bool { return renamed(old, d, text, a) }):
			default:
				out = append(out, n)
			}
		}
	}
	return out
}

// declNames are the names an item declares, its class's members with them.
func declNames(d lang.Decl) []string { return append(slices.Clone(d.Names), d.Members...) }

// declared is the set of the names items declare.
func declared(ds []lang.Decl) map[string]bool {
	out := map[string]bool{}
	for _, d := range ds {
		for _, n := range declNames(d) {
			out[n] = true
		}
	}
	return out
}

// renamed reports whether a, a definition of text, is d of old under a
// new name: of the same kind, holding more than half of d's code lines
// (blank lines and lines of closing brackets aside) with d's name
// replaced by a's.
func renamed(old string, d lang.Decl, text string, a lang.Decl) bool {
	if a.Kind != d.Kind {
		return false
	}
	lines := func(src string) []string {
		var out []string
		for _, l := range strings.Split(src, "\n") {
			if l = strings.TrimSpace(l); l != "" && strings.Trim(l, ")]};,") != "" {
				out = append(out, l)
			}
		}
		return out
	}
	mine := lines(strings.ReplaceAll(old[d.CodeStart:d.End], d.Name, a.Name))
	theirs := lines(text[a.CodeStart:a.End])
	kept := 0
	for _, l := range mine {
		if slices.Contains(theirs, l) {
			kept++
		}
	}
	return len(mine) > 0 && 2*kept > len(mine)
}
