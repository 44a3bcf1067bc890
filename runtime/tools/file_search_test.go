package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"flow/bufferfs"
)

// bigLine is the line of big.go that matches BigContext, past the first
// 256 KiB and the first read buffer.
const bigLine = 20001

// searchFiles is the workspace of the search tests.
func searchFiles() map[string]string {
	var many, exact, big strings.Builder
	for i := range bigLine - 1 {
		fmt.Fprintf(&big, "// filler %05d\n", i)
	}
	big.WriteString("var BigContext = 1\n")
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
		"bin.go":              "var BinaryContext = 1\x00\n",
		"big.go":              big.String(), // over 300 kB
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
	t.Run("skipped, reported and large files", func(t *testing.T) {
		// node_modules and .gitignore'd files are outside the search; the
		// file over 256 KiB is searched; the binary one is named.
		_, body := call(t, r, "planner", "file_search", `{"pattern":"(Hidden|Ignored|Binary|Big)Context"}`)
		ms := body["matches"].([]any)
		if len(ms) != 1 {
			t.Fatalf("file_search = %v, want only big.go's match", body)
		}
		if m := ms[0].(map[string]any); m["path"] != "big.go" || m["line"] != float64(bigLine) || m["text"] != "var BigContext = 1" {
			t.Errorf("match = %v, want big.go:%d", m, bigLine)
		}
		hint, _ := body["hint"].(string)
		if body["truncated"] != true || !strings.Contains(hint, "binary files with a matching line (lines not shown): bin.go") {
			t.Errorf("truncated %v, hint %q: want the binary match reported", body["truncated"], hint)
		}
		// a.go, big.go, sub/b.go, sub/c_test.go, lines.txt, .gitignore,
		// long.txt, many.txt, exact.txt, crlf.txt: bin.go is read but binary.
		if body["files_scanned"] != 10.0 {
			t.Errorf("files_scanned = %v, want 10", body["files_scanned"])
		}
	})
	t.Run("binary file without a match is not reported", func(t *testing.T) {
		_, body := call(t, r, "planner", "file_search", `{"pattern":"WaitContext"}`)
		if body["truncated"] != false || body["hint"] != nil {
			t.Errorf("file_search WaitContext = %v, want no hint", body)
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

// plainFS hides every method of a Disk but those of bufferfs.FS, as the
// editor's FS does: the search reads through Read, which stops at
// bufferfs.MaxFileBytes.
type plainFS struct{ bufferfs.FS }

func TestFileSearchLargeFiles(t *testing.T) {
	files := searchFiles()
	files["wide.txt"] = strings.Repeat("x", 300_000) + " needle\nnext needle\n"
	files["huge.txt"] = strings.Repeat("y", maxLineBytes+1) + "\nneedle after the huge line\n"
	files["wbin.txt"] = "\x00" + strings.Repeat("z", 300_000) + "needle\n"
	files["huger.txt"] = strings.Repeat("y", maxLineBytes+1) + " needle\nneedle after the huge line\n"
	disk := newDisk(t, false, files)
	matches := func(body map[string]any) []string {
		var got []string
		for _, x := range body["matches"].([]any) {
			m := x.(map[string]any)
			got = append(got, fmt.Sprintf("%s:%v", m["path"], m["line"]))
		}
		return got
	}
	t.Run("a file over 256 KiB named by path", func(t *testing.T) {
		_, body := call(t, New(disk, Options{}), "planner", "file_search", `{"pattern":"BigContext","path":"big.go"}`)
		if got := strings.Join(matches(body), " "); got != fmt.Sprintf("big.go:%d", bigLine) || body["truncated"] != false {
			t.Fatalf("file_search in big.go = %v", body)
		}
	})
	for _, tc := range []struct {
		name, pattern, want, hint string
	}{
		// huge.txt's first line has no "needle": it cannot match and is
		// read past. huger.txt's holds one, but is over the limit, so its
		// search stops there and the hint says so.
		{"lines longer than the read buffer", "needle", "huge.txt:2 long.txt:1 wide.txt:1 wide.txt:2",
			"not fully searched: huger.txt (line 1 is longer than 4194304 bytes"},
		// Without a literal every match needs, the long lines are held
		// whole.
		{"lines longer than the read buffer, no literal", "(needle|xyzzy)", "long.txt:1 wide.txt:1 wide.txt:2",
			"not fully searched: huge.txt (line 1 is longer than 4194304 bytes; searched up to it), huger.txt (line 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, body := call(t, New(disk, Options{}), "planner", "file_search", mustJSON(t, map[string]any{"pattern": tc.pattern, "glob": "*.txt"}))
			if hint, _ := body["hint"].(string); !strings.Contains(hint, "binary files with a matching line (lines not shown): wbin.txt") {
				t.Errorf("hint %q does not name wbin.txt", hint)
			}
			if got := strings.Join(matches(body), " "); got != tc.want {
				t.Errorf("matches = %s, want %s", got, tc.want)
			}
			hint, _ := body["hint"].(string)
			if body["truncated"] != true || !strings.Contains(hint, tc.hint) {
				t.Errorf("truncated %v, hint %q; want containing %q", body["truncated"], hint, tc.hint)
			}
		})
	}
	t.Run("an FS without streaming reports what it cannot read", func(t *testing.T) {
		r := New(plainFS{disk}, Options{})
		_, body := call(t, r, "planner", "file_search", `{"pattern":"BigContext"}`)
		hint, _ := body["hint"].(string)
		want := fmt.Sprintf("no matching lines shown; not fully searched: big.go (over %d bytes", bufferfs.MaxFileBytes)
		if len(body["matches"].([]any)) != 0 || body["truncated"] != true || !strings.Contains(hint, want) {
			t.Errorf("file_search = %v; want truncated with a hint containing %q", body, want)
		}
		res, _ := call(t, r, "planner", "file_search", `{"pattern":"x","path":"big.go"}`)
		if res.Status != "error" || !strings.Contains(res.Error, "file too large: big.go") {
			t.Errorf("file_search path big.go = %s, want the too-large error", res.Content)
		}
	})
	t.Run("many matches in a large file", func(t *testing.T) {
		var b strings.Builder
		for i := range 30000 {
			fmt.Fprintf(&b, "row %05d\n", i)
		}
		_, body := call(t, New(newDisk(t, false, map[string]string{"rows.txt": b.String()}), Options{}), "planner",
			"file_search", `{"pattern":"^row 2"}`)
		ms := body["matches"].([]any)
		if len(ms) != 200 || body["truncated"] != true {
			t.Fatalf("%d matches, truncated %v", len(ms), body["truncated"])
		}
		if first, last := ms[0].(map[string]any), ms[199].(map[string]any); first["line"] != 20001.0 || last["line"] != 20200.0 {
			t.Errorf("first %v, last %v; want lines 20001 and 20200", first, last)
		}
	})
}

func TestFileSearchUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every file")
	}
	disk := newDisk(t, false, map[string]string{"a.txt": "needle\n", "locked.txt": "needle\n"})
	if err := os.Chmod(filepath.Join(disk.Root(), "locked.txt"), 0); err != nil {
		t.Fatal(err)
	}
	_, body := call(t, New(disk, Options{}), "planner", "file_search", `{"pattern":"needle"}`)
	hint, _ := body["hint"].(string)
	if len(body["matches"].([]any)) != 1 || body["truncated"] != true || !strings.Contains(hint, "not fully searched: locked.txt (unreadable: ") {
		t.Errorf("file_search = %v; want a.txt's match and locked.txt reported", body)
	}
}
