package codeblock

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strings"
)

// decl is one top-level item of a source text: a named declaration, an
// import, or another statement (unnamed, it only bounds its neighbours).
type decl struct {
	name     string // "Median", "Stock.Remove" (a Go method), "" for others
	isImport bool   // an import (Go: one import spec; others: the statement)
	test     bool   // a test: Go Test*/Benchmark*/Fuzz*/Example* func, Python test class or test_ def
	start    int    // byte offset of the item with its leading comment
	body     int    // byte offset of the item without its leading comment
	end      int    // byte offset just after the item (its last line's end, without the line break)
	// spec is a Go import spec as written ("\"sort\"", "str \"strings\"").
	spec string
}

// text returns the item's text in src, with its leading comment.
func (d decl) text(src string) string { return src[d.start:d.end] }

// code returns the item's text in src without its leading comment.
func (d decl) code(src string) string { return src[d.body:d.end] }

// parsed is a source text with its top-level items, in order.
type parsed struct {
	src   string
	decls []decl
	// goPackage is a Go file's package clause line ("" for others, or a
	// Go fragment without one); goImports is where a Go file's imports
	// end (the offset after its last import declaration, or after the
	// package clause when it has none).
	goPackage    string
	goImports    int
	goImportDecl int  // where the last import declaration starts
	goGrouped    bool // the last import declaration is parenthesized
}

// parse splits src in language lang ("go", "python", "javascript",
// "typescript") into its top-level items. ok is false for Go text that
// does not parse, and for other text that ends inside a string or a
// block comment.
func parse(lang, src string) (parsed, bool) {
	switch lang {
	case "go":
		return parseGo(src)
	case "python":
		return parseLines(src, python)
	case "javascript", "typescript":
		return parseLines(src, javascript)
	}
	return parsed{}, false
}

// parseGo parses Go source, or a fragment of top-level declarations
// without a package clause.
func parseGo(src string) (parsed, bool) {
	text, shift := src, 0
	if !hasPackageClause(src) {
		const clause = "package fragment\n"
		text, shift = clause+src, len(clause)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", text, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return parsed{}, false
	}
	off := func(p token.Pos) int { return fset.Position(p).Offset - shift }
	out := parsed{src: src}
	if shift == 0 {
		out.goPackage = lineAt(src, off(f.Package))
		out.goImports = lineEnd(src, off(f.Name.End()))
	}
	for _, d := range f.Decls {
		it := decl{body: off(d.Pos()), end: off(d.End())}
		var doc *ast.CommentGroup
		switch d := d.(type) {
		case *ast.FuncDecl:
			doc = d.Doc
			it.name = d.Name.Name
			if d.Recv != nil && len(d.Recv.List) == 1 {
				it.name = receiverName(d.Recv.List[0].Type) + "." + it.name
			} else if d.Recv == nil {
				it.test = isGoTest(d.Name.Name)
			}
		case *ast.GenDecl:
			doc = d.Doc
			if d.Tok == token.IMPORT {
				if shift == 0 {
					out.goImports = off(d.End())
					out.goImportDecl = off(d.Pos())
					out.goGrouped = d.Lparen.IsValid()
				}
				for _, s := range d.Specs {
					is := s.(*ast.ImportSpec)
					out.decls = append(out.decls, decl{
						isImport: true, start: off(is.Pos()), body: off(is.Pos()), end: off(is.End()),
						spec: src[off(is.Pos()):off(is.End())],
					})
				}
				continue
			}
			it.name = genDeclName(d)
		}
		it.start = it.body
		if doc != nil {
			it.start = off(doc.Pos())
		}
		if ls := lineStart(src, it.start); strings.TrimSpace(src[ls:it.start]) == "" {
			it.start = ls // the whole line: its indentation too
		}
		out.decls = append(out.decls, it)
	}
	return out, true
}

// hasPackageClause reports whether Go text has a package clause before
// its first declaration (comments and blank lines may come first).
func hasPackageClause(src string) bool {
	inBlock := false
	for _, line := range strings.Split(src, "\n") {
		t := strings.TrimSpace(line)
		if inBlock {
			if strings.Contains(t, "*/") {
				inBlock = false
			}
			continue
		}
		switch {
		case t == "" || strings.HasPrefix(t, "//"):
			continue
		case strings.HasPrefix(t, "/*"):
			inBlock = !strings.Contains(t, "*/")
			continue
		}
		return strings.HasPrefix(t, "package ")
	}
	return false
}

func receiverName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return receiverName(t.X)
	case *ast.IndexExpr:
		return receiverName(t.X)
	case *ast.IndexListExpr:
		return receiverName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return ""
}

// genDeclName names a type, const or var declaration by its first name;
// a group is named by its first spec.
func genDeclName(d *ast.GenDecl) string {
	if len(d.Specs) == 0 {
		return ""
	}
	switch s := d.Specs[0].(type) {
	case *ast.TypeSpec:
		return s.Name.Name
	case *ast.ValueSpec:
		if len(s.Names) > 0 {
			return s.Names[0].Name
		}
	}
	return ""
}

func isGoTest(name string) bool {
	for _, p := range []string{"Test", "Benchmark", "Fuzz", "Example"} {
		if rest, ok := strings.CutPrefix(name, p); ok && (rest == "" || !isLower(rest[0])) {
			return true
		}
	}
	return false
}

func isLower(b byte) bool { return b >= 'a' && b <= 'z' }

// itemKind is what a line-based scanner makes of an unindented line that
// starts a new item.
type itemKind struct {
	name     string
	isImport bool
	test     bool
	comment  bool // a comment line: it belongs to the item that follows
	prefix   bool // a decorator: like a comment, it belongs to what follows
}

var (
	pyDef    = regexp.MustCompile(`^(?:async\s+)?(def|class)\s+([A-Za-z_][A-Za-z0-9_]*)(.*)`)
	pyAssign = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)\s*(?::[^=]*)?=[^=]`)
)

// pyItem classifies an unindented Python line.
func pyItem(line string) itemKind {
	switch {
	case strings.HasPrefix(line, "#"):
		return itemKind{comment: true}
	case strings.HasPrefix(line, "@"):
		return itemKind{prefix: true}
	case strings.HasPrefix(line, "import ") || strings.HasPrefix(line, "from "):
		return itemKind{isImport: true}
	}
	if m := pyDef.FindStringSubmatch(line); m != nil {
		test := m[1] == "def" && strings.HasPrefix(m[2], "test") ||
			m[1] == "class" && (strings.HasPrefix(m[2], "Test") || strings.Contains(m[3], "TestCase"))
		return itemKind{name: m[2], test: test}
	}
	if m := pyAssign.FindStringSubmatch(line); m != nil {
		return itemKind{name: m[1]}
	}
	return itemKind{}
}

var jsDecl = []*regexp.Regexp{
	regexp.MustCompile(`^(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)`),
	regexp.MustCompile(`^(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+([A-Za-z_$][\w$]*)`),
	regexp.MustCompile(`^(?:export\s+)?(?:declare\s+)?(?:const|let|var|enum|interface|type)\s+([A-Za-z_$][\w$]*)`),
}

// jsItem classifies an unindented JavaScript or TypeScript line.
func jsItem(line string) itemKind {
	switch {
	case strings.HasPrefix(line, "//") || strings.HasPrefix(line, "/*"):
		return itemKind{comment: true}
	case strings.HasPrefix(line, "@"):
		return itemKind{prefix: true}
	case strings.HasPrefix(line, "import ") || strings.HasPrefix(line, "import{"):
		return itemKind{isImport: true}
	}
	for _, re := range jsDecl {
		if m := re.FindStringSubmatch(line); m != nil {
			return itemKind{name: m[1]}
		}
	}
	return itemKind{}
}

// parseLines splits Python or JavaScript/TypeScript source into items by
// its unindented lines: an item starts at an unindented line (with the
// comment and decorator lines right above it) and ends before the next
// item; an unindented line of closing brackets belongs to the item above.
// Lines inside a multi-line string or block comment never start an item.
// Source whose top-level code is indented (a fragment copied from inside
// a function) has no items. ok is false when src ends inside a string or
// block comment: where its items end cannot be told.
func parseLines(src string, l syntax) (parsed, bool) {
	out := parsed{src: src}
	var (
		open     = -1 // index in out.decls of the item being read
		lead     = -1 // offset of pending comment/decorator lines, -1 when none
		inString string
		inBlock  bool
	)
	finish := func(at int) {
		if open >= 0 {
			out.decls[open].end = trimEnd(src, out.decls[open].body, at)
			open = -1
		}
	}
	off := 0
	for _, line := range strings.SplitAfter(src, "\n") {
		start := off
		off += len(line)
		text := strings.TrimRight(line, "\r\n")
		continued := inString != "" || inBlock
		inString, inBlock = l.scan(text, inString, inBlock)
		if continued {
			continue
		}
		if text == "" {
			// A comment that a blank line parts from what follows is not
			// its leading comment: it stays with the item above.
			lead = -1
			continue
		}
		if text[0] == ' ' || text[0] == '\t' || closing(text) {
			// Comment lines followed by indented code were inside the
			// item above (or lead nowhere): not a leading comment.
			lead = -1
			continue
		}
		k := l.classify(text)
		if k.comment || k.prefix {
			if lead < 0 {
				lead = start
			}
			continue
		}
		d := decl{name: k.name, isImport: k.isImport, test: k.test, start: start, body: start}
		if lead >= 0 {
			d.start = lead
			lead = -1
		}
		finish(d.start)
		out.decls = append(out.decls, d)
		open = len(out.decls) - 1
	}
	finish(len(src))
	return out, inString == "" && !inBlock
}

// closing reports whether an unindented line only closes brackets (with
// what may follow them on a closing line: `} from "x";`, `});`).
func closing(text string) bool {
	return strings.IndexByte(")]}", text[0]) >= 0
}

// syntax is what the line scanner knows of a language.
type syntax struct {
	classify    func(string) itemKind
	lineComment string
	python      bool // triple-quoted strings; otherwise block comments and template literals
}

var (
	python     = syntax{classify: pyItem, lineComment: "#", python: true}
	javascript = syntax{classify: jsItem, lineComment: "//"}
)

// scan follows Python triple-quoted strings, and JavaScript block comments
// and template literals, across lines: it returns the state after text
// given the state before it. It is rough (an escaped quote inside an
// ordinary string can mislead it), which only matters for text no
// formatter would write.
func (l syntax) scan(text, inString string, inBlock bool) (string, bool) {
	for i := 0; i < len(text); i++ {
		rest := text[i:]
		switch {
		case inBlock:
			if strings.HasPrefix(rest, "*/") {
				inBlock = false
				i++
			}
		case inString != "":
			if strings.HasPrefix(rest, inString) {
				i += len(inString) - 1
				inString = ""
			} else if text[i] == '\\' {
				i++
			}
		case l.python && (strings.HasPrefix(rest, `"""`) || strings.HasPrefix(rest, `'''`)):
			inString = rest[:3]
			i += 2
		case !l.python && text[i] == '`':
			inString = "`"
		case !l.python && strings.HasPrefix(rest, "/*"):
			inBlock = true
			i++
		case strings.HasPrefix(rest, l.lineComment):
			return inString, inBlock // the rest is a line comment
		case text[i] == '"' || text[i] == '\'':
			if j := strings.IndexByte(text[i+1:], text[i]); j >= 0 {
				i += j + 1
			}
		}
	}
	return inString, inBlock
}

// trimEnd returns the end of the item that starts at from and runs to at:
// trailing blank lines are not part of it, nor is the final line break.
func trimEnd(src string, from, at int) int {
	s := strings.TrimRight(src[from:at], " \t\r\n")
	return from + len(s)
}

func lineStart(src string, i int) int {
	return strings.LastIndexByte(src[:i], '\n') + 1
}

func lineEnd(src string, i int) int {
	if j := strings.IndexByte(src[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(src)
}

func lineAt(src string, i int) string {
	return src[lineStart(src, i):lineEnd(src, i)]
}
