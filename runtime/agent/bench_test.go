package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"flow/bufferfs"
	"flow/runtime/model"
	"flow/runtime/report"
)

// benchCalls is the number of tool calls of one benchmarked run.
const benchCalls = 64

// BenchmarkRunToolCalls measures the agent's orchestration overhead per tool
// call: a run of 64 file_read/file_list/file_search calls (8 turns of 8)
// against an instant in-process backend, on a 10,000-file workspace, with no
// checks. It reports ns/toolcall.
func BenchmarkRunToolCalls(b *testing.B) {
	dir := b.TempDir()
	for d := range 100 {
		sub := filepath.Join(dir, fmt.Sprintf("pkg%02d", d))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 100 {
			body := fmt.Sprintf("package pkg%02d\n\n// File %d.\nfunc F%d() int { return %d }\n", d, f, f, f)
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%03d.go", f)), []byte(body), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	var steps []step
	n := 0
	for turn := range benchCalls / 8 {
		var calls []model.ToolCall
		for i := range 8 {
			d := (turn*8 + i) % 100
			switch i % 4 {
			case 0, 1:
				calls = append(calls, tc("", "file_read", map[string]any{"path": fmt.Sprintf("pkg%02d/f%03d.go", d, n%100)}))
			case 2:
				calls = append(calls, tc("", "file_list", map[string]any{"path": fmt.Sprintf("pkg%02d", d)}))
			case 3:
				calls = append(calls, tc("", "file_search", map[string]any{"pattern": "return 42", "path": fmt.Sprintf("pkg%02d", d), "literal": true}))
			}
			n++
		}
		steps = append(steps, do(calls...))
	}
	steps = append(steps, say("plan"))

	b.Run("planner", func(b *testing.B) {
		cfg := testConfig(dir)
		cfg.Trusted = false
		cfg.Agent.MaxIterations = benchCalls/8 + 1
		cfg.Agent.MaxToolCalls = benchCalls
		cfg.Agent.MaxContextChars = 1000000
		disk, err := bufferfs.NewDisk(dir, bufferfs.DiskOptions{})
		if err != nil {
			b.Fatal(err)
		}
		defer disk.Close()
		be := &scripted{t: b}
		a := newLoop(cfg, loopDeps{Backend: be, FS: disk})
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			be.steps = append(be.steps[:0], steps...)
			rep := a.Run(b.Context(), "benchmark", nil)
			if rep.ToolCalls != benchCalls || rep.Status != report.StatusUnverified || rep.Roles[0].ToolErrors != 0 {
				b.Fatalf("Run() = %s, %d tool calls, %d tool errors (%q); want %d clean calls", rep.Status, rep.ToolCalls, rep.Roles[0].ToolErrors, rep.Roles[0].Error, benchCalls)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchCalls), "ns/toolcall")
	})
}
