package config

import (
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// nested returns "x = " followed by n levels of open, the value 1 and n
// levels of close.
func nested(n int, open, close string) string {
	return "x = " + strings.Repeat(open, n) + "1" + strings.Repeat(close, n) + "\n"
}

// TestCheckNesting: the pre-scan counts {, [, table-header components and
// dotted-key components outside strings and comments, and names the line of
// the first level past the bound.
func TestCheckNesting(t *testing.T) {
	t.Parallel()
	deep := MaxNesting + 1
	tests := []struct {
		name     string
		doc      string
		wantLine int // 0: accepted
	}{
		{"inline tables at the bound", nested(MaxNesting, "{a=", "}"), 0},
		{"inline tables past the bound", nested(deep, "{a=", "}"), 1},
		{"arrays at the bound", nested(MaxNesting, "[", "]"), 0},
		{"arrays past the bound", nested(deep, "[", "]"), 1},
		{"arrays over lines", "a = 1\nx = " + strings.Repeat("[\n", deep) + "1" + strings.Repeat("]", deep) + "\n", 1 + deep},
		{"dotted key past the bound", strings.Repeat("a.", deep) + "a = 1\n", 1},
		{"dotted keys line by line", strings.Repeat(strings.Repeat("a.", MaxNesting-1)+"a = 1\n", 3), 0},
		{"header past the bound", "[checks.t]\ncmd = [\"x\"]\n[" + strings.Repeat("a.", deep) + "a]\n", 3},
		{"array-of-tables header", "[[" + strings.Repeat("a.", deep) + "a]]\n", 1},
		{"header and key add up", "[" + strings.Repeat("a.", 40) + "a]\n" + strings.Repeat("b.", 30) + "b = 1\n", 2},
		{"headers replace each other", strings.Repeat("["+strings.Repeat("a.", 40)+"a]\nk = 1\n", 3), 0},
		{"dotted keys inside inline tables", "x = {" + strings.Repeat("a.", 30) + "a = {" + strings.Repeat("b.", 40) + "b = 1}}\n", 1},
		{"keys of one inline table do not add up", "x = {" + strings.Repeat("a.", 40) + "a = 1, " + strings.Repeat("b.", 40) + "b = 2}\n", 0},
		{"floats and times are not keys", "x = [" + strings.Repeat("1.5, ", 100) + "1979-05-27T07:32:00.999Z]\n", 0},
		{"brackets in basic strings", "x = \"" + strings.Repeat("[{", deep) + "\"\n", 0},
		{"escaped quote in a basic string", "x = \"\\\"" + strings.Repeat("[", deep) + "\"\n", 0},
		{"brackets in literal strings", "x = '" + strings.Repeat("[{", deep) + "\\'\n", 0},
		{"brackets in multi-line basic strings", "x = \"\"\"\n" + strings.Repeat("[{\n", deep) + "\"\"\"\"\"\ny = 1\n", 0},
		{"brackets in multi-line literal strings", "x = '''" + strings.Repeat("[{", deep) + "'''''\n", 0},
		{"brackets in comments", "# " + strings.Repeat("[{", deep) + "\nx = 1 # " + strings.Repeat("[", deep) + "\n", 0},
		{"line after a multi-line string", "x = \"\"\"\na\nb\"\"\"\ny = " + strings.Repeat("[", deep) + "\n", 4},
		{"quoted dotted key parts", strings.Repeat("\"a\".", deep) + "b = 1\n", 1},
		{"unterminated string ends at its line", "x = \"" + strings.Repeat("[", 10) + "\ny = " + strings.Repeat("[", deep) + "\n", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := checkNesting([]byte(tc.doc))
			var ne *nestingError
			switch {
			case tc.wantLine == 0 && err != nil:
				t.Fatalf("checkNesting = %v, want the document accepted", err)
			case tc.wantLine != 0 && !errors.As(err, &ne):
				t.Fatalf("checkNesting = %v, want a nesting error at line %d", err, tc.wantLine)
			case tc.wantLine != 0 && ne.line != tc.wantLine:
				t.Fatalf("checkNesting error at line %d, want line %d (%v)", ne.line, tc.wantLine, err)
			}
		})
	}
}

// TestLoadRefusesDeepNesting: a too deeply nested file is a configuration
// error (exit 2 in the CLI) that names the limit and the line, and 1 MiB of
// hostile nesting of each kind costs little memory: the TOML decoder, whose
// cost grows with the square of the depth, never sees it.
func TestLoadRefusesDeepNesting(t *testing.T) {
	root := tempDir(t)
	const size = maxFileSize - 16
	docs := map[string]string{
		"inline tables": nested(size/4, "{a=", "}")[:size],
		"arrays":        nested(size/2, "[", "]")[:size],
		"dotted keys":   strings.Repeat("a.", size/2) + "a = 1\n",
		"header":        "\n[" + strings.Repeat("a.", size/2) + "a]\n",
	}
	for name, doc := range docs {
		path := write(t, filepath.Join(root, strings.ReplaceAll(name, " ", "_")+".toml"), doc)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := Load(LoadOptions{ConfigFile: path, Cwd: root, Getenv: env(nil)})
		runtime.ReadMemStats(&after)
		var ce *Error
		if !errors.As(err, &ce) {
			t.Fatalf("%s: Load = %v, want a configuration *Error", name, err)
		}
		line := "1"
		if name == "header" {
			line = "2"
		}
		want := "Cannot load configuration " + path + ": nesting deeper than 64 levels (tables, arrays or dotted keys) at line " + line + ";"
		if !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: Load error = %q, want prefix %q", name, err, want)
		}
		// Reading the file takes about 2 MiB (the read buffer grows to
		// the cap); the decoder would take gigabytes.
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
			t.Errorf("%s: Load allocated %d bytes for a %d-byte file, want at most 16 MiB", name, alloc, len(doc))
		}
	}
}

// TestCheckNestingAllocatesNothing: the pre-scan itself allocates nothing,
// whatever the document.
func TestCheckNestingAllocatesNothing(t *testing.T) {
	doc := []byte(nested(MaxNesting, "{a.b=", "}") + "y = \"\"\"\n[[\n\"\"\"\n" + nested(1000, "[", "]"))
	allocs := testing.AllocsPerRun(10, func() {
		if checkNesting(doc) == nil {
			t.Fatal("checkNesting accepted a too deep document")
		}
	})
	// The one allocation is the returned *nestingError.
	if allocs > 1 {
		t.Errorf("checkNesting allocated %v times per run, want at most 1", allocs)
	}
}
