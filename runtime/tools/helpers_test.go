package tools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"flow/bufferfs"
	"flow/runtime/model"
)

// newDisk writes files into a fresh temporary workspace and returns a real
// Disk rooted there.
func newDisk(t *testing.T, trusted bool, files map[string]string) *bufferfs.Disk {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := bufferfs.NewDisk(root, bufferfs.DiskOptions{Trusted: trusted})
	if err != nil {
		t.Fatalf("NewDisk(%s) = %v", root, err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// call runs one tool call and decodes its content, checking the result
// invariants every call must keep.
func call(t *testing.T, r *Registry, role, name, args string) (Result, map[string]any) {
	t.Helper()
	res := r.Call(t.Context(), role, model.ToolCall{ID: "c1", Name: name, Arguments: args})
	return res, decodeContent(t, res)
}

// decodeContent checks the bounds and shape of a result and decodes it.
func decodeContent(t *testing.T, res Result) map[string]any {
	t.Helper()
	if !fits([]byte(res.Content)) {
		t.Fatalf("result content is %d bytes, over the bounds", len(res.Content))
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(res.Content), &body); err != nil {
		t.Fatalf("result content is not a JSON object: %v\n%s", err, res.Content)
	}
	if body["status"] != res.Status {
		t.Fatalf("content status = %v, Result.Status = %q", body["status"], res.Status)
	}
	if res.Status == "error" && (res.Error == "" || body["error"] != res.Error) {
		t.Fatalf("error result: Error = %q, content error = %v", res.Error, body["error"])
	}
	return body
}

// readDisk returns a file's content from under the Disk's root.
func readDisk(t *testing.T, d *bufferfs.Disk, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(d.Root(), filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// mustJSON encodes v for use as call arguments.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
