package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"flow/internal/test/ollamatest"
)

// BenchmarkDemoRunBaseline measures what the baseline costs: the demo's
// whole `flow run --trusted` (examples/calc, the scripted model of
// examples/demo-model.json, real go vet and go test checks), as a process,
// with agent.baseline on and off. Each iteration runs on a fresh copy of
// examples/calc; it reports the median wall time.
//
//	go test ./cmd/flow -run '^$' -bench DemoRunBaseline -benchtime 5x
func BenchmarkDemoRunBaseline(b *testing.B) {
	script, err := os.ReadFile("../../examples/demo-model.json")
	if err != nil {
		b.Fatal(err)
	}
	env := benchGoEnv(b)
	for _, mode := range []struct {
		name     string
		baseline bool
	}{{"baseline=on", true}, {"baseline=off", false}} {
		b.Run(mode.name, func(b *testing.B) {
			var times []time.Duration
			var checksMS []int64 // the baseline's own checks, from the report
			for b.Loop() {
				b.StopTimer()
				dir := b.TempDir()
				ws := filepath.Join(dir, "calc")
				if out, err := exec.Command("cp", "-r", "../../examples/calc", ws).CombinedOutput(); err != nil {
					b.Fatalf("copy examples/calc: %v %s", err, out)
				}
				srv := ollamatest.New(b)
				if err := srv.LoadScript(script); err != nil {
					b.Fatal(err)
				}
				agent := ""
				if !mode.baseline {
					agent = "[agent]\nplanner = \"always\"\nbaseline = false\n"
				}
				cfg := filepath.Join(dir, "ops.toml")
				if err := os.WriteFile(cfg, []byte("workspace_dir = \"calc\"\n[ollama]\nbase_url = "+tomlString(srv.URL)+"\n"+agent+goChecks), 0o644); err != nil {
					b.Fatal(err)
				}
				cmd := exec.Command(flowBin, "run", "--trusted", "-c", cfg, "Fix Add so the tests pass")
				cmd.Env = append(env, "XDG_STATE_HOME="+filepath.Join(dir, "state"))
				b.StartTimer()
				start := time.Now()
				out, err := cmd.Output()
				times = append(times, time.Since(start))
				var rep struct {
					Verified bool `json:"verified"`
					Baseline []struct {
						DurationMS int64 `json:"duration_ms"`
					} `json:"baseline"`
				}
				if err != nil || json.Unmarshal(out, &rep) != nil || !rep.Verified || len(rep.Baseline) != map[bool]int{true: 2, false: 0}[mode.baseline] {
					b.Fatalf("flow run: %v\n%s", err, out)
				}
				var ms int64
				for _, c := range rep.Baseline {
					ms += c.DurationMS
				}
				checksMS = append(checksMS, ms)
			}
			sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
			b.ReportMetric(float64(times[len(times)/2].Milliseconds()), "median-ms")
			sort.Slice(checksMS, func(i, j int) bool { return checksMS[i] < checksMS[j] })
			b.ReportMetric(float64(checksMS[len(checksMS)/2]), "baseline-checks-median-ms")
		})
	}
}

// benchGoEnv is goEnv for benchmarks: the machine's Go caches, nothing else
// of the user's.
func benchGoEnv(b *testing.B) []string {
	b.Helper()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.TempDir(), "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod", "GOPROXY=off"}
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOROOT"} {
		out, err := exec.Command("go", "env", k).Output()
		if err != nil {
			b.Fatalf("go env %s: %v", k, err)
		}
		env = append(env, k+"="+strings.TrimSpace(string(out)))
	}
	return env
}
