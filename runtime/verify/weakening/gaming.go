package weakening

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"regexp"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"flow/internal/text"
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
					Name:   text.Clip(strings.TrimSpace(after[n-1].Code), 80),
					Detail: fmt.Sprintf("%s: an assertion over constants was added on line %d, which passes whatever the code does", p, n)})
				break
			}
		}
	}
	return out
}

// WhatInverted marks an existing assertion or test condition turned into
// its opposite (assertEqual → assertNotEqual, != → ==): the test then
// passes on exactly the code it used to reject.
const WhatInverted = "assertion_inverted"

// opposites map each member of a pair of opposite operators or assertion
// names to one key, so that two lines differing only by such a swap have
// the same canonical form.
var opposites = map[string]string{}

func init() {
	for i, pair := range [][2]string{
		{"==", "!="}, {"===", "!=="}, {"<", ">="}, {">", "<="},
		{"assertEqual", "assertNotEqual"}, {"assertEquals", "assertNotEquals"},
		{"assertTrue", "assertFalse"}, {"assertIn", "assertNotIn"}, {"assertIs", "assertIsNot"},
		{"assertIsNone", "assertIsNotNone"}, {"assertAlmostEqual", "assertNotAlmostEqual"},
		{"assertRegex", "assertNotRegex"}, {"assertIsInstance", "assertNotIsInstance"},
		{"equal", "notEqual"}, {"strictEqual", "notStrictEqual"}, {"deepEqual", "notDeepEqual"},
		{"deepStrictEqual", "notDeepStrictEqual"}, {"match", "doesNotMatch"},
		{"Equal", "NotEqual"}, {"True", "False"}, {"Nil", "NotNil"}, {"Contains", "NotContains"},
	} {
		key := fmt.Sprintf("⇄%d", i)
		opposites[pair[0]], opposites[pair[1]] = key, key
	}
}

var shapeToken = regexp.MustCompile(`[A-Za-z_$][\w$]*|‹›|===|!==|==|!=|<=|>=|&&|\|\||\S`)

// canonical returns the shape's tokens with opposites merged and JS's
// `.not` dropped.
func canonical(shape string) string {
	toks := shapeToken.FindAllString(shape, -1)
	out := make([]string, 0, len(toks))
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t == "." && i+2 < len(toks) && toks[i+1] == "not" && toks[i+2] == "." {
			i++ // ".not." → "."
			continue
		}
		if k, ok := opposites[t]; ok {
			t = k
		}
		out = append(out, t)
	}
	return strings.Join(out, " ")
}

// invertedAssertions pairs the removed and added lines of each hunk: a line
// whose canonical form is unchanged but whose shape changed swapped an
// operator or assertion for its opposite.
func invertedAssertions(p string, fam family, before, after []codeLine) []Finding {
	if fam == famOther {
		return nil
	}
	old, cur := joinCode(before), joinCode(after)
	u, err := udiff.ToUnifiedDiff("a", "b", old, udiff.Lines(old, cur), 0)
	if err != nil {
		return nil
	}
	var out []Finding
	removed := map[string][]int{} // canonical → old lines, per hunk
	for _, h := range u.Hunks {
		clear(removed)
		oldLine, newLine := h.FromLine, newStart(u.Hunks, h)
		for _, l := range h.Lines {
			switch l.Kind {
			case udiff.Delete:
				c := canonical(before[oldLine-1].Shape)
				removed[c] = append(removed[c], oldLine)
				oldLine++
			case udiff.Insert:
				shape := after[newLine-1].Shape
				c := canonical(shape)
				if olds := removed[c]; len(olds) > 0 && before[olds[0]-1].Shape != shape {
					removed[c] = olds[1:]
					out = append(out, Finding{Path: p, What: WhatInverted, Line: newLine,
						Name:   text.Clip(strings.TrimSpace(after[newLine-1].Code), 80),
						Detail: fmt.Sprintf("%s: an assertion was turned into its opposite on line %d", p, newLine)})
				}
				newLine++
			default:
				oldLine++
				newLine++
			}
		}
	}
	return out
}
