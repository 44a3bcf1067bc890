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
	if err != nil || dotImports(f) {
		return Fix{}, false
	}
	used := packageUses(f)
	imported, unused, ok := importedNames(f, used)
	if !ok {
		return Fix{}, false
	}
	added := missingImports(used, imported, declaredElsewhere(f.Name.Name, pkg))
	if len(added) == 0 && len(unused) == 0 {
		return Fix{}, false
	}
	text, ok := edit(fset, f, src, unused, added)
	if !ok {
		return Fix{}, false
	}
	if text, ok = layOut(src, text); !ok {
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

// dotImports reports whether f dot-imports a package: its names are
// unqualified, so their uses cannot be told.
func dotImports(f *ast.File) bool {
	for _, s := range f.Imports {
		if s.Name != nil && s.Name.Name == "." {
			return true
		}
	}
	return false
}

// importedNames returns the names f's imports are used by, and the
// standard-library imports whose name is not among used (a blank import
// always stays). ok is false when an import path is not a valid string.
func importedNames(f *ast.File, used map[string]bool) (imported map[string]bool, unused []*ast.ImportSpec, ok bool) {
	imported = map[string]bool{}
	for _, s := range f.Imports {
		p, err := strconv.Unquote(s.Path.Value)
		if err != nil {
			return nil, nil, false
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
	return imported, unused, true
}

// missingImports returns, sorted, the standard-library paths of the used
// names that are neither imported nor declared by another file of the
// package, and that name one standard package only.
func missingImports(used, imported, declared map[string]bool) []string {
	var added []string
	for name := range used {
		if p, known := stdByName[name]; known && !imported[name] && !declared[name] {
			added = append(added, p)
		}
	}
	sort.Strings(added)
	return added
}

// layOut formats text, src with its imports mended, when src was
// gofmt-clean, so that it stays so (import groups sorted); another file is
// left as it was laid out beyond the import lines. ok is false when text
// does not parse.
func layOut(src, text string) (string, bool) {
	if clean, err := format.Source([]byte(src)); err == nil && string(clean) == src {
		out, err := format.Source([]byte(text))
		if err != nil {
			return "", false
		}
		return string(out), true
	}
	if _, err := parser.ParseFile(token.NewFileSet(), "", text, parser.SkipObjectResolution); err != nil {
		return "", false
	}
	return text, true
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
