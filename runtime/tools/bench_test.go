package tools

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"flow/bufferfs"
	"flow/runtime/model"
)

// benchPattern has fewer than 200 matches in GOROOT/src, so both searches
// scan the whole tree.
const benchPattern = `func \w+Context\(`

// gorootSrc returns $GOROOT/src, skipping the benchmark when it is absent.
func gorootSrc(b *testing.B) string {
	dir := filepath.Join(runtime.GOROOT(), "src")
	if runtime.GOROOT() == "" {
		b.Skip("GOROOT unknown")
	}
	return dir
}

// BenchmarkSearchGoroot runs file_search over $GOROOT/src through a
// read-only Disk. Compare its ns/op with BenchmarkRipgrepGoroot.
func BenchmarkSearchGoroot(b *testing.B) {
	d, err := bufferfs.NewDisk(gorootSrc(b), bufferfs.DiskOptions{})
	if err != nil {
		b.Skipf("NewDisk(GOROOT/src) = %v", err)
	}
	defer d.Close()
	r := New(d, Options{})
	args := mustJSONB(b, map[string]any{"pattern": benchPattern})
	var body struct {
		Matches      []searchMatch `json:"matches"`
		Truncated    bool          `json:"truncated"`
		FilesScanned int           `json:"files_scanned"`
	}
	for b.Loop() {
		res := r.Call(b.Context(), "planner", model.ToolCall{Name: FileSearch, Arguments: args})
		if res.Status != "ok" {
			b.Fatalf("file_search = %s", res.Content)
		}
		if err := json.Unmarshal([]byte(res.Content), &body); err != nil {
			b.Fatal(err)
		}
	}
	if body.Truncated {
		b.Logf("search was truncated (time bound?): the numbers are not comparable")
	}
	b.ReportMetric(float64(len(body.Matches)), "matches")
	b.ReportMetric(float64(body.FilesScanned), "files")
}

// BenchmarkRipgrepGoroot runs `rg -c` with the same pattern over the same
// tree, for comparison. It skips when rg is not on PATH.
func BenchmarkRipgrepGoroot(b *testing.B) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		b.Skip("rg not on PATH")
	}
	dir := gorootSrc(b)
	matches := 0
	for b.Loop() {
		out, err := exec.CommandContext(b.Context(), rg, "-c", benchPattern, dir).Output()
		if err != nil {
			b.Fatalf("rg: %v", err)
		}
		matches = 0
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			line := sc.Text()
			n, err := strconv.Atoi(line[strings.LastIndexByte(line, ':')+1:])
			if err != nil {
				b.Fatalf("rg output line %q", line)
			}
			matches += n
		}
	}
	b.ReportMetric(float64(matches), "matches")
}

func mustJSONB(b *testing.B, v any) string {
	out, err := json.Marshal(v)
	if err != nil {
		b.Fatal(err)
	}
	return string(out)
}
