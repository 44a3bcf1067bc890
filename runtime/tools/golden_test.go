package tools

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestSchemasGolden snapshots every tool schema and description as the
// model sees them; run `go test ./runtime/tools -run Golden -update` after
// an intended change and review the diff.
func TestSchemasGolden(t *testing.T) {
	r := New(newDisk(t, true, nil), Options{Trusted: true, Checks: &fakeChecks{}})
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r.Schemas("coder")); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "TestSchemasGolden", "coder.golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("Schemas(coder) differ from %s; run with -update and review the diff:\n%s", golden, buf.Bytes())
	}
}
