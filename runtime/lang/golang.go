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
// only; a fragment has none. Each declaration becomes a Decl by its kind
// ([goSource.funcDecl], [goSource.genDecl]).
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
	g := goSource{src: src, tf: fset.File(f.Package), shift: shift}
	var out []Decl
	if shift == 0 {
		d := Decl{Kind: Package, Name: f.Name.Name, Names: []string{f.Name.Name}, CodeStart: g.off(f.Package), End: g.off(f.Name.End())}
		d.Start = g.lead(f.Doc, d.CodeStart)
		out = append(out, d)
	}
	for _, node := range f.Decls {
		var d Decl
		switch node := node.(type) {
		case *ast.FuncDecl:
			d = g.funcDecl(node)
		case *ast.GenDecl:
			d = g.genDecl(node)
		default:
			continue // a declaration the parser gave up on
		}
		out = append(out, d)
	}
	return out, err == nil
}

// goSource is the parsed Go text that declarations are read from; src is the
// text as given, which the parsed text has shift bytes of package clause
// before.
type goSource struct {
	src   string
	tf    *token.File
	shift int
}

// off maps a position to an offset in src. A file that did not parse can
// hold nodes whose positions are missing; clamping keeps their spans inside
// src.
func (g goSource) off(p token.Pos) int {
	return min(max(g.tf.Offset(p)-g.shift, 0), len(g.src))
}

// lead extends an item's start over its doc comment and, when nothing but
// space comes before it on its line, to the start of the line.
func (g goSource) lead(doc *ast.CommentGroup, code int) int {
	start := code
	if doc != nil {
		start = min(g.off(doc.Pos()), code)
	}
	if ls := lineStart(g.src, start); strings.TrimSpace(g.src[ls:start]) == "" {
		start = ls
	}
	return start
}

// funcDecl is the Decl of a function or method. A method is named by its
// receiver's type and its own name (T.M); a function go test runs is
// marked Test.
func (g goSource) funcDecl(node *ast.FuncDecl) Decl {
	d := Decl{Kind: Func, Name: node.Name.Name, CodeStart: g.off(node.Pos()), End: g.off(node.End())}
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
	d.Start = g.lead(node.Doc, d.CodeStart)
	return d
}

// genKinds is the Kind of a general declaration by its keyword.
var genKinds = map[token.Token]Kind{
	token.IMPORT: Import,
	token.TYPE:   Type,
	token.CONST:  Const,
	token.VAR:    Var,
}

// genDecl is the Decl of an import, type, const or var declaration, single
// or grouped: it names every type or value it declares (the first is its
// Name), and an import group's Specs are its imports' spans.
func (g goSource) genDecl(node *ast.GenDecl) Decl {
	d := Decl{Kind: genKinds[node.Tok], CodeStart: g.off(node.Pos()), End: g.off(node.End())}
	for _, s := range node.Specs {
		switch s := s.(type) {
		case *ast.ImportSpec:
			d.Specs = append(d.Specs, Span{g.off(s.Pos()), g.off(s.End())})
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
	d.Start = g.lead(node.Doc, d.CodeStart)
	return d
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
