package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"flow/bufferfs"
)

func TestFileEdit(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		args    map[string]any
		want    string // file content afterwards
		repl    float64
		wantErr string
	}{
		{"single", "a := 1\nb := 2\n", map[string]any{"old_string": "b := 2", "new_string": "b := 3"}, "a := 1\nb := 3\n", 1, ""},
		{"multi-line", "x\ny\nz\n", map[string]any{"old_string": "x\ny\n", "new_string": ""}, "z\n", 1, ""},
		{"replace_all", "v v v\n", map[string]any{"old_string": "v", "new_string": "w", "replace_all": true}, "w w w\n", 3, ""},
		{"replace_all single", "v\n", map[string]any{"old_string": "v", "new_string": "w", "replace_all": true}, "w\n", 1, ""},
		{"keeps invalid UTF-8 elsewhere", "\xff old \xfe", map[string]any{"old_string": "old", "new_string": "new"}, "\xff new \xfe", 1, ""},
		{"absent", "hello\n", map[string]any{"old_string": "bye", "new_string": "x"}, "hello\n", 0,
			"old_string was not found in f.txt; the file differs from what you expect: call file_read on it"},
		{"absent with whitespace hint", "\tfret x\n", map[string]any{"old_string": "    ret", "new_string": "x"}, "\tfret x\n", 0,
			"different leading or trailing whitespace"},
		{"twice", "v v\n", map[string]any{"old_string": "v", "new_string": "w"}, "v v\n", 0,
			"old_string occurs 2 times in f.txt; add surrounding lines to old_string so that it matches exactly once, or set replace_all to true"},
		{"twice, overlapping", "x\nx\nx\n", map[string]any{"old_string": "x\nx", "new_string": "y"}, "x\nx\nx\n", 0,
			"old_string occurs 2 times in f.txt"},
		{"empty old", "v\n", map[string]any{"old_string": "", "new_string": "w"}, "v\n", 0, "old_string is empty"},
		{"identical", "v\n", map[string]any{"old_string": "v", "new_string": "v"}, "v\n", 0, "identical"},
		{"too large afterwards", strings.Repeat("x", 1000), map[string]any{"old_string": "x", "new_string": strings.Repeat("y", 300), "replace_all": true},
			strings.Repeat("x", 1000), 0, "would become 300000 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := newDisk(t, true, map[string]string{"f.txt": tc.file})
			r := New(d, Options{Trusted: true})
			args := map[string]any{"path": "f.txt"}
			for k, v := range tc.args {
				args[k] = v
			}
			res, body := call(t, r, "coder", "file_edit", mustJSON(t, args))
			if got := readDisk(t, d, "f.txt"); got != tc.want {
				t.Errorf("file after edit = %q, want %q", got, tc.want)
			}
			if tc.wantErr != "" {
				if res.Status != "error" || !strings.Contains(res.Error, tc.wantErr) || res.Changed != "" {
					t.Fatalf("file_edit = %s (changed %q), want error containing %q", res.Content, res.Changed, tc.wantErr)
				}
				return
			}
			if res.Status != "ok" || res.Changed != "f.txt" {
				t.Fatalf("file_edit = %s, changed %q", res.Content, res.Changed)
			}
			if body["replacements"] != tc.repl || body["bytes"] != float64(len(tc.want)) ||
				body["sha256"] != hexSum(tc.want) || body["path"] != "f.txt" {
				t.Errorf("file_edit result = %s", res.Content)
			}
		})
	}
}

func TestFileEditMissing(t *testing.T) {
	r := New(newDisk(t, true, nil), Options{Trusted: true})
	res, _ := call(t, r, "coder", "file_edit", `{"path":"src/x.go","old_string":"a","new_string":"b"}`)
	if !strings.Contains(res.Error, "file not found: src/x.go; use file_list to see existing files, or file_write to create a new file") {
		t.Fatalf("file_edit of a missing file = %s", res.Content)
	}
}

func TestFileWrite(t *testing.T) {
	d := newDisk(t, true, map[string]string{"old.txt": "old\n"})
	if err := os.Chmod(filepath.Join(d.Root(), "old.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := New(d, Options{Trusted: true})
	tests := []struct {
		name    string
		path    string
		content string
		changed string
		wantErr string
	}{
		{"new file in new directory", "a/b/new.go", "package b\n", "a/b/new.go", ""},
		{"overwrite", "old.txt", "new\n", "old.txt", ""},
		{"empty content", "empty.txt", "", "empty.txt", ""},
		{"cleaned path", "./c//d.txt", "x", "c/d.txt", ""},
		{"too large", "big.txt", strings.Repeat("x", 262145), "", "content is 262145 bytes, over the 262144-byte (256 KiB) limit"},
		{"protected", "config.toml", "x", "", "operator configuration cannot be modified by file tools"},
		{"git dir", ".git/config", "x", "", "parent traversal and .git access are not allowed"},
		{"absolute", "/etc/x", "x", "", "absolute and Windows-style paths are not allowed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, body := call(t, r, "coder", "file_write", mustJSON(t, map[string]any{"path": tc.path, "content": tc.content}))
			if tc.wantErr != "" {
				if res.Status != "error" || !strings.Contains(res.Error, tc.wantErr) || res.Changed != "" {
					t.Fatalf("file_write %s = %s, want error containing %q", tc.path, res.Content, tc.wantErr)
				}
				return
			}
			if res.Status != "ok" || res.Changed != tc.changed {
				t.Fatalf("file_write %s = %s, changed %q; want ok, %q", tc.path, res.Content, res.Changed, tc.changed)
			}
			if got := readDisk(t, d, tc.changed); got != tc.content {
				t.Errorf("file %s = %q, want %q", tc.changed, got, tc.content)
			}
			if body["bytes"] != float64(len(tc.content)) || body["sha256"] != hexSum(tc.content) || body["path"] != tc.changed {
				t.Errorf("file_write result = %s", res.Content)
			}
		})
	}
	st, err := os.Stat(filepath.Join(d.Root(), "old.txt"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("old.txt mode after overwrite = %v, %v; want 0600 kept", st.Mode(), err)
	}
}

func TestWriteReadOnlyFS(t *testing.T) {
	// A registry wrongly marked trusted over an untrusted Disk still cannot
	// write: the Disk refuses, and the model is told why.
	d := newDisk(t, false, nil)
	r := New(d, Options{Trusted: true})
	res, _ := call(t, r, "coder", "file_write", `{"path":"x.txt","content":"x"}`)
	if !strings.Contains(res.Error, "workspace is read-only; pass --trusted to allow edits") {
		t.Fatalf("file_write on read-only Disk = %s", res.Content)
	}
}

// hookCall records one BeforeWrite call.
type hookCall struct {
	path   string
	exists bool
	old    string
	data   string
}

func TestBeforeWrite(t *testing.T) {
	tests := []struct {
		name    string
		tool    string
		args    string
		hookErr error
		want    hookCall
		file    string // content of f.txt afterwards ("" = absent)
	}{
		{"edit gets old content", "file_edit", `{"path":"f.txt","old_string":"old","new_string":"new"}`, nil,
			hookCall{"f.txt", true, "old\n", "new\n"}, "new\n"},
		{"write over existing", "file_write", `{"path":"f.txt","content":"w\n"}`, nil,
			hookCall{"f.txt", true, "old\n", "w\n"}, "w\n"},
		{"write new file", "file_write", `{"path":"./new//g.txt","content":"g\n"}`, nil,
			hookCall{"new/g.txt", false, "", "g\n"}, "old\n"},
		{"hook aborts edit", "file_edit", `{"path":"f.txt","old_string":"old","new_string":"new"}`, errors.New("journal is full"),
			hookCall{"f.txt", true, "old\n", "new\n"}, "old\n"},
		{"hook aborts write", "file_write", `{"path":"f.txt","content":"w\n"}`, errors.New("journal is full"),
			hookCall{"f.txt", true, "old\n", "w\n"}, "old\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := newDisk(t, true, map[string]string{"f.txt": "old\n"})
			var calls []hookCall
			hook := func(_ context.Context, p string, old bufferfs.File, data []byte) error {
				calls = append(calls, hookCall{p, old.Exists, string(old.Data), string(data)})
				return tc.hookErr
			}
			r := New(d, Options{Trusted: true, BeforeWrite: hook})
			res, _ := call(t, r, "coder", tc.tool, tc.args)
			if len(calls) != 1 || calls[0] != tc.want {
				t.Fatalf("BeforeWrite calls = %+v, want [%+v]", calls, tc.want)
			}
			if got := readDisk(t, d, "f.txt"); got != tc.file {
				t.Errorf("f.txt = %q, want %q", got, tc.file)
			}
			if tc.hookErr != nil {
				if res.Status != "error" || !strings.Contains(res.Error, "journal is full") || res.Changed != "" {
					t.Fatalf("%s with failing hook = %s", tc.tool, res.Content)
				}
				if _, err := os.Stat(filepath.Join(d.Root(), "new")); err == nil {
					t.Errorf("new/g.txt written despite the hook's error")
				}
			} else if res.Status != "ok" || res.Changed != tc.want.path {
				t.Fatalf("%s = %s, changed %q", tc.tool, res.Content, res.Changed)
			}
		})
	}
}
