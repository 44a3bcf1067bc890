package lang

import (
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"strings"
)

// fragmentClause is put before Go text without a package clause so that
// go/parser reads its declarations; offsets are shifted back past it.
const fragmentClause = "package fragment\n"

// goDecls parses Go source, or a fragment of top-level declarations
// without a package clause. A package clause is an item of a whole file
// only; a fragment has none.
func goDecls(src string) ([]Decl, bool) {
	text, shift := src, 0
	if !hasPackageClause(src) {
		text, shift = fragmentClause+src, len(fragmentClause)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", text, parser.ParseComments|parser.SkipObjectResolution)
	if f == nil || f.Package == token.NoPos {
		return nil, false // not even the package clause parsed
	}
	tf := fset.File(f.Package)
	// off maps a position to an offset in src. A file that did not parse
	// can hold nodes whose positions are missing; clamping keeps their
	// spans inside src.
	off := func(p token.Pos) int {
		return min(max(tf.Offset(p)-shift, 0), len(src))
	}
	// lead extends an item's start over its doc comment and, when nothing
	// but space comes before it on its line, to the start of the line.
	lead := func(doc *ast.CommentGroup, code int) int {
		start := code
		if doc != nil {
			start = min(off(doc.Pos()), code)
		}
		if ls := lineStart(src, start); strings.TrimSpace(src[ls:start]) == "" {
			start = ls
		}
		return start
	}
	var out []Decl
	if shift == 0 {
		d := Decl{Kind: Package, Name: f.Name.Name, Names: []string{f.Name.Name}, CodeStart: off(f.Package), End: off(f.Name.End())}
		d.Start = lead(f.Doc, d.CodeStart)
		out = append(out, d)
	}
	for _, node := range f.Decls {
		d := Decl{CodeStart: off(node.Pos()), End: off(node.End())}
		var doc *ast.CommentGroup
		switch node := node.(type) {
		case *ast.FuncDecl:
			doc = node.Doc
			d.Kind, d.Name = Func, node.Name.Name
			if node.Recv != nil {
				d.Kind = Method
				if len(node.Recv.List) == 1 {
					if t := receiverType(node.Recv.List[0].Type); t != "" {
						d.Name = t + "." + d.Name
					}
				}
			} else {
				d.Test = isGoTest(d.Name)
			}
			d.Names = []string{d.Name}
		case *ast.GenDecl:
			doc = node.Doc
			switch node.Tok {
			case token.IMPORT:
				d.Kind = Import
			case token.TYPE:
				d.Kind = Type
			case token.CONST:
				d.Kind = Const
			case token.VAR:
				d.Kind = Var
			}
			for _, s := range node.Specs {
				switch s := s.(type) {
				case *ast.ImportSpec:
					d.Specs = append(d.Specs, Span{off(s.Pos()), off(s.End())})
				case *ast.TypeSpec:
					d.Names = append(d.Names, s.Name.Name)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						d.Names = append(d.Names, n.Name)
					}
				}
			}
			if len(d.Names) > 0 {
				d.Name = d.Names[0]
			}
		default:
			continue // a declaration the parser gave up on
		}
		d.Start = lead(doc, d.CodeStart)
		out = append(out, d)
	}
	return out, err == nil
}

// hasPackageClause reports whether Go text starts, after comments, with a
// package clause.
func hasPackageClause(src string) bool {
	var s scanner.Scanner
	s.Init(token.NewFileSet().AddFile("", -1, len(src)), []byte(src), nil, 0)
	_, tok, _ := s.Scan()
	return tok == token.PACKAGE
}

// receiverType is the name of a method receiver's type, without pointer,
// parentheses or type arguments; "" when it has no name.
func receiverType(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// isGoTest reports whether a function named name is one go test runs:
// Test, Benchmark, Fuzz or Example, alone or followed by a name that does
// not start with a lower-case letter.
func isGoTest(name string) bool {
	for _, p := range []string{"Test", "Benchmark", "Fuzz", "Example"} {
		if rest, ok := strings.CutPrefix(name, p); ok && (rest == "" || rest[0] < 'a' || rest[0] > 'z') {
			return true
		}
	}
	return false
}
