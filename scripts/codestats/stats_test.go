package main

import (
	"bytes"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCyclomatic(t *testing.T) {
	cases := []struct {
		name, body string
		want       int
	}{
		{"straight", "x := 1; _ = x", 1},
		{"if and else", "if a { } else if b { }", 3},
		{"loops", "for i := 0; i < 3; i++ {}; for range xs {}", 3},
		{"switch without default", "switch x { case 1: case 2, 3: }", 3},
		{"switch with default", "switch x { case 1: default: }", 2},
		{"select", "select { case <-c: case d <- 1: default: }", 3},
		{"short circuit", "_ = a && b || c", 3},
		{"closure counted apart", "f := func() { if a {} }; _ = f", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := "package p\nfunc f() {\n" + c.body + "\n}\n"
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "p.go", src, 0)
			if err != nil {
				t.Fatal(err)
			}
			funcs := funcsOf(fset, f)
			if len(funcs) != 1 || funcs[0].Cyclo != c.want {
				t.Errorf("cyclomatic(%q) = %+v, want %d", c.body, funcs, c.want)
			}
		})
	}
}

func TestFuncName(t *testing.T) {
	src := "package p\ntype T[X any] struct{}\nfunc (t *T[X]) M() {}\nfunc (T[X]) N() {}\nfunc F() {}\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, fn := range funcsOf(fset, f) {
		got = append(got, fn.Name)
	}
	if want := "T.M T.N F"; strings.Join(got, " ") != want {
		t.Errorf("names = %v, want %s", got, want)
	}
}

// TestFiles builds a package of three files where a and b use each other
// and c uses a: two edges lie on the cycle, one does not.
func TestFiles(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module p\n\ngo 1.22\n",
		"a.go":   "package p\n\nfunc A() int { return B() }\n",
		"b.go":   "package p\n\nfunc B() int { return 1 }\n\nfunc B2() int { return A() }\n",
		"c.go":   "package p\n\nfunc C() int { return A() }\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// a.go uses B (b.go); b.go's B2 uses A (a.go); c.go uses A.
	var out bytes.Buffer
	if err := printFiles(&out, dir); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"a.go → b.go*(1)",
		"b.go → a.go*(1)",
		"c.go → a.go(1)",
		"3 files, 3 edges between files; 2 edges (*) lie on a cycle, in 1 groups",
		"cycle group: a.go b.go",
		"1 edges run back up in the best layering",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("files output lacks %q:\n%s", want, got)
		}
	}
}
