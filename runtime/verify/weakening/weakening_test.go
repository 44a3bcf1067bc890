package weakening

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestClassify(t *testing.T) {
	c := Classifier{
		Tests: []string{"qa/**/*.go", "*.check.lua"},
		Checks: [][]string{{"make", "lint"}, {"./scripts/test.sh"}, {"go", "test", "./..."},
			{"grep", "-q", "fixed", "a.go"}, {"node", "--check", "calc.js"}, {"sh", "ci/lint.sh"},
			{"eslint", "--config", "lint/eslint.json", "src"}, {"pylint", "--rcfile=lint/pylintrc", "app.py"}},
	}
	for _, tc := range []struct {
		path string
		want Kind
	}{
		{"calc.go", KindSource},
		{"calc_test.go", KindTest},
		{"pkg/x/y_test.go", KindTest},
		{"pkg/x/testdata/golden.json", KindTest},
		{"test_calc.py", KindTest},
		{"calc_test.py", KindTest},
		{"tests/helpers.py", KindTest},
		{"src/calc.py", KindSource},
		{"src/sum.test.js", KindTest},
		{"src/sum.spec.ts", KindTest},
		{"src/__tests__/sum.js", KindTest},
		{"src/contest.js", KindSource},
		{"latest.json", KindSource},
		{"qa/deep/er/x.go", KindTest},
		{"lib/a.check.lua", KindTest},
		{"src/test/java/AppTest.java", KindTest},
		{".golangci.yml", KindCheckConfig},
		{"eslint.config.mjs", KindCheckConfig},
		{"tsconfig.json", KindCheckConfig},
		{"pyproject.toml", KindCheckConfig},
		{"conftest.py", KindCheckConfig},
		{"package.json", KindCheckConfig},
		{".github/workflows/ci.yml", KindCheckConfig},
		{"Makefile", KindCheckConfig}, // a check runs make
		{"scripts/test.sh", KindCheckConfig},
		{"scripts/other.sh", KindSource},
		{"a.go", KindSource},    // what grep checks, not a check definition
		{"calc.js", KindSource}, // what node --check checks
		{"ci/lint.sh", KindCheckConfig},
		{"lint/eslint.json", KindCheckConfig},
		{"lint/pylintrc", KindCheckConfig},
		{"app.py", KindSource},
		{"README.md", KindSource},
		// The extension's case does not matter.
		{"calc_test.GO", KindTest},
		{"test_calc.PY", KindTest},
		{"src/sum.test.TSX", KindTest},
		{"src/AppTest.JAVA", KindTest},
		{"test_stub.pyi", KindSource}, // a stub pytest does not collect
	} {
		if got := c.Classify(tc.path); got != tc.want {
			t.Errorf("Classify(%q) = %s, want %s", tc.path, got, tc.want)
		}
	}
	if got := (Classifier{}).Classify("Makefile"); got != KindSource {
		t.Errorf("a Makefile no check runs is %s, want source", got)
	}
}

func TestIsTestCode(t *testing.T) {
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"tests/foo.rs", true},
		{"tests/run.sh", true},
		{"tests/run.bash", true},
		{"tests/Foo.KT", true},
		{"tests/widget.hh", true},
		{"testdata/golden.json", false},
		{"tests/fixture.txt", false},
		{"tests/noext", false},
	} {
		if got := isTestCode(tc.path); got != tc.want {
			t.Errorf("isTestCode(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

const goBefore = `package calc

import "testing"

func TestAdd(t *testing.T) {
	if got := Add(2, 3); got != 5 {
		t.Errorf("Add(2, 3) = %d, want 5", got)
	}
}

func TestSub(t *testing.T) {
	cases := []struct{ a, b, want int }{
		{3, 1, 2},
		{1, 1, 0},
	}
	for _, c := range cases {
		if got := Sub(c.a, c.b); got != c.want {
			t.Fatalf("Sub(%d, %d) = %d", c.a, c.b, got)
		}
	}
}
`

func detect(t *testing.T, c Classifier, path, before, after string) []Finding {
	t.Helper()
	return c.Detect(Change{Path: path, Before: []byte(before), After: []byte(after), Existed: true, Exists: true})
}

func whats(fs []Finding) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, f.What)
	}
	return out
}

func TestGoWeakening(t *testing.T) {
	for _, tc := range []struct {
		name   string
		after  string
		whats  []string
		detail string
	}{
		{
			name:   "expected value changed",
			after:  strings.Replace(goBefore, "got != 5 {", "got != -1 {", 1),
			whats:  []string{WhatExpectedChanged},
			detail: "calc_test.go: a value in an existing test line changed on line 6 (5 → -1)",
		},
		{
			name:   "failing test deleted",
			after:  strings.Replace(goBefore, goBefore[strings.Index(goBefore, "func TestAdd"):strings.Index(goBefore, "func TestSub")], "", 1),
			whats:  []string{WhatTestRemoved, WhatAssertionsRemoved},
			detail: "calc_test.go: the test TestAdd was removed",
		},
		{
			name:   "skip added",
			after:  strings.Replace(goBefore, "func TestAdd(t *testing.T) {\n", "func TestAdd(t *testing.T) {\n\tt.Skip(\"flaky\")\n", 1),
			whats:  []string{WhatSkipAdded},
			detail: "calc_test.go: a skip marker was added on line 6",
		},
		{
			name:   "table case removed",
			after:  strings.Replace(goBefore, "\t\t{1, 1, 0},\n", "", 1),
			whats:  []string{WhatCasesRemoved},
			detail: "calc_test.go: 1 of the 2 table cases of TestSub were removed",
		},
		{
			name:   "assertion removed",
			after:  strings.Replace(goBefore, "\t\t\tt.Fatalf(\"Sub(%d, %d) = %d\", c.a, c.b, got)\n", "", 1),
			whats:  []string{WhatAssertionsRemoved},
			detail: "calc_test.go: 1 of 2 assertions were removed",
		},
		{
			name:  "new test added",
			after: goBefore + "\nfunc TestMul(t *testing.T) {\n\tif Mul(2, 3) != 6 {\n\t\tt.Fatal(\"Mul\")\n\t}\n}\n",
		},
		{
			name:  "a comment mentions t.Skip()",
			after: strings.Replace(goBefore, "func TestAdd(t *testing.T) {\n", "func TestAdd(t *testing.T) {\n\t// never t.Skip() here: 5 is the point\n", 1),
		},
		{
			name:  "a message text changed",
			after: strings.Replace(goBefore, `"Add(2, 3) = %d, want 5"`, `"Add(2, 3) returned %d, want 5"`, 1),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := detect(t, Classifier{}, "calc_test.go", goBefore, tc.after)
			want := tc.whats
			if want == nil {
				want = []string{}
			}
			if diff := cmp.Diff(want, whats(got)); diff != "" {
				t.Fatalf("findings (-want +got):\n%s\n%+v", diff, got)
			}
			if tc.detail != "" && got[0].Detail != tc.detail {
				t.Fatalf("detail = %q, want %q", got[0].Detail, tc.detail)
			}
		})
	}
}

const pyBefore = `import unittest
from calc import add


class TestAdd(unittest.TestCase):
    def test_small(self):
        self.assertEqual(add(2, 3), 5)

    def test_negative(self):
        # a comment with @unittest.skip in it
        self.assertEqual(add(-2, -3), -5)


if __name__ == "__main__":
    unittest.main()
`

func TestPythonWeakening(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after string
		whats []string
	}{
		{"skip decorator", strings.Replace(pyBefore, "    def test_small", "    @unittest.skip(\"later\")\n    def test_small", 1), []string{WhatSkipAdded}},
		{"skipTest call", strings.Replace(pyBefore, "        self.assertEqual(add(2, 3), 5)", "        self.skipTest(\"x\")\n        self.assertEqual(add(2, 3), 5)", 1), []string{WhatSkipAdded}},
		{"expected changed", strings.Replace(pyBefore, "add(2, 3), 5)", "add(2, 3), 6)", 1), []string{WhatExpectedChanged}},
		{"test removed", strings.Replace(pyBefore, "    def test_small(self):\n        self.assertEqual(add(2, 3), 5)\n\n", "", 1), []string{WhatTestRemoved, WhatAssertionsRemoved}},
		{"test added", pyBefore + "\n\nclass TestMore(unittest.TestCase):\n    def test_zero(self):\n        self.assertEqual(add(0, 0), 0)\n", nil},
		{"skip text in a string", strings.Replace(pyBefore, "unittest.main()", "print(\"@unittest.skip\")\n    unittest.main()", 1), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := detect(t, Classifier{}, "tests/test_calc.py", pyBefore, tc.after)
			want := tc.whats
			if want == nil {
				want = []string{}
			}
			if diff := cmp.Diff(want, whats(got)); diff != "" {
				t.Fatalf("findings (-want +got):\n%s\n%+v", diff, got)
			}
		})
	}
}

const jsBefore = `import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { add } from "../src/calc.js";

describe("add", () => {
  test("small numbers", () => {
    assert.equal(add(2, 3), 5);
  });
  test('negative', () => {
    assert.equal(add(-2, -3), -5); // it.skip is not used here
  });
});
`

func TestJSWeakening(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after string
		whats []string
	}{
		{"it.skip", strings.Replace(jsBefore, `test("small numbers"`, `test.skip("small numbers"`, 1), []string{WhatSkipAdded}},
		{"skip option", strings.Replace(jsBefore, `test("small numbers", () => {`, `test("small numbers", { skip: true }, () => {`, 1), []string{WhatSkipAdded}},
		{"only", strings.Replace(jsBefore, `test('negative'`, `test.only('negative'`, 1), []string{WhatOnlyAdded}},
		{"expected changed", strings.Replace(jsBefore, "add(2, 3), 5)", "add(2, 3), 6)", 1), []string{WhatExpectedChanged}},
		{"test removed", strings.Replace(jsBefore, "  test('negative', () => {\n    assert.equal(add(-2, -3), -5); // it.skip is not used here\n  });\n", "", 1), []string{WhatTestRemoved, WhatAssertionsRemoved}},
		{"test added", strings.Replace(jsBefore, "});\n", "  test(\"zero\", () => {\n    assert.equal(add(0, 0), 0);\n  });\n});\n", 1), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := detect(t, Classifier{}, "test/calc.test.js", jsBefore, tc.after)
			want := tc.whats
			if want == nil {
				want = []string{}
			}
			if diff := cmp.Diff(want, whats(got)); diff != "" {
				t.Fatalf("findings (-want +got):\n%s\n%+v", diff, got)
			}
		})
	}
}

func TestCheckConfigWeakening(t *testing.T) {
	c := Classifier{Checks: [][]string{{"make", "test"}}}
	pkg := `{"name":"x","version":"1.0.0","scripts":{"test":"node --test"},"dependencies":{}}`
	for _, tc := range []struct {
		name, path, before, after string
		finding                   bool
	}{
		{"package scripts", "package.json", pkg, strings.Replace(pkg, "node --test", "true", 1), true},
		{"package deps", "package.json", pkg, strings.Replace(pkg, `"dependencies":{}`, `"dependencies":{"left-pad":"1.3.0"}`, 1), false},
		{"package reformatted", "package.json", pkg, strings.ReplaceAll(pkg, ",", ",\n  "), false},
		{"pyproject ruff", "pyproject.toml", "[project]\nname = \"x\"\n[tool.ruff]\nselect = [\"E\", \"F\"]\n", "[project]\nname = \"x\"\n[tool.ruff]\nselect = [\"E\"]\n", true},
		{"pyproject version", "pyproject.toml", "[project]\nversion = \"1\"\n[tool.ruff]\nselect = [\"E\"]\n", "[project]\nversion = \"2\"\n[tool.ruff]\nselect = [\"E\"]\n", false},
		{"golangci", ".golangci.yml", "linters:\n  enable: [errcheck]\n", "linters:\n  enable: []\n", true},
		{"makefile", "Makefile", "test:\n\tgo test ./...\n", "test:\n\ttrue\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := detect(t, c, tc.path, tc.before, tc.after)
			if (len(got) > 0) != tc.finding {
				t.Fatalf("findings = %+v, want a finding: %v", got, tc.finding)
			}
			if tc.finding && got[0].What != WhatCheckConfig {
				t.Fatalf("what = %s", got[0].What)
			}
		})
	}
}

func TestNewAndDeletedFiles(t *testing.T) {
	c := Classifier{}
	if got := c.Detect(Change{Path: "new_test.go", After: []byte("package x\nfunc TestX(t *testing.T) { t.Skip() }\n"), Exists: true}); len(got) != 0 {
		t.Fatalf("a new test file is never weakening: %+v", got)
	}
	got := c.Detect(Change{Path: "calc_test.go", Before: []byte(goBefore), Existed: true})
	if diff := cmp.Diff([]string{WhatTestFileDeleted}, whats(got)); diff != "" {
		t.Fatalf("deleted test file: %s", diff)
	}
	if got := c.Detect(Change{Path: "calc.go", Before: []byte("package x"), After: []byte("package y"), Existed: true, Exists: true}); len(got) != 0 {
		t.Fatalf("source edits are never weakening: %+v", got)
	}
	got = detect(t, c, "testdata/want.json", `{"sum":5}`, `{"sum":-1}`)
	if diff := cmp.Diff([]string{WhatFixtureChanged}, whats(got)); diff != "" {
		t.Fatalf("fixture: %s", diff)
	}
}

func TestSentence(t *testing.T) {
	fs := []Finding{{Detail: "a_test.go: the test TestA was removed"}, {Detail: "x"}, {Detail: "y"}}
	if got := Sentence(fs); got != "a_test.go: the test TestA was removed (and 2 more weakening edits)" {
		t.Fatalf("Sentence = %q", got)
	}
	if got := Sentence(fs[:1]); got != fs[0].Detail {
		t.Fatalf("Sentence = %q", got)
	}
}

func TestScanShapes(t *testing.T) {
	lines := scan(famGo, "x := a - 1 // c\ny := f(-1, \"s\", `r`)\n/* multi\nline */ z := true\n")
	want := []string{"x := a - ‹›", "y := f(‹›, ‹›, ‹›)", "", "z := ‹›", ""}
	var got []string
	for _, l := range lines {
		got = append(got, l.Shape)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("shapes (-want +got):\n%s", diff)
	}
}

func FuzzDetect(f *testing.F) {
	f.Add("calc_test.go", goBefore, strings.Replace(goBefore, "5", "6", 1))
	f.Add("tests/test_calc.py", pyBefore, pyBefore+"\n@unittest.skip\n")
	f.Add("test/calc.test.js", jsBefore, strings.Replace(jsBefore, "test(", "test.only(", 1))
	f.Add("pyproject.toml", "[tool.x]\na=1", "[tool.x]\na=2")
	f.Fuzz(func(t *testing.T, path, before, after string) {
		fs := Classifier{}.Detect(Change{Path: path, Before: []byte(before), After: []byte(after), Existed: true, Exists: true})
		if len(fs) > maxFindings {
			t.Fatalf("%d findings, over the bound", len(fs))
		}
		for _, f := range fs {
			if f.Detail == "" || f.What == "" {
				t.Fatalf("finding without detail: %+v", f)
			}
		}
	})
}
