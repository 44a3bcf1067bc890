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
	"syscall"
	"testing"
	"time"

	"flow/bufferfs"
	"flow/runtime/model"
)

// benchPattern has fewer than 200 matches in GOROOT/src, so both searches
// scan the whole tree.
const benchPattern = `func \w+Context\(`

// benchLiteral is searched with "literal": true (rg -F); it too has fewer
// than 200 matches in GOROOT/src.
const benchLiteral = `ctx.Err() != nil`

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

// BenchmarkSearchGorootVsRipgrep runs file_search and `rg -c` over
// $GOROOT/src in turns, the same pattern, so both see the same load on a
// shared machine: flow-ms and rg-ms are the mean wall times of each,
// flow/rg their ratio, flow-cpu/rg-cpu the ratio of the CPU time (user and
// system) each used, which a loaded machine disturbs less, and flow-B the
// bytes file_search allocates per search. The rg side is left out when rg
// is not on PATH.
func BenchmarkSearchGorootVsRipgrep(b *testing.B) {
	for _, bc := range []struct {
		name    string
		pattern string
		literal bool
	}{{"regexp", benchPattern, false}, {"literal", benchLiteral, true}} {
		b.Run(bc.name, func(b *testing.B) {
			dir := gorootSrc(b)
			d, err := bufferfs.NewDisk(dir, bufferfs.DiskOptions{})
			if err != nil {
				b.Skipf("NewDisk(GOROOT/src) = %v", err)
			}
			defer d.Close()
			r := New(d, Options{})
			args := mustJSONB(b, map[string]any{"pattern": bc.pattern, "literal": bc.literal})
			rgArgs := []string{"-c", bc.pattern, dir}
			if bc.literal {
				rgArgs = []string{"-c", "-F", bc.pattern, dir}
			}
			rg, rgErr := exec.LookPath("rg")
			var flowTime, rgTime, flowCPU, rgCPU time.Duration
			var flowBytes uint64
			var flowMatches, rgMatches int
			var ms runtime.MemStats
			for b.Loop() {
				runtime.ReadMemStats(&ms)
				before := ms.TotalAlloc
				cpu := processCPU(b)
				start := time.Now()
				res := r.Call(b.Context(), "planner", model.ToolCall{Name: FileSearch, Arguments: args})
				flowTime += time.Since(start)
				flowCPU += processCPU(b) - cpu
				runtime.ReadMemStats(&ms)
				flowBytes += ms.TotalAlloc - before
				flowMatches = searchMatches(b, res)
				if rgErr == nil {
					start = time.Now()
					cmd := exec.CommandContext(b.Context(), rg, rgArgs...)
					out, err := cmd.Output()
					rgTime += time.Since(start)
					if err != nil {
						b.Fatalf("rg: %v", err)
					}
					rgCPU += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
					rgMatches = countRipgrep(b, out)
				}
			}
			n := float64(b.N)
			b.ReportMetric(flowTime.Seconds()*1000/n, "flow-ms")
			b.ReportMetric(float64(flowBytes)/n, "flow-B")
			b.ReportMetric(float64(flowMatches), "matches")
			if rgErr == nil {
				b.ReportMetric(rgTime.Seconds()*1000/n, "rg-ms")
				b.ReportMetric(float64(flowTime)/float64(rgTime), "flow/rg")
				b.ReportMetric(float64(flowCPU)/float64(rgCPU), "flow-cpu/rg-cpu")
				b.ReportMetric(float64(rgMatches), "rg-matches")
			}
		})
	}
}

// processCPU returns the CPU time this process has used so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// searchMatches checks a file_search result and returns its match count.
func searchMatches(b *testing.B, res Result) int {
	var body struct {
		Matches   []searchMatch `json:"matches"`
		Truncated bool          `json:"truncated"`
		Hint      string        `json:"hint"`
	}
	if res.Status != "ok" {
		b.Fatalf("file_search = %s", res.Content)
	}
	if err := json.Unmarshal([]byte(res.Content), &body); err != nil {
		b.Fatal(err)
	}
	if body.Truncated {
		b.Logf("search was truncated (%s): the numbers are not comparable", body.Hint)
	}
	return len(body.Matches)
}

// countRipgrep sums the per-file counts of `rg -c` output.
func countRipgrep(b *testing.B, out []byte) int {
	matches := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		n, err := strconv.Atoi(line[strings.LastIndexByte(line, ':')+1:])
		if err != nil {
			b.Fatalf("rg output line %q", line)
		}
		matches += n
	}
	return matches
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
		matches = countRipgrep(b, out)
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
