package lang

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// item is what a test compares of a Decl: its spans as the text they hold.
type item struct {
	Kind    Kind
	Name    string
	Names   []string
	Members []string
	Test    bool
	Text    string   // from Start to End
	Code    string   // from CodeStart to End
	Specs   []string // the import specs' text
}

func items(src string, ds []Decl) []item {
	var out []item
	for _, d := range ds {
		it := item{Kind: d.Kind, Name: d.Name, Names: d.Names, Members: d.Members, Test: d.Test,
			Text: src[d.Start:d.End], Code: src[d.CodeStart:d.End]}
		for _, s := range d.Specs {
			it.Specs = append(it.Specs, src[s.Start:s.End])
		}
		out = append(out, it)
	}
	return out
}

const goFile = `// Package stock keeps counts.
package stock

import (
	"errors"
	str "strings"
)

// Stock is a count.
type Stock struct{ n int }

const (
	Max, Min = 10, 0
	_        = 3
)

var _ = errors.New

	// Remove takes n away.
	func (s *Stock) Remove(n int) error { return nil }

func (l List[K, V]) Len() int { return 0 }

func (p (*Pair)) Swap() {}

func TestRemove(t *testing.T) {}

func Testify() {}

func ExampleStock() {}
`

const pyFile = `"""Carts."""
import re
from os import path

LIMIT = 3
total: int = 0
LIMIT == 3

# Cart holds items.
@dataclass
class Cart:
    """A cart.

def not_a_method(self):
    """
    class Meta:
        def inner(self): pass

    @property
    def count(self):
        def helper(): pass
        return 1
# a comment at the margin, inside the class
    async def total(self):
        pass
)

def test_cart():
    pass


class TestCart(unittest.TestCase):
    def test_add(self):
        pass

if __name__ == "__main__":
    main()
`

const jsFile = `import { a } from "./a.js";
import{ b } from "./b.js";

/*
function commentedOut() {}
*/
/** sum adds. */
export async function* sum(xs) {
  return 0;
}
export default class Store {
}
export const enum Dir { Up }
export const LIMIT = 3;
let count = 0;
export interface Money { cents: number }
export type Id = string;
@Component({ selector: "x" })
export abstract class View {}
const tpl = ` + "`" + `
function insideTemplate() {}
` + "`" + `;
module.exports = { sum, Store: Store };
exports.other = 1;
main();
`

func TestDecls(t *testing.T) {
	tests := []struct {
		name, lang, src string
		want            []item
		ok              bool
	}{
		{
			name: "a Go file", lang: "go", src: goFile, ok: true,
			want: []item{
				{Kind: Package, Name: "stock", Names: []string{"stock"},
					Text: "// Package stock keeps counts.\npackage stock", Code: "package stock"},
				{Kind: Import, Text: "import (\n\t\"errors\"\n\tstr \"strings\"\n)", Code: "import (\n\t\"errors\"\n\tstr \"strings\"\n)",
					Specs: []string{`"errors"`, `str "strings"`}},
				{Kind: Type, Name: "Stock", Names: []string{"Stock"},
					Text: "// Stock is a count.\ntype Stock struct{ n int }", Code: "type Stock struct{ n int }"},
				{Kind: Const, Name: "Max", Names: []string{"Max", "Min", "_"},
					Text: "const (\n\tMax, Min = 10, 0\n\t_        = 3\n)", Code: "const (\n\tMax, Min = 10, 0\n\t_        = 3\n)"},
				{Kind: Var, Name: "_", Names: []string{"_"}, Text: "var _ = errors.New", Code: "var _ = errors.New"},
				// An indented declaration starts with its line's indentation.
				{Kind: Method, Name: "Stock.Remove", Names: []string{"Stock.Remove"},
					Text: "\t// Remove takes n away.\n\tfunc (s *Stock) Remove(n int) error { return nil }",
					Code: "func (s *Stock) Remove(n int) error { return nil }"},
				{Kind: Method, Name: "List.Len", Names: []string{"List.Len"},
					Text: "func (l List[K, V]) Len() int { return 0 }", Code: "func (l List[K, V]) Len() int { return 0 }"},
				{Kind: Method, Name: "Pair.Swap", Names: []string{"Pair.Swap"},
					Text: "func (p (*Pair)) Swap() {}", Code: "func (p (*Pair)) Swap() {}"},
				{Kind: Func, Name: "TestRemove", Names: []string{"TestRemove"}, Test: true,
					Text: "func TestRemove(t *testing.T) {}", Code: "func TestRemove(t *testing.T) {}"},
				{Kind: Func, Name: "Testify", Names: []string{"Testify"},
					Text: "func Testify() {}", Code: "func Testify() {}"},
				{Kind: Func, Name: "ExampleStock", Names: []string{"ExampleStock"}, Test: true,
					Text: "func ExampleStock() {}", Code: "func ExampleStock() {}"},
			},
		},
		{
			name: "a Go fragment has no package clause", lang: "go", ok: true,
			src: "// Median is the middle.\nfunc Median() {}\n",
			want: []item{{Kind: Func, Name: "Median", Names: []string{"Median"},
				Text: "// Median is the middle.\nfunc Median() {}", Code: "func Median() {}"}},
		},
		{
			name: "a package clause after a comment on its line", lang: "go", ok: true,
			src: "/* generated */ package a\n\nfunc F() {}\n",
			want: []item{
				{Kind: Package, Name: "a", Names: []string{"a"}, Text: "package a", Code: "package a"},
				{Kind: Func, Name: "F", Names: []string{"F"}, Text: "func F() {}", Code: "func F() {}"},
			},
		},
		{
			name: "Go that does not parse gives what parsed before the error", lang: "go", ok: false,
			src: "package a\n\nfunc Good() {}\n\nfunc Broken( {\n",
			want: []item{
				{Kind: Package, Name: "a", Names: []string{"a"}, Text: "package a", Code: "package a"},
				{Kind: Func, Name: "Good", Names: []string{"Good"}, Text: "func Good() {}", Code: "func Good() {}"},
				{Kind: Func, Name: "Broken", Names: []string{"Broken"}, Text: "func Broken( {\n", Code: "func Broken( {\n"},
			},
		},
		{
			name: "a Python file", lang: "python", src: pyFile, ok: true,
			want: []item{
				{Kind: Other, Text: `"""Carts."""`, Code: `"""Carts."""`},
				{Kind: Import, Text: "import re", Code: "import re"},
				{Kind: Import, Text: "from os import path", Code: "from os import path"},
				{Kind: Var, Name: "LIMIT", Names: []string{"LIMIT"}, Text: "LIMIT = 3", Code: "LIMIT = 3"},
				{Kind: Var, Name: "total", Names: []string{"total"}, Text: "total: int = 0", Code: "total: int = 0"},
				// A comparison assigns nothing.
				{Kind: Other, Text: "LIMIT == 3", Code: "LIMIT == 3"},
				// The methods are the defs at the body's first def, class
				// or decorator indentation, outside strings: not the
				// nested class's, not a nested function.
				{Kind: Class, Name: "Cart", Names: []string{"Cart"}, Members: []string{"Cart.count", "Cart.total"},
					Text: pyFile[strings.Index(pyFile, "# Cart holds") : strings.Index(pyFile, "\n)\n")+2],
					Code: pyFile[strings.Index(pyFile, "class Cart") : strings.Index(pyFile, "\n)\n")+2]},
				{Kind: Func, Name: "test_cart", Names: []string{"test_cart"}, Test: true,
					Text: "def test_cart():\n    pass", Code: "def test_cart():\n    pass"},
				{Kind: Class, Name: "TestCart", Names: []string{"TestCart"}, Members: []string{"TestCart.test_add"}, Test: true,
					Text: "class TestCart(unittest.TestCase):\n    def test_add(self):\n        pass",
					Code: "class TestCart(unittest.TestCase):\n    def test_add(self):\n        pass"},
				{Kind: Other, Text: "if __name__ == \"__main__\":\n    main()", Code: "if __name__ == \"__main__\":\n    main()"},
			},
		},
		{
			name: "Python ending inside a string", lang: "python", ok: false,
			src: "def f():\n    pass\n\nx = \"\"\"\ndef g():\n",
			want: []item{
				{Kind: Func, Name: "f", Names: []string{"f"}, Text: "def f():\n    pass", Code: "def f():\n    pass"},
				{Kind: Var, Name: "x", Names: []string{"x"}, Text: "x = \"\"\"\ndef g():", Code: "x = \"\"\"\ndef g():"},
			},
		},
		{
			name: "indented Python has no items", lang: "python", ok: true,
			src: "    def f(self):\n        pass\n",
		},
		{
			name: "a JavaScript file", lang: "javascript", src: jsFile, ok: true,
			want: []item{
				{Kind: Import, Text: `import { a } from "./a.js";`, Code: `import { a } from "./a.js";`},
				{Kind: Import, Text: `import{ b } from "./b.js";`, Code: `import{ b } from "./b.js";`},
				// A commented-out function is no declaration; the comment
				// leads the one that follows.
				{Kind: Func, Name: "sum", Names: []string{"sum"},
					Text: "/*\nfunction commentedOut() {}\n*/\n/** sum adds. */\nexport async function* sum(xs) {\n  return 0;\n}",
					Code: "export async function* sum(xs) {\n  return 0;\n}"},
				{Kind: Class, Name: "Store", Names: []string{"Store"}, Text: "export default class Store {\n}", Code: "export default class Store {\n}"},
				{Kind: Type, Name: "Dir", Names: []string{"Dir"}, Text: "export const enum Dir { Up }", Code: "export const enum Dir { Up }"},
				{Kind: Const, Name: "LIMIT", Names: []string{"LIMIT"}, Text: "export const LIMIT = 3;", Code: "export const LIMIT = 3;"},
				{Kind: Var, Name: "count", Names: []string{"count"}, Text: "let count = 0;", Code: "let count = 0;"},
				{Kind: Type, Name: "Money", Names: []string{"Money"}, Text: "export interface Money { cents: number }", Code: "export interface Money { cents: number }"},
				{Kind: Type, Name: "Id", Names: []string{"Id"}, Text: "export type Id = string;", Code: "export type Id = string;"},
				// A decorator leads its class.
				{Kind: Class, Name: "View", Names: []string{"View"},
					Text: "@Component({ selector: \"x\" })\nexport abstract class View {}", Code: "export abstract class View {}"},
				{Kind: Const, Name: "tpl", Names: []string{"tpl"}, Text: "const tpl = `\nfunction insideTemplate() {}\n`;", Code: "const tpl = `\nfunction insideTemplate() {}\n`;"},
				{Kind: Export, Names: []string{"sum", "Store"}, Text: "module.exports = { sum, Store: Store };", Code: "module.exports = { sum, Store: Store };"},
				{Kind: Export, Names: []string{"other"}, Text: "exports.other = 1;", Code: "exports.other = 1;"},
				{Kind: Other, Text: "main();", Code: "main();"},
			},
		},
		{
			name: "JavaScript ending inside a block comment", lang: "typescript", ok: false,
			src: "export function f() {}\n/* unfinished\n",
			want: []item{
				{Kind: Func, Name: "f", Names: []string{"f"}, Text: "export function f() {}\n/* unfinished", Code: "export function f() {}\n/* unfinished"},
			},
		},
		{
			name: "a language Decls does not read", lang: "rust", ok: false,
			src: "fn main() {}\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ds, ok := Decls(tc.lang, tc.src)
			if ok != tc.ok {
				t.Errorf("Decls ok = %v, want %v", ok, tc.ok)
			}
			if diff := cmp.Diff(tc.want, items(tc.src, ds), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Decls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScans(t *testing.T) {
	for _, l := range []string{"go", "python", "javascript", "typescript"} {
		if !Scans(l) {
			t.Errorf("Scans(%q) = false, want true", l)
		}
	}
	for _, l := range []string{"rust", "bash", Unknown, ""} {
		if Scans(l) {
			t.Errorf("Scans(%q) = true, want false", l)
		}
	}
}

// FuzzDecls: whatever the source, Decls does not panic and every span lies
// inside it, in order, even for source that does not parse.
func FuzzDecls(f *testing.F) {
	f.Add("go", goFile)
	f.Add("go", "package a\n\nfunc Broken( {\n")
	f.Add("go", "func (x) M(\n/* open")
	f.Add("python", pyFile)
	f.Add("javascript", jsFile)
	f.Fuzz(func(t *testing.T, language, src string) {
		ds, _ := Decls(language, src)
		for _, d := range ds {
			if d.Start < 0 || d.Start > d.CodeStart || d.CodeStart > d.End || d.End > len(src) {
				t.Fatalf("%s item %+v has spans outside %d bytes of source", language, d, len(src))
			}
			for _, s := range d.Specs {
				if s.Start < d.CodeStart || s.Start > s.End || s.End > d.End {
					t.Fatalf("%s import spec %+v lies outside its declaration %+v", language, s, d)
				}
			}
		}
	})
}
