// Package codeblock turns the code a model wrote in its answer into
// changes of workspace files.
//
// A small model asked to change a file often answers with the changed
// code in a fenced block instead of calling an edit tool: a whole
// function, a whole file, or both files of a two-file change. Changes
// reads those blocks (Go, Python, JavaScript/TypeScript) and matches
// their top-level declarations by name with the workspace's files: a
// declaration a file defines is replaced by the block's version, a new
// one is added to the file the block names or whose declarations it
// changes, and imports the block adds are added to the file. Go text is
// parsed with go/parser and formatted with go/format; the other languages
// are read by their unindented lines, as a formatter lays them out.
//
// Nothing is written here: the caller applies the changes through its
// file tools, and its checks and reviewer judge them like any edit.
package codeblock

import (
	"go/format"
	"go/parser"
	"go/token"
	"path"
	"regexp"
	"slices"
	"strings"

	"flow/runtime/lang"
)

// File is a workspace source file that an answer's code may change.
type File struct {
	Path     string // slash-separated, relative to the workspace
	Language string // "go", "python", "javascript" or "typescript"
	Text     string
}

// Change is the new text of one file.
type Change struct {
	Path     string
	Old, New string
	// Replaced and Added name the declarations the change replaced and
	// added, in the order of the answer.
	Replaced, Added []string
}

// Changes returns the changes the code blocks of answer make to files,
// in the order of files; task (the user's task text) helps place a new
// declaration. A block whose declarations cannot be placed in exactly one
// file each, or that does not parse, changes nothing; a declaration that
// equals the file's is no change.
func Changes(answer, task string, files []File) []Change {
	out, _ := read(answer, task, files)
	return out
}

// Echo names the declarations of one file that an answer's code repeats
// exactly as the file has them.
type Echo struct {
	Path  string
	Names []string
}

// Echoes returns, in the order of files, the declarations that the code
// blocks of answer give exactly as a file already has them, for the files
// the answer does not change. A small model asked for a change often
// copies the code it was shown and says the task is done; the caller can
// then name what was copied instead of only saying that nothing changed.
func Echoes(answer, task string, files []File) []Echo {
	_, echoes := read(answer, task, files)
	return echoes
}

// read places the code blocks of answer in files: the changes they make
// and the echoes of the files they leave as they are.
func read(answer, task string, files []File) ([]Change, []Echo) {
	var c changer
	c.files = files
	c.task = task
	c.texts = map[string]string{}
	c.parsed = map[string]parsed{}
	c.echoes = map[string][]string{}
	for _, f := range files {
		if p, ok := parse(f.Language, f.Text); ok {
			c.texts[f.Path] = f.Text
			c.parsed[f.Path] = p
		}
	}
	c.changes = map[string]*Change{}
	for _, b := range blocks(answer) {
		for _, seg := range c.segments(b) {
			c.apply(seg)
		}
	}
	var (
		out    []Change
		echoes []Echo
	)
	for _, f := range files {
		ch := c.changes[f.Path]
		if ch == nil {
			if names := c.echoes[f.Path]; len(names) > 0 {
				echoes = append(echoes, Echo{Path: f.Path, Names: names})
			}
			continue
		}
		ch.New = c.texts[f.Path]
		if f.Language == "go" {
			// format.Source also takes a list of declarations without a
			// package clause, so the result is parsed as a whole file too.
			formatted, err := format.Source([]byte(ch.New))
			if err == nil {
				_, err = parser.ParseFile(token.NewFileSet(), f.Path, formatted, parser.SkipObjectResolution)
			}
			if err != nil {
				continue // the result does not parse: leave the file alone
			} else if gofmtClean(ch.Old) {
				ch.New = string(formatted)
			}
		}
		if ch.New != ch.Old {
			out = append(out, *ch)
		} else if names := append(c.echoes[f.Path], ch.Replaced...); len(names) > 0 {
			echoes = append(echoes, Echo{Path: f.Path, Names: names}) // differed in layout only
		}
	}
	return out, echoes
}

// gofmtClean reports whether Go source is already formatted, so that
// formatting the changed file changes only the new code.
func gofmtClean(src string) bool {
	f, err := format.Source([]byte(src))
	return err == nil && string(f) == src
}

// block is one fenced block of an answer.
type block struct {
	lang string // a File.Language
	code string // dedented
	hint string // the text just before the fence (a line naming the file)
}

// fenceLanguage maps a fence's tag to a language.
func fenceLanguage(tag string) string {
	switch strings.ToLower(tag) {
	case "go", "golang":
		return "go"
	case "python", "py", "python3":
		return "python"
	case "javascript", "js", "jsx", "mjs", "node":
		return "javascript"
	case "typescript", "ts", "tsx":
		return "typescript"
	}
	return ""
}

// blocks returns the complete fenced blocks of answer in a language this
// package reads; an unclosed block (a reply cut short) is left out.
func blocks(answer string) []block {
	var (
		out  []block
		cur  *block
		body []string
		prev string // the last non-blank line outside a block
	)
	for _, line := range strings.Split(answer, "\n") {
		t := strings.TrimSpace(line)
		if cur == nil {
			if tag, ok := strings.CutPrefix(t, "```"); ok {
				tag, _, _ = strings.Cut(strings.TrimSpace(tag), " ")
				cur = &block{lang: fenceLanguage(tag), hint: prev}
				body = body[:0]
			} else if t != "" {
				prev = t
			}
			continue
		}
		if strings.HasPrefix(t, "```") {
			if cur.lang != "" {
				cur.code = dedent(body)
				out = append(out, *cur)
			}
			cur, prev = nil, ""
			continue
		}
		body = append(body, line)
	}
	return out
}

// dedent removes the indentation all non-blank lines share (a block
// indented under a list item) and returns the lines joined.
func dedent(lines []string) string {
	prefix := ""
	first := true
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		ind := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		if first {
			prefix, first = ind, false
			continue
		}
		for !strings.HasPrefix(ind, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimRight(strings.TrimPrefix(l, prefix), " \t\r")
	}
	return strings.Join(out, "\n") + "\n"
}

// changer accumulates the changes of one answer.
type changer struct {
	files   []File
	task    string
	texts   map[string]string // current text by path
	parsed  map[string]parsed // parsed current text by path
	changes map[string]*Change
	echoes  map[string][]string // names given as the file has them, by path
}

// segment is the code of one file: a block, or the part of a block after
// a comment line naming a file.
type segment struct {
	lang string
	code string
	file string // the workspace file the block or comment names, "" when none
}

// pathToken is a path of a file this package reads, as an answer or a task
// writes it: the extensions are those of the languages lang.Decls reads,
// in any case.
var pathToken = regexp.MustCompile(`[A-Za-z0-9_./-]+(?i:` + lang.ExtensionPattern(lang.Scans) + `)\b`)

// named returns the workspace file of language family lang that text
// names: a path, or a base name only one file has.
func (c *changer) named(text, lang string) string {
	for _, tok := range pathToken.FindAllString(text, -1) {
		tok = strings.TrimPrefix(path.Clean(strings.TrimPrefix(tok, "./")), "/")
		var match []string
		for _, f := range c.files {
			if family(f.Language) != family(lang) {
				continue
			}
			if f.Path == tok || strings.HasSuffix(f.Path, "/"+tok) {
				match = append(match, f.Path)
			}
		}
		if len(match) == 1 {
			return match[0]
		}
	}
	return ""
}

func family(lang string) string {
	if lang == "typescript" {
		return "javascript"
	}
	return lang
}

// segments splits a block at its unindented comment lines whose first
// word names a workspace file ("// cart.js (updated)", "# file: slug.py"),
// and names each part's file.
func (c *changer) segments(b block) []segment {
	comment := "//"
	if b.lang == "python" {
		comment = "#"
	}
	cur := segment{lang: b.lang, file: c.named(b.hint, b.lang)}
	var out []segment
	var lines []string
	for _, line := range strings.SplitAfter(b.code, "\n") {
		if f := c.fileComment(line, comment, b.lang); f != "" {
			if strings.TrimSpace(strings.Join(lines, "")) != "" {
				cur.code = strings.Join(lines, "")
				out = append(out, cur)
			}
			cur, lines = segment{lang: b.lang, file: f}, nil
			continue
		}
		lines = append(lines, line)
	}
	cur.code = strings.Join(lines, "")
	return append(out, cur)
}

// fileComment returns the workspace file that an unindented comment line
// names as its first word, "" for any other line.
func (c *changer) fileComment(line, comment, lang string) string {
	rest, ok := strings.CutPrefix(line, comment)
	if !ok {
		return ""
	}
	words := strings.Fields(rest)
	if len(words) > 1 && strings.EqualFold(words[0], "file:") {
		words = words[1:]
	}
	if len(words) == 0 {
		return ""
	}
	word := strings.TrimRight(strings.TrimPrefix(words[0], "file:"), ",:;")
	if pathToken.FindString(word) != word {
		return ""
	}
	return c.named(word, lang)
}

// apply places the declarations of one segment.
func (c *changer) apply(seg segment) {
	p, ok := parse(seg.lang, seg.code)
	if !ok {
		return
	}
	var touched []string // files this segment changed or defines names in
	var added []decl
	for _, d := range p.decls {
		if d.name == "" || d.isImport {
			continue
		}
		target, defined := c.definer(d.name, seg)
		if target == "" {
			if defined == 0 {
				added = append(added, d)
			}
			continue // several files define it: which one is meant is unclear
		}
		if !slices.Contains(touched, target) {
			touched = append(touched, target)
		}
		c.replace(target, d, p)
	}
	for _, d := range added {
		target := c.home(d, seg, touched)
		if target == "" || (family(seg.lang) == "go" && d.name == "main" && c.parsed[target].goPackage != "package main") {
			continue // nowhere to put it, or a usage example's main
		}
		if !slices.Contains(touched, target) {
			touched = append(touched, target)
		}
		c.add(target, d, p)
	}
	for _, target := range touched {
		if c.changes[target] != nil {
			c.addImports(target, p)
		}
	}
}

// definer returns the file that defines name: the segment's named file
// when it does, else the only file of the language that does; and how many
// files define it.
func (c *changer) definer(name string, seg segment) (string, int) {
	var found []string
	for _, f := range c.files {
		if family(f.Language) != family(seg.lang) {
			continue
		}
		if slices.ContainsFunc(c.parsed[f.Path].decls, func(d decl) bool { return d.name == name }) {
			found = append(found, f.Path)
		}
	}
	if seg.file != "" && slices.Contains(found, seg.file) {
		return seg.file, len(found)
	}
	if len(found) == 1 {
		return found[0], 1
	}
	return "", len(found)
}

// home returns the file a new declaration goes to: the segment's named
// file; else the one file of the segment's other declarations; else the
// one file of the language the task names; else the language's only file.
// A test goes to test files and other code to other files, unless the
// segment names the file.
func (c *changer) home(d decl, seg segment, touched []string) string {
	if seg.file != "" {
		return seg.file
	}
	fits := func(p string) bool { return isTestFile(p) == d.test }
	pick := func(paths []string) string {
		var ok []string
		for _, p := range paths {
			if fits(p) && !slices.Contains(ok, p) {
				ok = append(ok, p)
			}
		}
		if len(ok) == 1 {
			return ok[0]
		}
		return ""
	}
	if t := pick(touched); t != "" {
		return t
	}
	var inTask, all []string
	for _, f := range c.files {
		if _, ok := c.parsed[f.Path]; !ok || family(f.Language) != family(seg.lang) {
			continue
		}
		all = append(all, f.Path)
		if mentions(c.task, f.Path) {
			inTask = append(inTask, f.Path)
		}
	}
	if d.test {
		// The test file of a file the task names.
		var partners []string
		for _, p := range inTask {
			partners = append(partners, testPartners(p, all)...)
		}
		if t := pick(partners); t != "" {
			return t
		}
	}
	if t := pick(inTask); t != "" {
		return t
	}
	return pick(all)
}

// mentions reports whether text names p by path or base name.
func mentions(text, p string) bool {
	if strings.Contains(text, p) {
		return true
	}
	for _, tok := range pathToken.FindAllString(text, -1) {
		if tok == path.Base(p) {
			return true
		}
	}
	return false
}

// isTestFile reports whether p is a test file by its name: x_test.go,
// test_x.py or x_test.py (a stub, .pyi, is no test), or x.test.js and
// x.spec.ts and the like. The extension's case does not matter, as it
// does not to lang.Of.
func isTestFile(p string) bool {
	base := path.Base(p)
	stem := strings.TrimSuffix(base, path.Ext(base))
	switch lang.Extension(p) {
	case ".go":
		if strings.HasSuffix(stem, "_test") {
			return true
		}
	case ".py":
		if strings.HasPrefix(base, "test_") || strings.HasSuffix(stem, "_test") {
			return true
		}
	}
	return strings.Contains(base, ".test.") || strings.Contains(base, ".spec.")
}

// TestFilesFor returns the files a test of source file p belongs in: the
// files of all (the workspace's paths) that are its tests, else the one a
// test of it would be by the language's convention (x_test.go,
// test_x.py, x.test.js). A test file, or a file of a language this
// package does not read, has none.
func TestFilesFor(p string, all []string) []string {
	if isTestFile(p) || strings.EqualFold(path.Ext(p), ".pyi") {
		return nil
	}
	if found := testPartners(p, all); len(found) > 0 {
		return found
	}
	dir, base := path.Dir(p), path.Base(p)
	ext := path.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	var name string
	switch family(lang.Of(p)) {
	case "go":
		name = stem + "_test" + ext
	case "python":
		name = "test_" + base
	case "javascript":
		name = stem + ".test" + ext
	default:
		return nil
	}
	return []string{path.Join(dir, name)}
}

// testPartners returns the files of all that are tests of source file p:
// in its folder, named after it (x_test.go, test_x.py, x.test.js).
func testPartners(p string, all []string) []string {
	dir, base := path.Dir(p), path.Base(p)
	stem := strings.TrimSuffix(base, path.Ext(base))
	var out []string
	for _, q := range all {
		if path.Dir(q) != dir || !isTestFile(q) {
			continue
		}
		qb := path.Base(q)
		if strings.HasPrefix(qb, stem+"_test.") || qb == "test_"+base || strings.HasPrefix(qb, stem+".test.") || strings.HasPrefix(qb, stem+".spec.") {
			out = append(out, q)
		}
	}
	return out
}

// replace puts the segment's declaration d in place of the declaration
// of the same name in file target. Without a leading comment of its own,
// d keeps the file's. A Python class that lacks methods the file's class
// has is merged into it instead (members.go).
func (c *changer) replace(target string, d decl, p parsed) {
	fp := c.parsed[target]
	i := slices.IndexFunc(fp.decls, func(e decl) bool { return e.name == d.name })
	old := fp.decls[i]
	if old.class && d.class && c.language(target) == "python" {
		if merged, ok := mergeClass(old.code(fp.src), d.code(p.src)); ok {
			if merged != old.code(fp.src) {
				c.record(target, fp.src[:old.body]+merged+fp.src[old.end:], d.name, false)
			} else {
				c.echo(target, d.name)
			}
			return
		}
	}
	from, text := old.start, d.text(p.src)
	if d.start == d.body {
		from = old.body
	}
	if fp.src[from:old.end] == text {
		c.echo(target, d.name)
		return
	}
	c.record(target, fp.src[:from]+text+fp.src[old.end:], d.name, false)
}

// echo notes that the answer gives declaration name of target as the file
// has it.
func (c *changer) echo(target, name string) {
	if !slices.Contains(c.echoes[target], name) {
		c.echoes[target] = append(c.echoes[target], name)
	}
}

// add appends the segment's declaration d to file target.
func (c *changer) add(target string, d decl, p parsed) {
	src := c.texts[target]
	body := strings.TrimRight(src, "\n")
	sep := "\n\n"
	if body == "" {
		sep = ""
	}
	c.record(target, body+sep+d.text(p.src)+"\n", d.name, true)
}

// language returns the language of workspace file target.
func (c *changer) language(target string) string {
	for _, f := range c.files {
		if f.Path == target {
			return f.Language
		}
	}
	return ""
}

// record makes text the new text of target, unless it no longer parses.
func (c *changer) record(target, text, name string, added bool) {
	np, ok := parse(c.language(target), text)
	if !ok {
		return
	}
	ch := c.changes[target]
	if ch == nil {
		ch = &Change{Path: target, Old: c.texts[target]}
		c.changes[target] = ch
	}
	switch {
	case name == "":
	case added:
		ch.Added = append(ch.Added, name)
	case !slices.Contains(ch.Replaced, name):
		ch.Replaced = append(ch.Replaced, name)
	}
	c.texts[target] = text
	c.parsed[target] = np
}
