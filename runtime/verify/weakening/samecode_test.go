package weakening

import "testing"

func TestSameCode(t *testing.T) {
	jsBefore := "/**\n * unique returns the elements.\n */\nexport function unique(a) {\n  return [...new Set(a)];\n}\n"
	jsInComment := "/**\n * unique returns the elements.\n\nexport function chunk(a, n) {\n  return [a];\n}\n */\nexport function unique(a) {\n  return [...new Set(a)];\n}\n"
	py := "def f(x):\n    if x:\n        return 1\n    return 2\n"
	for _, c := range []struct {
		name, path, before, after string
		same                      bool
	}{
		{"a function put in a JS doc comment", "arrays.js", jsBefore, jsInComment, true},
		{"a JS function added", "arrays.js", jsBefore, jsBefore + "export function chunk(a, n) {\n  return [a];\n}\n", false},
		{"Go comments, blank lines and indentation", "a.go", "package a\n\nfunc F() int { return 1 }\n", "// Package a.\npackage a\n\n\n    func F() int { return 1 } // one\n", true},
		{"a Go string changed", "a.go", "package a\n\nvar s = \"a\"\n", "package a\n\nvar s = \"b\"\n", false},
		{"a Go token changed inside a line", "a.go", "package a\n\nvar n = 1 + 2\n", "package a\n\nvar n = 1 - 2\n", false},
		{"Python comments", "f.py", py, "# f decides.\n" + py + "  # end\n", true},
		{"Python indentation is code", "f.py", py, "def f(x):\n    if x:\n        return 1\n        return 2\n", false},
		{"a Python docstring is code", "f.py", py, "def f(x):\n    \"\"\"Decide.\"\"\"\n" + py[len("def f(x):\n"):], false},
		{"another language", "a.rb", "x = 1\n", "x = 1 # one\n", false},
	} {
		if got := SameCode(c.path, []byte(c.before), []byte(c.after)); got != c.same {
			t.Errorf("%s: SameCode = %v, want %v", c.name, got, c.same)
		}
	}
}
