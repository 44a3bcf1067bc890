package repomap

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"flow/bufferfs"
)

func TestSymbols(t *testing.T) {
	for _, tc := range []struct {
		lang, src string
		want      []string
	}{
		{"go", "package a\n\ntype Stock struct{}\n\nconst Max = 3\nvar x, _ = 1, 2\n\nfunc (s *Stock) Remove(n int) error { return nil }\nfunc (l List[T]) Len() int { return 0 }\nfunc New() *Stock { return nil }\n",
			[]string{"Stock", "Max", "x", "Stock.Remove", "List.Len", "New"}},
		{"go", "package a\n\nfunc Good() {}\n\nfunc Broken( {\n", []string{"Good", "Broken"}}, // what parsed before the error
		{"python", "import re\n\nLIMIT = 3\n\nclass Cart:\n    def __init__(self):\n        def inner(): pass\n    async def total(self):\n        pass\n\ndef slugify(text):\n    return text\n",
			[]string{"LIMIT", "Cart", "Cart.__init__", "Cart.total", "slugify"}},
		{"javascript", "'use strict';\nfunction camelCase(s) {}\nconst chunk = (a, n) => [];\nclass Cart {}\nexport async function load() {}\nmodule.exports = { camelCase, chunk: chunk };\nexports.other = 1;\n  function nested() {}\n",
			[]string{"camelCase", "chunk", "Cart", "load", "other"}},
		{"typescript", "export interface Money { cents: number }\nexport type Id = string;\nexport default class Store {}\n", []string{"Money", "Id", "Store"}},
	} {
		if got := Symbols(tc.lang, []byte(tc.src)); !slices.Equal(got, tc.want) {
			t.Errorf("Symbols(%s, %q) = %q, want %q", tc.lang, tc.src, got, tc.want)
		}
	}
	var many strings.Builder
	for i := range 40 {
		many.WriteString("def f" + string(rune('a'+i%26)) + strings.Repeat("x", i) + "():\n    pass\n")
	}
	if got := Symbols("python", []byte(many.String())); len(got) != maxSymbolsFile+1 || got[maxSymbolsFile] != "…" {
		t.Errorf("Symbols of 40 defs = %d symbols ending %q, want %d and an ellipsis", len(got), got[len(got)-1], maxSymbolsFile)
	}
}

func TestLanguage(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{"main.go", "go"},
		{"A.GO", "go"},
		{"src/x.Py", "python"},
		{"stubs/types.pyi", "python"},
		{"web/App.TSX", "typescript"},
		{"lib/x.mjs", "javascript"},
		{"lib.rs", ""}, // a language the map has no symbols for
		{"README.md", ""},
		{"Makefile", ""},
	} {
		if got := Language(tc.path); got != tc.want {
			t.Errorf("Language(%q) = %q, want %q", tc.path, got, tc.want)
		}
	}
}

// TestSymbolsOfDecls covers what the map lists now that it reads the
// declarations the code-block reader edits: nothing inside strings or
// comments, each name once, no blank identifier, and the methods of a
// Python class only.
func TestSymbolsOfDecls(t *testing.T) {
	for _, tc := range []struct {
		name, lang, src string
		want            []string
	}{
		{"a parenthesized receiver", "go", "package a\n\nfunc (p (*Pair)) Swap() {}\n", []string{"Pair.Swap"}},
		{"blank names", "go", "package a\n\nvar _ = 1\n\nfunc _() {}\n\ntype T int\n", []string{"T"}},
		{"a name twice", "go", "package a\n\nfunc init() {}\n\nfunc init() {}\n", []string{"init"}},
		{"a fragment without a package clause", "go", "func Median() {}\n", []string{"Median"}},
		{"a def inside a docstring", "python", "class Cart:\n    \"\"\"Use it so:\n\ndef example():\n    \"\"\"\n    def total(self):\n        pass\n",
			[]string{"Cart", "Cart.total"}},
		{"a nested class's methods", "python", "class Form:\n    class Meta:\n        def inner(self): pass\n    def clean(self):\n        pass\n",
			[]string{"Form", "Form.clean"}},
		{"a comparison is no constant", "python", "X == 1\nLIMIT = 2\nlower = 3\n", []string{"LIMIT"}},
		{"a property and its setter", "python", "class A:\n    @property\n    def x(self): pass\n    @x.setter\n    def x(self, v): pass\n", []string{"A", "A.x"}},
		{"commented-out code", "javascript", "/*\nfunction old() {}\n*/\nfunction current() {}\n", []string{"current"}},
		{"a template literal", "javascript", "const doc = `\nfunction example() {}\n`;\n", []string{"doc"}},
		{"a const enum", "typescript", "export const enum Dir { Up }\n", []string{"Dir"}},
	} {
		if got := Symbols(tc.lang, []byte(tc.src)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Symbols(%s) = %q, want %q", tc.name, tc.lang, got, tc.want)
		}
	}
}

func TestOutputRefs(t *testing.T) {
	out := "stubs/types.pyi:3: error: x\nA.GO:7:2: undefined: y\nREADME.md:1 is not source\n./web/App.TSX:10:5 - error\n"
	want := []string{"stubs/types.pyi", "A.GO", "web/App.TSX"}
	if got := outputRefs(out); !slices.Equal(got, want) {
		t.Errorf("outputRefs = %q, want %q", got, want)
	}
}

func disk(t *testing.T, files map[string]string) bufferfs.FS {
	t.Helper()
	dir := t.TempDir()
	for p, s := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := bufferfs.NewDisk(dir, bufferfs.DiskOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func paths(fs []File) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Path)
	}
	return out
}

func TestRelevant(t *testing.T) {
	fsys := disk(t, map[string]string{
		"inventory/stock.go":      "package inventory\n\ntype Stock struct{}\n\nfunc (s *Stock) Remove(n int) error { return nil }\n",
		"inventory/stock_test.go": "package inventory\n",
		"server/config.go":        "package server\n\ntype Config struct{}\n",
		"server/server.go":        "package server\n\nfunc Addr() string { return \"\" }\n",
		"web/util.test.js":        "test('x', () => {})\n",
		"web/util.js":             "function pad() {}\n",
		"lib/test_slug.py":        "def test_slug(): pass\n",
		"lib/slug.py":             "def slugify(s): return s\n",
		"README.md":               "# not source\n",
	})
	m, err := Build(context.Background(), fsys)
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(m.Files); slices.Contains(got, "README.md") || len(got) != 8 {
		t.Fatalf("Build files = %q, want the 8 source files", got)
	}
	for _, tc := range []struct {
		name string
		h    Hints
		want []string // a prefix of the result
	}{
		{"a symbol named in words", Hints{Task: "Stock.Remove should refuse to go negative"},
			[]string{"inventory/stock.go", "inventory/stock_test.go"}},
		{"file names in the task", Hints{Task: "Add a Host field to Config in config.go and use it in server.go"},
			[]string{"server/config.go", "server/server.go"}},
		{"a file:line in the failure", Hints{Task: "make the tests pass", Output: "    util.test.js:3:7 expected 2"},
			[]string{"web/util.test.js", "web/util.js"}},
		{"a Python traceback", Hints{Task: "fix it", Output: "  File \"/tmp/x/lib/test_slug.py\", line 4, in test_slug"},
			[]string{"lib/test_slug.py", "lib/slug.py"}},
		{"given paths come first", Hints{Task: "Stock.Remove", Paths: []string{"server/server.go"}},
			[]string{"server/server.go", "inventory/stock.go"}},
	} {
		got := paths(m.Relevant(tc.h))
		if len(got) < len(tc.want) || !slices.Equal(got[:len(tc.want)], tc.want) {
			t.Errorf("%s: Relevant = %q, want it to start with %q", tc.name, got, tc.want)
		}
	}
	if got := m.Relevant(Hints{Task: "improve things"}); len(got) != 0 {
		t.Errorf("Relevant with no hint = %q, want none", paths(got))
	}
	if s := m.Render(80); len(s) > 80+len("(more source files not shown; use file_list)\n") || !strings.Contains(s, "(more source files not shown") {
		t.Errorf("Render(80) = %q, want it bounded and saying files were left out", s)
	}
	if s := m.Render(10000); !strings.Contains(s, "inventory/stock.go: Stock, Stock.Remove\n") {
		t.Errorf("Render = %q, want a line per file with its symbols", s)
	}
}

// TestRelevantPartnersAreDirect: only the hinted files' own partners are
// scored, never a partner's partner, so the order does not depend on how
// a map is iterated. x.test.js's partner is x.js; x.js's other partner,
// x.spec.js, has no hint and must not appear.
func TestRelevantPartnersAreDirect(t *testing.T) {
	t.Parallel()
	m := Map{Files: []File{{Path: "x.js"}, {Path: "x.spec.js"}, {Path: "x.test.js"}}}
	for range 200 {
		got := paths(m.Relevant(Hints{Paths: []string{"x.test.js"}}))
		if want := []string{"x.test.js", "x.js"}; !slices.Equal(got, want) {
			t.Fatalf("Relevant = %v, want %v (a partner's partner scored)", got, want)
		}
	}
}
