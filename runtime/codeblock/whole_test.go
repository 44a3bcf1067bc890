package codeblock

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWholeFiles(t *testing.T) {
	existing := map[string]string{
		"stats.go":       "package stats\n\nfunc Median() {}\n",
		"pkg/util.py":    "def f():\n    ...\n",
		"named/first.go": "// named/first.go\npackage named\n",
		"arrays.js":      "/**\n * unique drops repeats.\n */\nexport function unique(a) {\n  return [...new Set(a)];\n}\n",
		"arrays.test.js": "import { test } from \"node:test\";\nimport { unique } from \"./arrays.js\";\n\ntest(\"unique\", () => {\n  unique([]);\n});\n",
	}
	arraysJS := "/**\n * unique drops repeats.\n */\nexport function unique(a) {\n  return [...new Set(a)];\n}\n\nexport function chunk(a, n) {\n  return [a];\n}\n"
	arraysTest := "import { test } from \"node:test\";\nimport { unique, chunk } from \"./arrays.js\";\n\ntest(\"unique\", () => {\n  unique([]);\n});\n\ntest(\"chunk\", () => {\n  chunk([], 1);\n});\n"
	onlyChunk := "```js\nexport function chunk(a, n) {\n  return [a];\n}\n```\n"
	old := func(p string) (string, bool) {
		s, ok := existing[p]
		return s, ok
	}
	fenceGo := "```go\npackage stats\n\nfunc Median() int { return 1 }\n```\n"
	tests := []struct {
		name   string
		answer string
		want   []Whole
	}{
		{"a path on the line before", "Here is the fix.\n\nstats.go\n" + fenceGo,
			[]Whole{{Path: "stats.go", Text: "package stats\n\nfunc Median() int { return 1 }\n"}}},
		{"bold, backticks, a heading, a colon", "### File: **`stats.go`**:\n" + fenceGo,
			[]Whole{{Path: "stats.go", Text: "package stats\n\nfunc Median() int { return 1 }\n"}}},
		{"a remark after the name", "stats.go (as the run found it, changed):\n" + fenceGo,
			[]Whole{{Path: "stats.go", Text: "package stats\n\nfunc Median() int { return 1 }\n"}}},
		{"a list item", "1. `stats.go`\n" + fenceGo,
			[]Whole{{Path: "stats.go", Text: "package stats\n\nfunc Median() int { return 1 }\n"}}},
		{"the fence's info string", "```go stats.go\npackage stats\n```\n",
			[]Whole{{Path: "stats.go", Text: "package stats\n"}}},
		{"the fence's info string alone", "```stats_test.go\npackage stats\n```\n",
			[]Whole{{Path: "stats_test.go", Text: "package stats\n"}}},
		{"a nested path, a new file", "pkg/new_test.py\n```python\ndef test_x():\n    assert True\n```\n",
			[]Whole{{Path: "pkg/new_test.py", Text: "def test_x():\n    assert True\n"}}},
		{"two files, the last block of a path wins", "a.js\n```js\nold\n```\nb.js\n```js\nb\n```\na.js\n```js\nnew\n```\n",
			[]Whole{{Path: "a.js", Text: "new\n"}, {Path: "b.js", Text: "b\n"}}},
		{"a comment naming the file is dropped", "```go\n// stats.go\npackage stats\n```\n",
			nil}, // no name before or in the fence: the comment alone does not name it
		{"a comment naming the named file is dropped", "stats.go\n```go\n// stats.go\npackage stats\n```\n",
			[]Whole{{Path: "stats.go", Text: "package stats\n"}}},
		{"a comment the file already has stays", "named/first.go\n```go\n// named/first.go\npackage named\n```\n",
			[]Whole{{Path: "named/first.go", Text: "// named/first.go\npackage named\n"}}},
		{"a sentence is no name", "Change the function in stats.go like this:\n" + fenceGo, nil},
		// The 1.5B model's whole-file answers (doc/eval.md §4): each file
		// under a sentence that names it, the file kept but for the change.
		{"a sentence naming a file whose block keeps it", "The code needs chunk.\n\nHere's the corrected version of `arrays.js`:\n\n```js\n" + arraysJS + "```\n\nAnd here's the updated `arrays.test.js`:\n\n```js\n" + arraysTest + "```\n",
			[]Whole{{Path: "arrays.js", Text: arraysJS}, {Path: "arrays.test.js", Text: arraysTest}}},
		{"a sentence without backticks", "The new content of arrays.test.js:\n```js\n" + arraysTest + "```\n",
			[]Whole{{Path: "arrays.test.js", Text: arraysTest}}},
		{"a sentence over one function is no whole file", "Add this to `arrays.js`:\n" + onlyChunk, nil},
		{"a sentence over a changed first line is no whole file", "Here's the updated `arrays.test.js`:\n```js\n" + strings.Replace(arraysTest, `test("unique"`, `test("unique keeps order"`, 1) + "```\n", nil},
		{"a sentence naming a file that does not exist", "Here's the new file `chunk.js`:\n" + onlyChunk, nil},
		{"a sentence naming two files", "Here's `arrays.js`, as `arrays.test.js` imports it:\n```js\n" + arraysJS + "```\n", nil},
		{"a sentence without a colon", "I changed `arrays.js`.\n```js\n" + arraysJS + "```\n", nil},
		{"a word is no name", "Output\n```\nok\n```\n", nil},
		{"no escape from the workspace", "../secret.go\n" + fenceGo, nil},
		{"an unclosed block is cut", "stats.go\n```go\npackage stats\n", nil},
		{"indentation kept", "a.py\n```python\ndef f():\n    return 1\n```\n",
			[]Whole{{Path: "a.py", Text: "def f():\n    return 1\n"}}},
		{"a longer fence holds a shorter one", "README.md\n````markdown\n```go\nx\n```\n````\n",
			[]Whole{{Path: "README.md", Text: "```go\nx\n```\n"}}},
		{"elided code", "stats.go\n```go\npackage stats\n\n// ... rest of the file unchanged\n```\n",
			[]Whole{{Path: "stats.go", Text: "package stats\n\n// ... rest of the file unchanged\n", Elided: "// ... rest of the file unchanged"}}},
		{"a bare ellipsis line", "a.py\n```python\nimport os\n...\n```\n",
			[]Whole{{Path: "a.py", Text: "import os\n...\n", Elided: "..."}}},
		{"an ellipsis the file had is its own", "pkg/util.py\n```python\ndef f():\n    ...\n\ndef g():\n    return 2\n```\n",
			[]Whole{{Path: "pkg/util.py", Text: "def f():\n    ...\n\ndef g():\n    return 2\n"}}},
		{"a comment that mentions 'unchanged' is the file's", "stats.go\n```go\n// Remove leaves the count unchanged when it fails.\nfunc Remove() {}\n```\n",
			[]Whole{{Path: "stats.go", Text: "// Remove leaves the count unchanged when it fails.\nfunc Remove() {}\n"}}},
		{"existing code elided", "a.py\n```python\n# existing code\ndef g():\n    return 2\n```\n",
			[]Whole{{Path: "a.py", Text: "# existing code\ndef g():\n    return 2\n", Elided: "# existing code"}}},
		{"an ellipsis comment", "a.js\n```js\n// ...\nexport const x = 1;\n```\n",
			[]Whole{{Path: "a.js", Text: "// ...\nexport const x = 1;\n", Elided: "// ..."}}},
		{"variadic Go is code", "stats.go\n```go\nfunc Sum(xs ...int) int { return 0 }\n```\n",
			[]Whole{{Path: "stats.go", Text: "func Sum(xs ...int) int { return 0 }\n"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := WholeFiles(tc.answer, old)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("WholeFiles (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLeftOut: the definitions a whole file leaves out are named, in the
// old file's order; a renamed one is not, nor one the new text keeps.
func TestLeftOut(t *testing.T) {
	const uniqueJS = "/**\n * unique returns the elements once.\n */\nexport function unique(array) {\n  return [...new Set(array)];\n}\n"
	const chunkJS = "/**\n * chunk splits array.\n */\nexport function chunk(array, size) {\n  const out = [];\n  for (let i = 0; i < array.length; i += size) {\n    out.push(array.slice(i, i + size));\n  }\n  return out;\n}\n"
	tests := []struct {
		name, language, old, text string
		want                      []string
	}{
		{"new function alone", "javascript", uniqueJS, chunkJS, []string{"unique"}},
		{"both kept", "javascript", uniqueJS, uniqueJS + "\n" + chunkJS, nil},
		{"a changed body", "javascript", uniqueJS, strings.Replace(uniqueJS, "new Set(array)", "new Set(array.flat())", 1), nil},
		{"renamed", "go", "package a\n\nvar broken int\n\nfunc Keep() {}\n", "package a\n\nvar fixed int\n\nfunc Keep() {}\n", nil},
		{"renamed with a changed body", "go",
			"package a\n\nfunc Sum(xs []int) int {\n\tt := 0\n\tfor _, x := range xs {\n\t\tt += x\n\t}\n\treturn t\n}\n",
			"package a\n\nfunc Total(xs []int) int {\n\tt := 0\n\tfor _, x := range xs {\n\t\tt += x * 2\n\t}\n\treturn t\n}\n", nil},
		{"a Go method and a function", "go",
			"package a\n\ntype S struct{}\n\nfunc (S) Remove() {}\n\nfunc Keep() {}\n\nfunc Other() int { return 1 }\n",
			"package a\n\ntype S struct{}\n\nfunc Keep() {}\n\nfunc Added() string { return \"x\" }\n", []string{"S.Remove", "Other"}},
		{"a Python method", "python",
			"class Cart:\n    def total(self):\n        return 1\n\n    def count(self):\n        return 2\n",
			"class Cart:\n    def total(self):\n        return 3\n", []string{"Cart.count"}},
		{"a Go test", "go",
			"package a\n\nimport \"testing\"\n\nfunc TestOld(t *testing.T) {\n\tt.Log(1)\n}\n",
			"package a\n\nimport \"testing\"\n\nfunc TestNew(t *testing.T) {\n\tt.Fatal(2)\n}\n", []string{"TestOld"}},
		{"imports are not definitions", "javascript", "import { a } from \"./a.js\";\n\nexport const b = 1;\n", "import { c } from \"./c.js\";\n\nexport const b = 1;\n", nil},
		{"new text does not parse", "go", "package a\n\nfunc A() {}\n", "package a\n\nfunc B( {\n", nil},
		{"a language not read", "ruby", "def a\nend\n", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := LeftOut(tc.language, tc.old, tc.text); !slices.Equal(got, tc.want) {
				t.Errorf("LeftOut() = %q, want %q", got, tc.want)
			}
		})
	}
}
