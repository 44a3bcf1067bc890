package main

import (
	"os/exec"
	"sort"
	"testing"
	"time"
)

// BenchmarkStatusProcess measures `flow status` as a whole process: spawn,
// load the configuration, open the workspace, print the report, exit. It
// reports the median wall time (goal: under 10 ms).
func BenchmarkStatusProcess(b *testing.B) {
	ws := b.TempDir()
	env := []string{"HOME=" + b.TempDir(), "PATH=/usr/bin:/bin"}
	var times []time.Duration
	for b.Loop() {
		start := time.Now()
		cmd := exec.Command(flowBin, "status", "-w", ws)
		cmd.Env = env
		if out, err := cmd.Output(); err != nil {
			b.Fatalf("flow status: %v %s", err, out)
		}
		times = append(times, time.Since(start))
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms")
}
