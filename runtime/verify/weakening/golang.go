package weakening

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
)

// goTests lists a Go test file's test functions and the names of its
// subtests (t.Run("name", …) as "TestX/name"). ok is false when the file
// does not parse, and the caller falls back to patterns.
func goTests(src []byte) (names []named, ok bool) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x_test.go", src, parser.SkipObjectResolution)
	if err != nil {
		return nil, false
	}
	for _, d := range f.Decls {
		fn, isFunc := d.(*ast.FuncDecl)
		if !isFunc || fn.Recv != nil || !isTestFunc(fn.Name.Name) {
			continue
		}
		names = append(names, named{name: fn.Name.Name, line: fset.Position(fn.Pos()).Line})
		if fn.Body == nil {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			call, isCall := n.(*ast.CallExpr)
			if !isCall || len(call.Args) < 2 {
				return true
			}
			sel, isSel := call.Fun.(*ast.SelectorExpr)
			if !isSel || sel.Sel.Name != "Run" {
				return true
			}
			lit, isLit := call.Args[0].(*ast.BasicLit)
			if !isLit || lit.Kind != token.STRING {
				return true
			}
			if s, err := strconv.Unquote(lit.Value); err == nil {
				names = append(names, named{name: fn.Name.Name + "/" + s, line: fset.Position(call.Pos()).Line})
			}
			return true
		})
	}
	return names, true
}

func isTestFunc(name string) bool {
	for _, p := range []string{"Test", "Benchmark", "Fuzz", "Example"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// goCases counts, per test function, the elements of the slice, array and
// map literals in its body: the cases of a table-driven test.
func goCases(src []byte) (map[string]int, map[string]int, bool) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x_test.go", src, parser.SkipObjectResolution)
	if err != nil {
		return nil, nil, false
	}
	cases, lines := map[string]int{}, map[string]int{}
	for _, d := range f.Decls {
		fn, isFunc := d.(*ast.FuncDecl)
		if !isFunc || fn.Recv != nil || fn.Body == nil || !isTestFunc(fn.Name.Name) {
			continue
		}
		lines[fn.Name.Name] = fset.Position(fn.Pos()).Line
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			lit, isLit := n.(*ast.CompositeLit)
			if !isLit {
				return true
			}
			switch lit.Type.(type) {
			case *ast.ArrayType, *ast.MapType:
				cases[fn.Name.Name] += len(lit.Elts)
			}
			return true
		})
	}
	return cases, lines, true
}

// removedCases reports test functions whose table literals lost elements.
func removedCases(ch Change) []Finding {
	old, _, ok1 := goCases(ch.Before)
	cur, lines, ok2 := goCases(ch.After)
	if !ok1 || !ok2 {
		return nil
	}
	var out []Finding
	for name, n := range old {
		m, still := cur[name]
		if !still || m >= n {
			continue // a removed function is reported as such
		}
		out = append(out, Finding{Path: ch.Path, What: WhatCasesRemoved, Name: name, Line: lines[name],
			Detail: fmt.Sprintf("%s: %d of the %d table cases of %s were removed", ch.Path, n-m, n, name)})
	}
	return out
}
