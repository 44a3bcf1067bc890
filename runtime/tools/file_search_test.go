package tools

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"flow/bufferfs"
)

// searchFiles is the workspace of the search tests.
func searchFiles() map[string]string {
	var many, exact strings.Builder
	for i := range 250 {
		fmt.Fprintf(&many, "hit %d\n", i)
	}
	for i := range 200 {
		fmt.Fprintf(&exact, "mark %d\n", i)
	}
	return map[string]string{
		"a.go":                "package a\n\nfunc RunContext(ctx context.Context) {}\nfunc other() {}\nfunc WaitContext(x int) {}\n",
		"sub/b.go":            "package sub\n// a.b( literal\n// axb( not literal\nfunc DoContext() {}",
		"sub/c_test.go":       "package sub\nfunc TestContext(t *testing.T) {}\n",
		"lines.txt":           "one\ntwo\nthree\nend",
		"node_modules/m/x.go": "func HiddenContext() {}\n",
		".gitignore":          "ignored.go\n",
		"ignored.go":          "func IgnoredContext() {}\n",
		"bin.go":              "func BinaryContext() {}\x00\n",
		"big.go":              strings.Repeat("func BigContext() {}\n", 262144/20+1),
		"long.txt":            "needle " + strings.Repeat("é", 1000) + "\n",
		"many/many.txt":       many.String(),
		"exact/exact.txt":     exact.String(),
		"crlf.txt":            "first\r\nsecond\r\n",
	}
}

func TestFileSearch(t *testing.T) {
	r := New(newDisk(t, false, searchFiles()), Options{})
	type m = string // "path:line:text"
	tests := []struct {
		name      string
		args      map[string]any
		want      []m
		truncated bool
		hint      string
	}{
		{"regexp", map[string]any{"pattern": `func \w+Context\(`}, []m{
			"a.go:3:func RunContext(ctx context.Context) {}", "a.go:5:func WaitContext(x int) {}",
			"sub/b.go:4:func DoContext() {}", "sub/c_test.go:2:func TestContext(t *testing.T) {}"}, false, ""},
		{"literal", map[string]any{"pattern": "a.b(", "literal": true}, []m{"sub/b.go:2:// a.b( literal"}, false, ""},
		{"same text as regexp", map[string]any{"pattern": `a.b\(`}, []m{"sub/b.go:2:// a.b( literal", "sub/b.go:3:// axb( not literal"}, false, ""},
		{"case-insensitive", map[string]any{"pattern": `(?i)FUNC waitcontext`}, []m{"a.go:5:func WaitContext(x int) {}"}, false, ""},
		{"line anchors", map[string]any{"pattern": `^t`, "path": "lines.txt"}, []m{"lines.txt:2:two", "lines.txt:3:three"}, false, ""},
		{"end anchor on last line", map[string]any{"pattern": `d$`, "path": "lines.txt"}, []m{"lines.txt:4:end"}, false, ""},
		{"empty-matching regexp matches every line once", map[string]any{"pattern": `x*`, "path": "lines.txt"},
			[]m{"lines.txt:1:one", "lines.txt:2:two", "lines.txt:3:three", "lines.txt:4:end"}, false, ""},
		{"no match across lines", map[string]any{"pattern": `one\ntwo`}, []m{}, false, "no matches"},
		{"carriage return dropped", map[string]any{"pattern": `second`}, []m{"crlf.txt:2:second"}, false, ""},
		{"glob by base name", map[string]any{"pattern": `Context\(`, "glob": "*_test.go"}, []m{"sub/c_test.go:2:func TestContext(t *testing.T) {}"}, false, ""},
		{"glob with directory", map[string]any{"pattern": `Context\(`, "glob": "sub/*.go"},
			[]m{"sub/b.go:4:func DoContext() {}", "sub/c_test.go:2:func TestContext(t *testing.T) {}"}, false, ""},
		{"glob with ** prefix", map[string]any{"pattern": `Context\(`, "glob": "**/b.go"}, []m{"sub/b.go:4:func DoContext() {}"}, false, ""},
		{"glob relative to path", map[string]any{"pattern": `Context\(`, "path": "sub", "glob": "c_*"}, []m{"sub/c_test.go:2:func TestContext(t *testing.T) {}"}, false, ""},
		{"path directory", map[string]any{"pattern": `func`, "path": "sub"},
			[]m{"sub/b.go:4:func DoContext() {}", "sub/c_test.go:2:func TestContext(t *testing.T) {}"}, false, ""},
		{"path file", map[string]any{"pattern": `func`, "path": "a.go"},
			[]m{"a.go:3:func RunContext(ctx context.Context) {}", "a.go:4:func other() {}", "a.go:5:func WaitContext(x int) {}"}, false, ""},
		{"nothing searched", map[string]any{"pattern": `x`, "glob": "*.rs"}, []m{}, false, "no text files were searched"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, body := call(t, r, "planner", "file_search", mustJSON(t, tc.args))
			if res.Status != "ok" {
				t.Fatalf("file_search %v = %s", tc.args, res.Content)
			}
			var got []string
			for _, x := range body["matches"].([]any) {
				mm := x.(map[string]any)
				got = append(got, fmt.Sprintf("%s:%v:%s", mm["path"], mm["line"], mm["text"]))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("file_search %v matches:\n%s\nwant:\n%s", tc.args, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if body["truncated"] != tc.truncated {
				t.Errorf("file_search %v truncated = %v, want %v", tc.args, body["truncated"], tc.truncated)
			}
			if hint, _ := body["hint"].(string); !strings.Contains(hint, tc.hint) {
				t.Errorf("file_search %v hint = %q, want containing %q", tc.args, hint, tc.hint)
			}
		})
	}
}

func TestFileSearchLimits(t *testing.T) {
	r := New(newDisk(t, false, searchFiles()), Options{})
	t.Run("match cap", func(t *testing.T) {
		_, body := call(t, r, "planner", "file_search", `{"pattern":"^hit"}`)
		ms := body["matches"].([]any)
		if len(ms) != 200 || body["truncated"] != true || !strings.Contains(body["hint"].(string), "stopped at 200 matches") {
			t.Fatalf("file_search ^hit: %d matches, truncated %v, hint %v", len(ms), body["truncated"], body["hint"])
		}
		last := ms[199].(map[string]any)
		if last["line"] != 200.0 || last["text"] != "hit 199" {
			t.Errorf("last match = %v, want line 200", last)
		}
	})
	t.Run("exactly the cap is not truncated", func(t *testing.T) {
		_, body := call(t, r, "planner", "file_search", `{"pattern":"^mark"}`)
		if n := len(body["matches"].([]any)); n != 200 || body["truncated"] != false {
			t.Fatalf("file_search ^mark: %d matches, truncated %v; want 200, false", n, body["truncated"])
		}
	})
	t.Run("long line cut at 300 characters", func(t *testing.T) {
		_, body := call(t, r, "planner", "file_search", `{"pattern":"needle"}`)
		text := body["matches"].([]any)[0].(map[string]any)["text"].(string)
		if utf8.RuneCountInString(text) != 300 || !utf8.ValidString(text) || !strings.HasPrefix(text, "needle éé") {
			t.Fatalf("text = %d chars, valid %v", utf8.RuneCountInString(text), utf8.ValidString(text))
		}
	})
	t.Run("skipped files", func(t *testing.T) {
		// node_modules, .gitignore'd, binary and >256 KiB files are skipped.
		_, body := call(t, r, "planner", "file_search", `{"pattern":"(Hidden|Ignored|Binary|Big)Context"}`)
		if n := len(body["matches"].([]any)); n != 0 {
			t.Fatalf("file_search found %d matches in skipped files: %v", n, body["matches"])
		}
		// a.go, sub/b.go, sub/c_test.go, lines.txt, .gitignore, long.txt,
		// many.txt, exact.txt, crlf.txt: bin.go is read but binary.
		if body["files_scanned"] != 9.0 {
			t.Errorf("files_scanned = %v, want 9", body["files_scanned"])
		}
	})
	t.Run("time bound", func(t *testing.T) {
		slow := New(newDisk(t, false, searchFiles()), Options{})
		slow.searchTimeout = time.Nanosecond
		_, body := call(t, slow, "planner", "file_search", `{"pattern":"func"}`)
		if body["truncated"] != true || !strings.Contains(body["hint"].(string), "stopped after 1ns") {
			t.Fatalf("file_search with 1ns bound = %v", body)
		}
	})
	t.Run("time bound mid-walk keeps partial results", func(t *testing.T) {
		files := map[string]string{}
		for i := range 10 {
			files[fmt.Sprintf("f%d.txt", i)] = "hit\n"
		}
		slow := New(slowFS{newDisk(t, false, files), 30 * time.Millisecond}, Options{})
		slow.searchTimeout = 50 * time.Millisecond
		_, body := call(t, slow, "planner", "file_search", `{"pattern":"hit"}`)
		scanned := body["files_scanned"].(float64)
		if body["truncated"] != true || scanned >= 10 || float64(len(body["matches"].([]any))) != scanned {
			t.Fatalf("file_search with slow reads = %v", body)
		}
	})
	t.Run("result bound", func(t *testing.T) {
		// 200 matches of 300 quote characters would be ~120000 characters of
		// JSON: the matches are cut to fit.
		line := strings.Repeat(`"`, 400) + "\n"
		q := New(newDisk(t, false, map[string]string{"q.txt": strings.Repeat(line, 300)}), Options{})
		res, body := call(t, q, "planner", "file_search", `{"pattern":"\""}`)
		n := len(body["matches"].([]any))
		if !res.Truncated || body["truncated"] != true || n == 0 || n >= 200 {
			t.Fatalf("file_search quotes: %d matches, Truncated %v", n, res.Truncated)
		}
	})
}

// slowFS delays every Read.
type slowFS struct {
	bufferfs.FS
	delay time.Duration
}

func (s slowFS) Read(ctx context.Context, p string, limit int64) (bufferfs.File, error) {
	time.Sleep(s.delay)
	return s.FS.Read(ctx, p, limit)
}

func TestFileSearchErrors(t *testing.T) {
	r := New(newDisk(t, false, searchFiles()), Options{})
	tests := []struct {
		name    string
		args    string
		wantErr string
	}{
		{"invalid regexp", `{"pattern":"func ("}`, `invalid regular expression "func (": error parsing regexp: missing closing ): ` + "`func (`"},
		{"invalid glob", `{"pattern":"x","glob":"[a"}`, `invalid glob "[a"`},
		{"empty pattern", `{"pattern":""}`, "pattern is empty"},
		{"missing directory", `{"pattern":"x","path":"nope"}`, `directory not found: nope; use file_list with path "."`},
		{"traversal", `{"pattern":"x","path":"../"}`, "parent traversal"},
		{"too large file", `{"pattern":"x","path":"big.go"}`, "file too large: big.go"},
		{"literal must be boolean", `{"pattern":"x","literal":"yes"}`, `argument "literal" must be a boolean, got a string`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, _ := call(t, r, "planner", "file_search", tc.args)
			if res.Status != "error" || !strings.Contains(res.Error, tc.wantErr) {
				t.Fatalf("file_search %s = %s, want error containing %q", tc.args, res.Content, tc.wantErr)
			}
		})
	}
}

func TestGlob(t *testing.T) {
	tests := []struct {
		glob string
		path string
		want bool
	}{
		{"*.go", "a.go", true},
		{"*.go", "x/y/a.go", true},
		{"*.go", "a.txt", false},
		{"**/*.go", "a.go", true},
		{"**/*.go", "x/y/a.go", true},
		{"x/**/a.go", "x/a.go", true},
		{"x/**/a.go", "x/y/z/a.go", true},
		{"x/**/a.go", "w/x/a.go", false},
		{"x/*.go", "x/a.go", true},
		{"x/*.go", "x/y/a.go", false},
		{"**", "x/y", true},
		{"**/**/b", "b", true},
		{"a/**", "a/b/c", true},
		{"a/**", "b/c", false},
	}
	for _, tc := range tests {
		g, err := compileGlob(tc.glob)
		if err != nil {
			t.Fatalf("compileGlob(%q) = %v", tc.glob, err)
		}
		if got := g.match(tc.path); got != tc.want {
			t.Errorf("glob %q match %q = %v, want %v", tc.glob, tc.path, got, tc.want)
		}
	}
}

func TestRequiredLiteral(t *testing.T) {
	tests := []struct{ expr, want string }{
		{`func \w+Context\(`, "Context("},
		{`hello`, "hello"},
		{`(?i)hello`, ""},
		{`a|bc`, ""},
		{`(foo)bar+`, "foo"},
		{`x`, ""},
		{`a\nb`, ""},
		{`\.go$`, ".go"},
	}
	for _, tc := range tests {
		if got := string(requiredLiteral(tc.expr)); got != tc.want {
			t.Errorf("requiredLiteral(%q) = %q, want %q", tc.expr, got, tc.want)
		}
	}
}
