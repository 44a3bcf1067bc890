package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"flow/internal/test/ollamatest"
)

// TestRealAider runs the real aider (scripts/aider-venv.sh's venv, or
// FLOW_TEST_AIDER_BIN) through the harness against the scripted fake Ollama:
// it shows that aider talks to an Ollama-protocol server the way the
// harness expects (the window it is given, the non-streamed native API, the
// test command's output sent back) and that the harness reads its calls
// and tokens from aider's own logs. It skips when aider is not installed,
// unless FLOW_TEST_AIDER=required.
func TestRealAider(t *testing.T) {
	aider := os.Getenv("FLOW_TEST_AIDER_BIN")
	if aider == "" {
		aider = defaultAiderPath()
	}
	if _, err := os.Stat(aider); err != nil {
		msg := "no aider at " + aider + ": scripts/aider-venv.sh installs it"
		if os.Getenv("FLOW_TEST_AIDER") == "required" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	needTools(t, "go")
	script, err := os.ReadFile(filepath.Join(tasksDir, "go-stats-median", "scripted", "aider.json"))
	if err != nil {
		t.Fatal(err)
	}
	srv := ollamatest.NewServer()
	if err := srv.LoadScript(script); err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })

	dir := t.TempDir()
	out := filepath.Join(dir, "run.json")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{
		"-flow", "", "-peer", "aider", "-aider", aider,
		"-tasks-dir", tasksDir, "-tools-dir", toolsDir, "-tasks", "go-stats-median",
		"-base-url", srv.URL, "-model", "flow-eval-scripted", "-context-length", "12288", "-call-timeout", "60",
		"-work-dir", filepath.Join(dir, "work"), "-keep", "-out", out,
	}, &stdout, &stderr)
	aiderOut, _ := os.ReadFile(filepath.Join(dir, "work", "go-stats-median-1", aiderOutput))
	if code != 0 {
		t.Fatalf("harness exit %d\nstdout:\n%s\nstderr:\n%s\naider:\n%s", code, stdout.String(), stderr.String(), aiderOut)
	}
	var f File
	readJSON(t, out, &f)
	if len(f.Results) != 1 {
		t.Fatalf("%d results, want 1", len(f.Results))
	}
	r := f.Results[0]
	// The first reply changes a comment, the test still fails, aider sends
	// the failure back (--auto-test) and applies the second reply's fix.
	if r.Status != "ok" || !r.Verified || !r.AcceptancePassed || r.FalseVerified || r.ExitCode != 0 ||
		strings.Join(r.ChangedFiles, ",") != "stats.go" {
		t.Errorf("result %+v\naider:\n%s", r, aiderOut)
	}
	if r.ModelCalls != 2 || r.PromptTokens != 600+1300 || r.CompletionTokens != 210+240 {
		t.Errorf("%d calls, %d+%d tokens; want 2 calls and the server's 1900+450 tokens", r.ModelCalls, r.PromptTokens, r.CompletionTokens)
	}
	if f.Settings.Peer == nil || f.Settings.Peer.Version == "" || f.Settings.Runners[0].Type != runnerAider {
		t.Errorf("settings %+v", f.Settings)
	}
	if srv.Unexpected() != 0 || srv.Pending() != 0 {
		t.Errorf("%d unexpected requests, %d turns left", srv.Unexpected(), srv.Pending())
	}
	var chats []ollamatest.Recorded
	for _, q := range srv.Requests() {
		if q.Path == "/api/chat" {
			chats = append(chats, q)
		}
	}
	if len(chats) != 2 {
		t.Fatalf("%d chat requests, want 2", len(chats))
	}
	for i, q := range chats {
		opts, _ := q.Body["options"].(map[string]any)
		if q.Body["model"] != "flow-eval-scripted" || q.Body["stream"] != false || opts["num_ctx"] != 12288.0 {
			t.Errorf("chat request %d: model %v, stream %v, options %v; want flow-eval-scripted, false, num_ctx 12288", i+1, q.Body["model"], q.Body["stream"], opts)
		}
	}
	first, second := string(chats[0].Raw), string(chats[1].Raw)
	for _, want := range []string{"TestMedianEven", "Fix Median in stats.go", "func Median"} {
		if !strings.Contains(first, want) {
			t.Errorf("the first request lacks %q (the task and the files in the chat)", want)
		}
	}
	if strings.Contains(first, "acceptance") {
		t.Error("the hidden acceptance test reached aider")
	}
	if !strings.Contains(second, "go test ./...") || !strings.Contains(second, "FAIL") {
		t.Errorf("the second request does not carry the failing test command's output:\n%.2000s", second)
	}
}
