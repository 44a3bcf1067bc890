package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
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

// serveSession is the input of a whole MCP session: initialize,
// initialized, tools/list, flow_status, then EOF.
const serveSession = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"flow_status","arguments":{}}}
`

// BenchmarkServeSessionProcess measures a whole `flow serve` session as a
// process: spawn, initialize, initialized, tools/list, flow_status, EOF. It
// reports the median wall time (goal: under 15 ms).
func BenchmarkServeSessionProcess(b *testing.B) {
	ws := b.TempDir()
	env := []string{"HOME=" + b.TempDir(), "PATH=/usr/bin:/bin"}
	var times []time.Duration
	for b.Loop() {
		start := time.Now()
		cmd := exec.Command(flowBin, "serve", "-w", ws)
		cmd.Env = env
		cmd.Stdin = strings.NewReader(serveSession)
		out, err := cmd.Output()
		if err != nil || strings.Count(string(out), "\n") != 3 {
			b.Fatalf("flow serve: %v %s", err, out)
		}
		times = append(times, time.Since(start))
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms")
}

// BenchmarkServeIdleRSS reports the resident memory of an idle `flow serve`
// after a session's first requests (goal: under 20 MiB).
func BenchmarkServeIdleRSS(b *testing.B) {
	ws := b.TempDir()
	var rss float64
	for b.Loop() {
		cmd := exec.Command(flowBin, "serve", "-w", ws)
		cmd.Env = []string{"HOME=" + b.TempDir(), "PATH=/usr/bin:/bin"}
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		io.WriteString(stdin, serveSession)
		r := bufio.NewReader(stdout)
		for range 3 {
			if _, err := r.ReadString('\n'); err != nil {
				b.Fatal(err)
			}
		}
		time.Sleep(100 * time.Millisecond)
		status, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/status")
		if err != nil {
			b.Fatal(err)
		}
		for _, line := range strings.Split(string(status), "\n") {
			if kb, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kb), "kB")))
				rss = float64(n) / 1024
			}
		}
		stdin.Close()
		cmd.Wait()
	}
	b.ReportMetric(rss, "rss-MiB")
}
