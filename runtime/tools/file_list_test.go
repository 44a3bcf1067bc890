package tools

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestFileList(t *testing.T) {
	d := newDisk(t, false, map[string]string{
		"a.go": "", "src/b.go": "", "src/c/d.go": "", "node_modules/x.js": "",
		".gitignore": "dist/\n", "dist/out.js": "", ".env": "",
	})
	r := New(d, Options{})
	tests := []struct {
		name    string
		args    string
		want    []string
		wantErr string
	}{
		{"default root", `{}`, []string{".env", ".gitignore", "a.go", "src/b.go", "src/c/d.go"}, ""},
		{"empty arguments", ``, []string{".env", ".gitignore", "a.go", "src/b.go", "src/c/d.go"}, ""},
		{"subdirectory", `{"path":"src"}`, []string{"src/b.go", "src/c/d.go"}, ""},
		{"missing", `{"path":"lib"}`, nil, `directory not found: lib; use file_list with path "."`},
		{"file", `{"path":"a.go"}`, nil, "directory not found"},
		{"outside", `{"path":".."}`, nil, "parent traversal"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, body := call(t, r, "planner", "file_list", tc.args)
			if tc.wantErr != "" {
				if res.Status != "error" || !strings.Contains(res.Error, tc.wantErr) {
					t.Fatalf("file_list %s = %s, want error containing %q", tc.args, res.Content, tc.wantErr)
				}
				return
			}
			var got []string
			for _, f := range body["files"].([]any) {
				got = append(got, f.(string))
			}
			if !slices.Equal(got, tc.want) || body["truncated"] != false || res.Status != "ok" {
				t.Fatalf("file_list %s = %s, want files %v", tc.args, res.Content, tc.want)
			}
		})
	}
}

func TestFileListTruncated(t *testing.T) {
	files := map[string]string{}
	for i := range 501 {
		files[fmt.Sprintf("f%03d.txt", i)] = ""
	}
	r := New(newDisk(t, false, files), Options{})
	_, body := call(t, r, "planner", "file_list", `{}`)
	if n := len(body["files"].([]any)); n != 500 || body["truncated"] != true || !strings.Contains(body["hint"].(string), "list a subdirectory") {
		t.Fatalf("file_list of 501 files: %d files, truncated %v, hint %v", n, body["truncated"], body["hint"])
	}
}

func TestFileListResultBound(t *testing.T) {
	// 500 long names exceed the result limit: the list is cut to fit.
	files := map[string]string{}
	for i := range 500 {
		files[fmt.Sprintf("%s/%03d.txt", strings.Repeat("d", 100), i)] = ""
	}
	r := New(newDisk(t, false, files), Options{})
	res, body := call(t, r, "planner", "file_list", `{}`)
	n := len(body["files"].([]any))
	if !res.Truncated || body["truncated"] != true || n == 0 || n >= 500 {
		t.Fatalf("file_list of long names: %d files, Truncated %v", n, res.Truncated)
	}
}
