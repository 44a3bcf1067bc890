package codeblock

import (
	"strings"

	"flow/runtime/lang"
)

// decl is one top-level item of a source text: a named declaration, an
// import, or another statement (unnamed, it only bounds its neighbours).
type decl struct {
	name     string // "Median", "Stock.Remove" (a Go method), "" for others
	isImport bool   // an import (Go: one import spec; others: the statement)
	test     bool   // a test: Go Test*/Benchmark*/Fuzz*/Example* func, Python test class or test_ def
	class    bool   // a class (Python, JavaScript/TypeScript)
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

// parse splits src in language ("go", "python", "javascript",
// "typescript") into its top-level items, as [lang.Decls] reads them. ok
// is false for Go text that does not parse, and for other text that ends
// inside a string or a block comment: an edit cannot be placed in it.
func parse(language, src string) (parsed, bool) {
	ds, ok := lang.Decls(language, src)
	if !ok {
		return parsed{}, false
	}
	out := parsed{src: src}
	hasPackage := false
	for _, d := range ds {
		switch {
		case d.Kind == lang.Package:
			hasPackage = true
			out.goPackage = lineAt(src, d.CodeStart)
			out.goImports = lineEnd(src, d.End)
		case d.Kind == lang.Import && language == "go":
			// A Go import declaration is one item per spec, so that each
			// path is compared on its own. Only a whole file has an import
			// section for a new import to join; a fragment's imports are
			// only what it needs.
			if hasPackage {
				out.goImports = d.End
				out.goImportDecl = d.CodeStart
				// An ungrouped import ends with its path's quote.
				out.goGrouped = strings.HasSuffix(src[d.CodeStart:d.End], ")")
			}
			for _, s := range d.Specs {
				out.decls = append(out.decls, decl{isImport: true, start: s.Start, body: s.Start, end: s.End, spec: src[s.Start:s.End]})
			}
		default:
			out.decls = append(out.decls, decl{
				name: d.Name, isImport: d.Kind == lang.Import, test: d.Test, class: d.Kind == lang.Class,
				start: d.Start, body: d.CodeStart, end: d.End,
			})
		}
	}
	return out, true
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
