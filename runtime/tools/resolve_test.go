package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMissingPathResolves: file_read and file_edit of a path that does not
// exist use the one file it can only mean (a made-up leading folder
// dropped, a bare name unique in the workspace, or the one file of the
// language that defines the function the name is made of) and say so; anything
// ambiguous, and file_write, keep today's behaviour.
func TestMissingPathResolves(t *testing.T) {
	d := newDisk(t, true, map[string]string{
		"inventory.go":     "package inventory // old\n",
		"pkg/deep/util.go": "package deep\n",
		"a/dup.go":         "package a\n",
		"b/dup.go":         "package b\n",
		"strings.js":       "export function camelCase(s) {\n  return s;\n}\n",
		"x.js":             "export function twice(s) {}\n",
		"y.js":             "export function twice(s) {}\n",
	})
	r := New(d, Options{Trusted: true})
	for _, tc := range []struct {
		name, tool, args string
		wantPath         string // "" wants an error
		wantErr          string
	}{
		{"leading folder dropped (read)", "file_read", `{"path":"src/inventory.go"}`, "inventory.go", ""},
		{"leading folders dropped (read)", "file_read", `{"path":"x/y/pkg/deep/util.go"}`, "pkg/deep/util.go", ""},
		{"a suffix that is not a file", "file_read", `{"path":"x/deep/util.go"}`, "", "file not found: x/deep/util.go"},
		{"bare unique name (read)", "file_read", `{"path":"util.go"}`, "pkg/deep/util.go", ""},
		{"bare name in two folders", "file_read", `{"path":"dup.go"}`, "", "file not found: dup.go"},
		{"leading folder dropped (edit)", "file_edit", `{"path":"src/inventory.go","old_string":"old","new_string":"new"}`, "inventory.go", ""},
		{"other folder is not guessed", "file_read", `{"path":"src/util.go"}`, "", "file not found: src/util.go"},
		{"named after the one function (read)", "file_read", `{"path":"src/camelCase.js"}`, "strings.js", ""},
		{"named after the one function (edit)", "file_edit", `{"path":"camelCase.js","old_string":"return s;","new_string":"return s.trim();"}`, "strings.js", ""},
		{"a function defined twice", "file_read", `{"path":"twice.js"}`, "", "file not found: twice.js"},
		{"a function of another language", "file_read", `{"path":"camelCase.py"}`, "", "file not found: camelCase.py"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, body := call(t, r, "coder", tc.tool, tc.args)
			if tc.wantPath == "" {
				if res.Status != "error" || !strings.Contains(res.Error, tc.wantErr) {
					t.Fatalf("%s %s = %s, want error %q", tc.tool, tc.args, res.Content, tc.wantErr)
				}
				return
			}
			if res.Status != "ok" || body["path"] != tc.wantPath || !strings.Contains(body["note"].(string), "used "+tc.wantPath) {
				t.Fatalf("%s %s = %s, want ok on %s with a note", tc.tool, tc.args, res.Content, tc.wantPath)
			}
		})
	}
	if _, body := call(t, r, "coder", "file_read", `{"path":"src/camelCase.js"}`); body["note"] != "src/camelCase.js does not exist; used strings.js, the only file that defines camelCase. Use the path strings.js from now on." {
		t.Errorf("note = %q, want the defining file named", body["note"])
	}
	if got, _ := os.ReadFile(filepath.Join(d.Root(), "strings.js")); !strings.Contains(string(got), "return s.trim();") {
		t.Errorf("strings.js = %q, want the edit applied to it", got)
	}
	if got, _ := os.ReadFile(filepath.Join(d.Root(), "inventory.go")); string(got) != "package inventory // new\n" {
		t.Errorf("inventory.go = %q, want the edit applied to it", got)
	}
	if _, err := os.Stat(filepath.Join(d.Root(), "src")); err == nil {
		t.Errorf("a src folder was created")
	}
	res, _ := call(t, r, "coder", "file_write", `{"path":"src/inventory.go","content":"package src\n"}`)
	if res.Status != "ok" || res.Changed != "src/inventory.go" {
		t.Errorf("file_write src/inventory.go = %s, want it created where asked", res.Content)
	}
}
