package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"flow/runtime/model"
	"flow/runtime/model/ollama"
)

func TestRunUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"turns":[{"delay":5}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no script", nil, "usage: flow-fake-ollama -script FILE"},
		{"unknown flag", []string{"-bogus"}, "flag provided but not defined"},
		{"extra argument", []string{"-script", bad, "extra"}, "usage:"},
		{"missing script", []string{"-script", filepath.Join(dir, "none.json")}, "no such file"},
		{"invalid script", []string{"-script", bad}, `unknown field "delay"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			code := run(t.Context(), tc.args, &stdout, &stderr)
			if code != 2 || stdout.Len() != 0 || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("run(%q) = %d, stdout %q, stderr %q; want 2, nothing, stderr containing %q",
					tc.args, code, stdout.String(), stderr.String(), tc.want)
			}
		})
	}
}

// buildBinary compiles this command into a temporary directory.
func buildBinary(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not on PATH")
	}
	bin := filepath.Join(t.TempDir(), "flow-fake-ollama")
	cmd := exec.Command(gobin, "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// start runs bin with args and returns the process and its announced URL.
func start(t *testing.T, bin string, args ...string) (*exec.Cmd, string, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok || !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("first stdout line = %q (%v), want \"listening on http://127.0.0.1:PORT\"; stderr %s", line, err, stderr.String())
	}
	return cmd, url, &stderr
}

// wait waits for cmd to exit and returns its exit code.
func wait(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatalf("wait: %v", err)
		}
		return 0
	case <-time.After(20 * time.Second):
		t.Fatal("flow-fake-ollama did not exit")
		return -1
	}
}

func TestBinary(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "script.json")
	record := filepath.Join(dir, "requests.ndjson")
	err := os.WriteFile(script, []byte(`{
		"models": ["qwen2.5-coder:7b"],
		"turns": [{"content": "Hello from the script.", "prompt_tokens": 4, "completion_tokens": 5}]
	}`), 0o644)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("exit when done", func(t *testing.T) {
		t.Parallel()
		cmd, url, stderr := start(t, bin, "-script", script, "-record", record, "-exit-when-done")
		c, err := ollama.New(ollama.Options{BaseURL: url, Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Chat(t.Context(), model.Request{Model: "qwen2.5-coder:7b", Messages: []model.Message{{Role: "user", Content: "hi"}}})
		if err != nil || resp.Message.Content != "Hello from the script." || resp.Usage.CompletionTokens != 5 {
			t.Errorf("Chat() = %+v, %v, want the scripted turn", resp, err)
		}
		if code := wait(t, cmd); code != 0 {
			t.Errorf("exit code = %d, want 0; stderr %s", code, stderr)
		}
		data, err := os.ReadFile(record)
		if err != nil {
			t.Fatal(err)
		}
		var rec struct {
			Method, Path string
			Body         map[string]any
		}
		if err := json.Unmarshal(data, &rec); err != nil || rec.Method != "POST" || rec.Path != "/api/chat" || rec.Body["model"] != "qwen2.5-coder:7b" {
			t.Errorf("record file = %q (%v), want one /api/chat request", data, err)
		}
	})

	t.Run("SIGTERM", func(t *testing.T) {
		t.Parallel()
		cmd, _, stderr := start(t, bin, "-script", script)
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := wait(t, cmd); code != 0 {
			t.Errorf("exit code after SIGTERM = %d, want 0; stderr %s", code, stderr)
		}
	})
}
