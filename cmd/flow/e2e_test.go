//go:build e2e

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestE2EOllama runs a real task against a real Ollama: set FLOW_E2E_OLLAMA
// to its URL (for example http://127.0.0.1:11434) and FLOW_E2E_MODEL to a
// pulled, tool-capable model (default qwen2.5-coder:7b), then
//
//	make e2e
//
// A local model may legitimately fail to fix the bug; the test then fails
// with the report, so a human can judge. It never runs in `go test ./...`.
func TestE2EOllama(t *testing.T) {
	url := os.Getenv("FLOW_E2E_OLLAMA")
	if url == "" {
		t.Skip("set FLOW_E2E_OLLAMA to a running Ollama's URL")
	}
	model := os.Getenv("FLOW_E2E_MODEL")
	if model == "" {
		model = "qwen2.5-coder:7b"
	}
	ws := calcModule(t)
	cfg := goConfig(t, ws, url, "")
	body, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, []byte(strings.Replace(string(body), "[agent]", "[agent]\nmax_iterations = 12", 1)+
		"\n"), 0o644)
	r := runFlow(t, ws, goEnv(t), "doctor", "-c", cfg, "-m", model)
	if r.code != 0 {
		t.Fatalf("flow doctor = %d\n%s", r.code, r.stdout)
	}
	r = runFlow(t, ws, goEnv(t), "run", "--trusted", "-c", cfg, "-m", model,
		"The test in calc_test.go fails because Add in calc.go is wrong. Fix Add; do not change the test.")
	m := decode(t, r)
	got, _ := os.ReadFile(filepath.Join(ws, "calc.go"))
	t.Logf("calc.go after the run:\n%s", got)
	if r.code != 0 || m["verified"] != true {
		t.Fatalf("flow run = %d, status %v, verified %v\n%s", r.code, m["status"], m["verified"], r.stdout)
	}
}
