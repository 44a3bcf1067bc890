package weakening

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"regexp"
	"strings"
)

// What values of findings that stop tests from running or make them pass
// whatever the code does.
const (
	WhatTestsNotRun    = "tests_not_run"
	WhatReturnAdded    = "early_return_added"
	WhatTrivialAssert  = "trivial_assertion"
	WhatCheckConfigNew = "check_config_added"
)

// newFile returns the findings of a file the run created. Adding a test
// is never weakening, but a new file can still stop the existing tests
// from running: a check configuration (a conftest.py, a setup.cfg with
// pytest options), a Go TestMain that never runs the tests, a JavaScript
// only marker (mocha runs nothing else).
func newFile(kind Kind, ch Change) []Finding {
	if !ch.Exists {
		return nil
	}
	switch kind {
	case KindCheckConfig:
		before := ""
		if path.Base(ch.Path) == "package.json" {
			before = "{}"
		}
		out := checkConfig(Change{Path: ch.Path, Before: []byte(before), After: ch.After, Existed: true, Exists: true})
		for i := range out {
			out[i].What = WhatCheckConfigNew
			out[i].Detail = fmt.Sprintf("%s: a check configuration file was added", ch.Path)
		}
		return out
	case KindTest:
		switch familyOf(ch.Path) {
		case famGo:
			return testMainNoRun(ch.Path, nil, ch.After)
		case famJS:
			var out []Finding
			for _, f := range markers(ch.Path, famJS, nil, scan(famJS, string(ch.After))) {
				if f.What == WhatOnlyAdded {
					out = append(out, f)
				}
			}
			return out
		}
	}
	return nil
}

// testMainNoRun reports a Go TestMain that does not call Run on its
// *testing.M, when the file did not already have one like it.
func testMainNoRun(p string, before, after []byte) []Finding {
	line, bad := goTestMainSkips(after)
	if !bad {
		return nil
	}
	if before != nil {
		if _, was := goTestMainSkips(before); was {
			return nil
		}
	}
	return []Finding{{Path: p, What: WhatTestsNotRun, Name: "TestMain", Line: line,
		Detail: fmt.Sprintf("%s: TestMain never calls m.Run, so no test of the package runs", p)}}
}

// goTestMainSkips reports whether src defines a TestMain whose body never
// calls Run on its parameter, and the line of that TestMain.
func goTestMainSkips(src []byte) (int, bool) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x_test.go", src, parser.SkipObjectResolution)
	if err != nil {
		return 0, false
	}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || fn.Name.Name != "TestMain" || fn.Body == nil {
			continue
		}
		param := ""
		if ps := fn.Type.Params.List; len(ps) == 1 && len(ps[0].Names) == 1 {
			param = ps[0].Names[0].Name
		}
		runs := false
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Run" {
				if id, ok := sel.X.(*ast.Ident); ok && (param == "" || id.Name == param) {
					runs = true
				}
			}
			return !runs
		})
		if !runs {
			return fset.Position(fn.Pos()).Line, true
		}
	}
	return 0, false
}

// addedLines returns the 1-based lines of after whose code was not in
// before (as a multiset of trimmed lines).
func addedLines(before, after []codeLine) []int {
	had := map[string]int{}
	for _, l := range before {
		had[strings.TrimSpace(l.Code)]++
	}
	var out []int
	for i, l := range after {
		k := strings.TrimSpace(l.Code)
		if had[k] > 0 {
			had[k]--
			continue
		}
		out = append(out, i+1)
	}
	return out
}

// earlyReturns reports bare returns added to an existing test file: a
// `return` at the top of a test skips its assertions as surely as a skip
// marker, while leaving them in the text.
func earlyReturns(p string, fam family, before, after []codeLine) []Finding {
	if fam == famOther {
		return nil
	}
	var out []Finding
	for _, n := range addedLines(before, after) {
		switch strings.TrimSpace(after[n-1].Code) {
		case "return", "return;":
			out = append(out, Finding{Path: p, What: WhatReturnAdded, Line: n, Name: "return",
				Detail: fmt.Sprintf("%s: a bare return was added on line %d, which ends the test before its assertions", p, n)})
		}
	}
	return out
}

// trivialRes match assertions over literals only (assert True,
// self.assertEqual(1, 1), expect(true).toBe(true)): they pass whatever the
// code does. They are matched against line shapes, where every literal is
// ‹›.
var trivialRes = map[family][]*regexp.Regexp{
	famPython: res(`^assert\s+‹›\s*(?:,\s*‹›\s*)?$`, `\bself\.assert\w*\(\s*‹›(?:\s*,\s*‹›)*\s*\)`),
	famJS: res(`\bexpect\s*\(\s*‹›\s*\)(?:\s*\.\s*\w+)+\s*\(\s*(?:‹›)?\s*\)`,
		`\bassert(?:\s*\.\s*\w+)?\s*\(\s*‹›(?:\s*,\s*‹›)*\s*\)`,
		`\bt\s*\.\s*(?:ok|is|equal|deepEqual|strictEqual|truthy|true|pass)\s*\(\s*(?:‹›(?:\s*,\s*‹›)*)?\s*\)`),
}

// failing tells assertions that always fail (assert.fail("x")) from ones
// that always pass.
var failing = regexp.MustCompile(`(?i)fail|throws|rejects|raises`)

// trivialAssertions reports assertions over literals only added to an
// existing test file.
func trivialAssertions(p string, fam family, before, after []codeLine) []Finding {
	rs := trivialRes[fam]
	if len(rs) == 0 {
		return nil
	}
	var out []Finding
	for _, n := range addedLines(before, after) {
		shape := after[n-1].Shape
		for _, re := range rs {
			if m := re.FindString(shape); m != "" && !failing.MatchString(m) {
				out = append(out, Finding{Path: p, What: WhatTrivialAssert, Line: n,
					Name:   clip(strings.TrimSpace(after[n-1].Code), 80),
					Detail: fmt.Sprintf("%s: an assertion over constants was added on line %d, which passes whatever the code does", p, n)})
				break
			}
		}
	}
	return out
}
