package imports

import (
	"go/parser"
	"go/token"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGo(t *testing.T) {
	tests := []struct {
		name   string
		src    string
		pkg    []string
		want   string // "" when nothing is mended
		added  []string
		remove []string
	}{
		{
			name: "missing fmt joins the group",
			src: `package inventory

import (
	"errors"
)

var ErrBad = errors.New("bad")

func Remove(n int) error {
	return fmt.Errorf("remove %d: %w", n, ErrBad)
}
`,
			want: `package inventory

import (
	"errors"
	"fmt"
)

var ErrBad = errors.New("bad")

func Remove(n int) error {
	return fmt.Errorf("remove %d: %w", n, ErrBad)
}
`,
			added: []string{"fmt"},
		},
		{
			name: "no imports at all",
			src: `package slug // the package

func Lower(s string) string { return strings.ToLower(s) }
`,
			want: `package slug // the package

import "strings"

func Lower(s string) string { return strings.ToLower(s) }
`,
			added: []string{"strings"},
		},
		{
			name: "two missing after a single import",
			src: `package x

import "os"

func F() error {
	if _, err := os.Stat("a"); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no a")
	}
	return nil
}
`,
			want: `package x

import (
	"errors"
	"fmt"
	"os"
)

func F() error {
	if _, err := os.Stat("a"); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no a")
	}
	return nil
}
`,
			added: []string{"errors", "fmt"},
		},
		{
			name: "unused import leaves the group, comments stay",
			src: `package stats

import (
	"math" // for NaN
	// sorting
	"sort"
	"strings"
)

func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	sort.Float64s(xs)
	return xs[len(xs)/2]
}
`,
			want: `package stats

import (
	"math" // for NaN
	// sorting
	"sort"
)

func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	sort.Float64s(xs)
	return xs[len(xs)/2]
}
`,
			remove: []string{"strings"},
		},
		{
			name: "the only import, unused, goes; the missing one comes",
			src: `package x

import "strings"

func F(n int) string { return fmt.Sprint(n) }
`,
			want: `package x

import "fmt"

func F(n int) string { return fmt.Sprint(n) }
`,
			added:  []string{"fmt"},
			remove: []string{"strings"},
		},
		{
			name: "an unused alias goes, a blank import stays",
			src: `package x

import (
	_ "embed"
	str "strings"
)

func F() int { return 1 }
`,
			want: `package x

import (
	_ "embed"
)

func F() int { return 1 }
`,
			remove: []string{"strings"},
		},
		{
			name: "a used alias stays",
			src: `package x

import str "strings"

func F(s string) string { return str.ToUpper(s) }
`,
		},
		{
			name: "a name another file of the package declares",
			src: `package x

func F() string { return errors.Message }
`,
			pkg: []string{"package x\n\nvar errors = struct{ Message string }{}\n", "package other\n\nvar fmt = 1\n"},
		},
		{
			name: "another package's file does not hide a package",
			src: `package x

func F() string { return fmt.Sprint(1) }
`,
			pkg: []string{"package x_test\n\nvar fmt = 1\n", "package x\n\nfunc ( {\n"},
			want: `package x

import "fmt"

func F() string { return fmt.Sprint(1) }
`,
			added: []string{"fmt"},
		},
		{
			name: "a local name is no package",
			src: `package x

func F(url struct{ Host string }) string {
	strings := url.Host
	return strings
}
`,
		},
		{
			name: "an unexported selector is no package's",
			src: `package x

func F() string { return url.path }
`,
		},
		{
			name: "an ambiguous name is not guessed",
			src: `package x

func F() int { return rand.Intn(3) }
`,
		},
		{
			name: "another module's import is never removed",
			src: `package x

import "example.com/lib/v2"

func F() int { return 1 }
`,
		},
		{
			name: "a dot import leaves the file alone",
			src: `package x

import . "strings"

func F() string { return fmt.Sprint(ToUpper("a")) }
`,
		},
		{
			name: "a file that does not parse is left alone",
			src:  "package x\n\nfunc F() { fmt.Println(\n",
		},
		{
			name: "a test package",
			src: `package inventory_test

import (
	"testing"

	"example.com/inventory"
)

func TestRemove(t *testing.T) {
	if err := inventory.Remove(1); !errors.Is(err, inventory.ErrBad) {
		t.Fatal(err)
	}
}
`,
			want: `package inventory_test

import (
	"errors"
	"testing"

	"example.com/inventory"
)

func TestRemove(t *testing.T) {
	if err := inventory.Remove(1); !errors.Is(err, inventory.ErrBad) {
		t.Fatal(err)
	}
}
`,
			added: []string{"errors"},
		},
		{
			name: "a group of another module's imports only",
			src: `package inventory_test

import (
	"example.com/inventory"
)

var err = errors.New("x")
var _ = inventory.Remove
`,
			want: `package inventory_test

import (
	"errors"

	"example.com/inventory"
)

var err = errors.New("x")
var _ = inventory.Remove
`,
			added: []string{"errors"},
		},
		{
			name: "a single import of another module",
			src: `package x

import "example.com/lib" // the lib

var _ = lib.V
var _ = fmt.Sprint()
`,
			want: `package x

import (
	"fmt"

	"example.com/lib" // the lib
)

var _ = lib.V
var _ = fmt.Sprint()
`,
			added: []string{"fmt"},
		},
		{
			name:  "a closing parenthesis on the last import's line",
			src:   "package x\n\nimport (\n\t\"os\")\n\nvar _ = os.Args\nvar _ = fmt.Sprint()\n",
			want:  "package x\n\nimport (\n\t\"fmt\"\n\t\"os\")\n\nvar _ = os.Args\nvar _ = fmt.Sprint()\n",
			added: []string{"fmt"},
		},
		{
			name:  "a file not gofmt-clean keeps its layout",
			src:   "package x\n\nimport (\n\t\"os\"\n)\n\nfunc F()  error { _, err := os.Stat(\"a\"); return fmt.Errorf(\"%w\", err) }\n",
			want:  "package x\n\nimport (\n\t\"os\"\n\t\"fmt\"\n)\n\nfunc F()  error { _, err := os.Stat(\"a\"); return fmt.Errorf(\"%w\", err) }\n",
			added: []string{"fmt"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fix, ok := Go(tc.src, tc.pkg)
			if tc.want == "" {
				if ok {
					t.Fatalf("Go mended a file it should leave alone:\n%s", fix.Text)
				}
				return
			}
			if !ok {
				t.Fatal("Go mended nothing")
			}
			if d := cmp.Diff(tc.want, fix.Text); d != "" {
				t.Errorf("text (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.added, fix.Added); d != "" {
				t.Errorf("added (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.remove, fix.Removed); d != "" {
				t.Errorf("removed (-want +got):\n%s", d)
			}
			if again, ok := Go(fix.Text, tc.pkg); ok {
				t.Errorf("a second pass mended again:\n%s", again.Text)
			}
		})
	}
}

// TestStdByName holds the table to the toolchain's standard library: each
// path is a standard package of that name, and no other standard package
// has the name.
func TestStdByName(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{.Name}}", "std").Output()
	if err != nil {
		t.Skipf("go list std: %v", err)
	}
	byName := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, name, _ := strings.Cut(line, " ")
		if strings.Contains(path, "internal") || strings.HasPrefix(path, "vendor/") {
			continue
		}
		byName[name] = append(byName[name], path)
	}
	for name, path := range stdByName {
		if got := byName[name]; len(got) != 1 || got[0] != path {
			t.Errorf("%s: the standard packages of that name are %v, the table says %s", name, got, path)
		}
	}
}

func FuzzGo(f *testing.F) {
	f.Add("package x\n\nimport \"strings\"\n\nfunc F() { fmt.Println(1) }\n", "package x\n")
	f.Add("package x\n\nimport (\n\t\"os\" // c\n\t\"sort\"\n)\n\nfunc F() { os.Exit(errors.New(\"\")) }\n", "package x\nvar sort = 1\n")
	f.Add("package x\nimport (\"os\"; \"io\")\nfunc F() { io.EOF }\n", "")
	f.Fuzz(func(t *testing.T, src, other string) {
		fix, ok := Go(src, []string{other})
		if !ok {
			return
		}
		if _, err := parser.ParseFile(token.NewFileSet(), "", fix.Text, 0); err != nil {
			t.Fatalf("the mended file does not parse: %v\n%s", err, fix.Text)
		}
		if len(fix.Added)+len(fix.Removed) == 0 {
			t.Fatalf("a change with nothing added or removed:\n%s", fix.Text)
		}
	})
}
