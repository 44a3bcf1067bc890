// Package imports mends the import declarations of a Go file that a
// model changed, as an editor's goimports does on save (doc/design.md
// §6.8): it adds the standard-library packages the code uses and does not
// import, and removes the standard-library imports it no longer uses. A
// small model writes `fmt.Errorf` into a function without adding "fmt",
// or takes out the last use of "strings" and leaves its import; either
// fails the build, and the repair coder rarely mends it.
//
// Only the standard library is touched, and only where the package's
// name is certain: a name that several standard packages share (rand,
// template) is never added, an import of another module is never
// removed, and a file that does not parse, or that dot-imports a
// package, is left as it is.
package imports

import (
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Fix is a mended Go file.
type Fix struct {
	Text string
	// Added and Removed are the import paths added and removed, sorted.
	Added, Removed []string
}

// Go mends the imports of the Go source src. pkg holds the text of the
// package's other files (those of another package or that do not parse
// are skipped), so that a name one of them declares is not taken for a
// package. ok is false when nothing is to be mended, or src does not
// parse.
func Go(src string, pkg []string) (fix Fix, ok bool) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments)
	if err != nil {
		return Fix{}, false
	}
	for _, s := range f.Imports {
		if s.Name != nil && s.Name.Name == "." {
			return Fix{}, false // its names are unqualified: uses cannot be told
		}
	}
	declared := declaredElsewhere(f.Name.Name, pkg)
	used := packageUses(f)

	imported := map[string]bool{}
	var unused []*ast.ImportSpec
	for _, s := range f.Imports {
		p, err := strconv.Unquote(s.Path.Value)
		if err != nil {
			return Fix{}, false
		}
		name := guessName(p)
		if s.Name != nil {
			name = s.Name.Name
		}
		imported[name] = true
		if name == "_" || !standard(p) || used[name] {
			continue
		}
		unused = append(unused, s)
	}
	var added []string
	for name := range used {
		if p, known := stdByName[name]; known && !imported[name] && !declared[name] {
			added = append(added, p)
		}
	}
	if len(added) == 0 && len(unused) == 0 {
		return Fix{}, false
	}
	sort.Strings(added)

	text, ok := edit(fset, f, src, unused, added)
	if !ok {
		return Fix{}, false
	}
	// A gofmt-clean file stays so (import groups sorted); another is
	// left as it was laid out, beyond the import lines.
	if clean, err := format.Source([]byte(src)); err == nil && string(clean) == src {
		out, err := format.Source([]byte(text))
		if err != nil {
			return Fix{}, false
		}
		text = string(out)
	} else if _, err := parser.ParseFile(token.NewFileSet(), "", text, parser.SkipObjectResolution); err != nil {
		return Fix{}, false
	}
	fix = Fix{Text: text, Added: added}
	for _, s := range unused {
		p, _ := strconv.Unquote(s.Path.Value)
		fix.Removed = append(fix.Removed, p)
	}
	sort.Strings(fix.Removed)
	return fix, fix.Text != src
}

// packageUses returns the names used as the package of a qualified
// identifier (`fmt.Println`) that the file does not declare: the parser
// leaves them unresolved (their Obj is nil), as it does a package-level
// name of another file. Only an exported name can be a package's, so
// `url.path` of an undeclared variable url is not a use of net/url.
func packageUses(f *ast.File) map[string]bool {
	used := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Obj == nil && sel.Sel.IsExported() {
				used[id.Name] = true
			}
		}
		return true
	})
	return used
}

// declaredElsewhere returns the package-level names the files of pkg
// declare that belong to package name.
func declaredElsewhere(name string, pkg []string) map[string]bool {
	out := map[string]bool{}
	for _, src := range pkg {
		f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.SkipObjectResolution)
		if err != nil || f.Name.Name != name {
			continue
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					out[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						out[s.Name.Name] = true
					case *ast.ValueSpec:
						for _, n := range s.Names {
							out[n.Name] = true
						}
					}
				}
			}
		}
	}
	return out
}

// edit returns src without the unused import specs and with the added
// paths imported: into the first parenthesised import declaration that
// stays; else into a single-spec declaration, made a group of them all,
// as goimports does; else in a declaration of their own after the package
// clause. The caller formats the result.
func edit(fset *token.FileSet, f *ast.File, src string, unused []*ast.ImportSpec, added []string) (string, bool) {
	// A change replaces src[from:to] with text; they do not overlap.
	type change struct {
		from, to int
		text     string
	}
	var changes []change
	offset := func(p token.Pos) int { return fset.Position(p).Offset }
	var group, single *ast.GenDecl
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.IMPORT {
			continue
		}
		var gone []ast.Spec
		for _, s := range g.Specs {
			if slices.Contains(unused, s.(*ast.ImportSpec)) {
				gone = append(gone, s)
			}
		}
		if len(gone) == len(g.Specs) {
			from := g.Pos()
			if g.Doc != nil {
				from = g.Doc.Pos()
			}
			changes = append(changes, change{lineStart(src, offset(from)), lineEnd(src, offset(g.End())), ""})
			continue
		}
		switch {
		case group == nil && g.Lparen.IsValid():
			group = g
		case single == nil && !g.Lparen.IsValid():
			single = g
		}
		for _, s := range gone {
			is := s.(*ast.ImportSpec)
			from, to := is.Pos(), specEnd(is)
			if is.Doc != nil {
				from = is.Doc.Pos()
			}
			a, b := lineStart(src, offset(from)), lineEnd(src, offset(to))
			if strings.TrimSpace(src[a:offset(from)]) != "" || strings.TrimSpace(src[offset(to):b]) != "" {
				return "", false // another spec shares its line
			}
			changes = append(changes, change{a, b, ""})
		}
	}

	var specs string
	for _, p := range added {
		specs += "\t" + strconv.Quote(p) + "\n"
	}
	switch {
	case len(added) == 0:
	case group != nil:
		at, apart := groupInsert(fset, src, group, unused)
		switch {
		case at < 0: // `import ("a")` on one line
			changes = append(changes, change{offset(group.Rparen), offset(group.Rparen), "\n" + specs})
		case apart:
			changes = append(changes, change{at, at, specs + "\n"})
		default:
			changes = append(changes, change{at, at, specs})
		}
	case single != nil:
		is := single.Specs[0].(*ast.ImportSpec)
		from, to := offset(is.Pos()), offset(specEnd(is))
		apart := ""
		if p, _ := strconv.Unquote(is.Path.Value); !standard(p) {
			apart = "\n"
		}
		changes = append(changes,
			change{from, from, "(\n" + specs + apart + "\t"},
			change{to, to, "\n)"})
	default:
		at := lineEnd(src, offset(f.Name.End()))
		text := "\nimport "
		if at == len(src) && !strings.HasSuffix(src, "\n") {
			text = "\n" + text
		}
		if len(added) == 1 {
			text += strconv.Quote(added[0])
		} else {
			text += "(\n" + specs + ")"
		}
		changes = append(changes, change{at, at, text + "\n"})
	}
	// Apply from the end, so that earlier offsets hold; at one offset, a
	// cut before an insertion, so that it cannot cut what was inserted.
	slices.SortFunc(changes, func(a, b change) int {
		if a.from != b.from {
			return b.from - a.from
		}
		return b.to - a.to
	})
	out := src
	for _, c := range changes {
		out = out[:c.from] + c.text + out[c.to:]
	}
	return out, true
}

// specEnd is the end of an import spec with its line comment.
func specEnd(is *ast.ImportSpec) token.Pos {
	if is.Comment != nil {
		return is.Comment.End()
	}
	return is.End()
}

// groupInsert returns where new standard imports go in the parenthesised
// import declaration g: after the last standard import that stays, else
// before the first import of another module (apart: the new ones are to
// be set off from it by a blank line), else on the line of the closing
// parenthesis; -1 when that line is the one of the opening parenthesis.
func groupInsert(fset *token.FileSet, src string, g *ast.GenDecl, unused []*ast.ImportSpec) (at int, apart bool) {
	offset := func(p token.Pos) int { return fset.Position(p).Offset }
	var lastStd, firstOther *ast.ImportSpec
	for _, s := range g.Specs {
		is := s.(*ast.ImportSpec)
		if slices.Contains(unused, is) {
			continue
		}
		p, _ := strconv.Unquote(is.Path.Value)
		if standard(p) {
			lastStd = is
		} else if firstOther == nil {
			firstOther = is
		}
	}
	rparen := lineStart(src, offset(g.Rparen))
	switch {
	case lastStd != nil:
		if at := lineEnd(src, offset(specEnd(lastStd))); at <= rparen {
			return at, false
		}
	case firstOther != nil:
		from := firstOther.Pos()
		if firstOther.Doc != nil {
			from = firstOther.Doc.Pos()
		}
		if at := lineStart(src, offset(from)); at > offset(g.Lparen) {
			return at, true
		}
	}
	if rparen <= offset(g.Lparen) {
		return -1, false
	}
	return rparen, false
}

// lineStart is the offset of the start of the line holding offset i.
func lineStart(s string, i int) int {
	return strings.LastIndexByte(s[:i], '\n') + 1
}

// lineEnd is the offset after the line break that ends the line holding
// offset i (or the end of s).
func lineEnd(s string, i int) int {
	if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(s)
}

// standard reports whether an import path is of the standard library: its
// first element has no dot ("C", cgo's pseudo-package, aside).
func standard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return path != "C" && !strings.Contains(first, ".")
}

// guessName is the name a package of path is used by when the import
// does not name it: its last element, without a major version ("v2") or
// a "go-" prefix and ".go"-like suffix for another module's path.
func guessName(path string) string {
	parts := strings.Split(path, "/")
	name := parts[len(parts)-1]
	if len(parts) > 1 && len(name) > 1 && name[0] == 'v' && strings.Trim(name[1:], "0123456789") == "" {
		name = parts[len(parts)-2]
	}
	if !standard(path) {
		name = strings.TrimPrefix(name, "go-")
		if i := strings.IndexByte(name, '.'); i > 0 {
			name = name[:i]
		}
	}
	return name
}
