package tools

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func hexSum(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestFileRead(t *testing.T) {
	five := "one\ntwo\nthree\nfour\nfive\n"
	d := newDisk(t, false, map[string]string{
		"five.txt":    five,
		"noeol.txt":   "a\nb",
		"empty.txt":   "",
		"bad.txt":     "ok \xff\xfe end\n",
		"dir/x.go":    "package x\n",
		"big.bin":     strings.Repeat("x", 262145),
		"exact.txt":   strings.Repeat("y", 262144),
		"unicode.txt": "héllo → wörld\n",
		"html.txt":    "<a href=\"x\">&amp;</a>\n",
	})
	r := New(d, Options{})
	tests := []struct {
		name    string
		args    string
		want    map[string]any // expected fields (numbers as float64)
		wantErr string
	}{
		{"whole file", `{"path":"five.txt"}`, map[string]any{
			"path": "five.txt", "content": five, "bytes": 24.0, "total_lines": 5.0,
			"sha256": hexSum(five), "start_line": 1.0, "end_line": 5.0}, ""},
		{"window", `{"path":"five.txt","start_line":2,"end_line":3}`, map[string]any{
			"content": "two\nthree\n", "start_line": 2.0, "end_line": 3.0, "total_lines": 5.0, "bytes": 24.0}, ""},
		{"start only", `{"path":"five.txt","start_line":4}`, map[string]any{"content": "four\nfive\n", "end_line": 5.0}, ""},
		{"end only", `{"path":"five.txt","end_line":1}`, map[string]any{"content": "one\n", "start_line": 1.0, "end_line": 1.0}, ""},
		{"end past EOF clamps", `{"path":"five.txt","start_line":5,"end_line":99}`, map[string]any{"content": "five\n", "end_line": 5.0}, ""},
		{"single line", `{"path":"five.txt","start_line":3,"end_line":3}`, map[string]any{"content": "three\n"}, ""},
		{"no final newline", `{"path":"noeol.txt","start_line":2}`, map[string]any{"content": "b", "total_lines": 2.0}, ""},
		{"empty file", `{"path":"empty.txt"}`, map[string]any{"content": "", "total_lines": 0.0, "start_line": 0.0, "end_line": 0.0, "bytes": 0.0}, ""},
		{"invalid UTF-8 replaced", `{"path":"bad.txt"}`, map[string]any{"content": "ok \uFFFD end\n", "bytes": 10.0}, ""},
		{"unicode kept", `{"path":"unicode.txt"}`, map[string]any{"content": "héllo → wörld\n"}, ""},
		{"no HTML escaping", `{"path":"html.txt"}`, map[string]any{"content": "<a href=\"x\">&amp;</a>\n"}, ""},
		{"cleaned path", `{"path":"./dir//x.go"}`, map[string]any{"path": "dir/x.go", "content": "package x\n"}, ""},
		{"exactly 256 KiB reads", `{"path":"exact.txt","end_line":1}`, map[string]any{"bytes": 262144.0, "truncated": true}, ""},
		{"start after end", `{"path":"five.txt","start_line":4,"end_line":2}`, nil, "start_line (4) is after end_line (2)"},
		{"start zero", `{"path":"five.txt","start_line":0}`, nil, "start_line must be 1 or more, got 0"},
		{"end negative", `{"path":"five.txt","end_line":-1}`, nil, "end_line must be 1 or more, got -1"},
		{"start past EOF", `{"path":"five.txt","start_line":6}`, nil, "start_line 6 is past the end of five.txt, which has 5 lines"},
		{"missing file", `{"path":"src/x.go"}`, nil, "file not found: src/x.go; use file_list to see existing files"},
		{"directory", `{"path":"dir"}`, nil, "only singly-linked regular files can be read"},
		{"too large", `{"path":"big.bin"}`, nil, "file too large: big.bin is over 262144 bytes (256 KiB)"},
		{"traversal", `{"path":"../etc/passwd"}`, nil, "parent traversal and .git access are not allowed"},
		{"root", `{"path":"."}`, nil, "expected a file path, not workspace root"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, body := call(t, r, "reviewer", "file_read", tc.args)
			if tc.wantErr != "" {
				if res.Status != "error" || !strings.Contains(res.Error, tc.wantErr) {
					t.Fatalf("file_read %s = %s, want error containing %q", tc.args, res.Content, tc.wantErr)
				}
				return
			}
			if res.Status != "ok" {
				t.Fatalf("file_read %s = %s, want ok", tc.args, res.Content)
			}
			for k, want := range tc.want {
				if body[k] != want {
					t.Errorf("file_read %s: %s = %#v, want %#v", tc.args, k, body[k], want)
				}
			}
			if strings.Contains(res.Content, `\u003c`) || strings.Contains(res.Content, `\u0026`) {
				t.Errorf("file_read %s: content is HTML-escaped: %s", tc.args, res.Content)
			}
			for _, k := range []string{"path", "content", "bytes", "total_lines", "sha256", "start_line", "end_line"} {
				if _, ok := body[k]; !ok {
					t.Errorf("file_read %s: no %q in %s", tc.args, k, res.Content)
				}
			}
		})
	}
}

func TestFileReadSymlinkRefused(t *testing.T) {
	d := newDisk(t, false, map[string]string{"real.txt": "x"})
	if err := os.Symlink("real.txt", filepath.Join(d.Root(), "link.txt")); err != nil {
		t.Fatal(err)
	}
	res, _ := call(t, New(d, Options{}), "planner", "file_read", `{"path":"link.txt"}`)
	if res.Status != "error" || !strings.Contains(res.Error, "symlinks are not allowed") {
		t.Fatalf("file_read of a symlink = %s, want a symlink error", res.Content)
	}
}
