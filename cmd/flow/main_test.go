package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"flow/internal/test/ollamatest"
)

// flowBin is the flow binary built once for the subprocess tests.
var flowBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "flow-cli-test-")
	if err != nil {
		panic(err)
	}
	flowBin = filepath.Join(dir, "flow")
	build := exec.Command("go", "build", "-o", flowBin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		os.RemoveAll(dir)
		panic("build flow: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is what a flow subprocess did.
type result struct {
	code   int
	stdout string
	stderr string
}

// hermeticEnv returns an environment whose XDG and HOME directories are
// empty temporary directories, so no user configuration leaks into a test.
func hermeticEnv(t *testing.T, extra ...string) []string {
	t.Helper()
	home := t.TempDir()
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"),
		"XDG_STATE_HOME=" + filepath.Join(home, "state"),
		"LANG=C.UTF-8",
	}
	return append(env, extra...)
}

// runFlow runs the flow binary in dir with args and the given environment.
func runFlow(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.CommandContext(context.Background(), flowBin, args...)
	cmd.Dir = dir
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run flow %v: %v", args, err)
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// writeFile writes content to dir/name, creating parents.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}

// addAScript is the smallest verified run: a workspace with a.go, a fake
// model whose planner plans, whose coder writes func A into a.go and whose
// reviewer approves (then the extra turns), and an operator configuration
// with one cycle and a lint check running lint (an argv in TOML) over .go
// files.
func addAScript(t *testing.T, lint string, extra ...ollamatest.Turn) (ws string, srv *ollamatest.Server, cfg string) {
	t.Helper()
	ws = workspace(t)
	writeFile(t, ws, "a.go", "package a\n")
	turns := []ollamatest.Turn{
		{Content: "Plan: add A."},
		{ToolCalls: []ollamatest.Call{call("c1", "file_write", map[string]any{"path": "a.go", "content": "package a\n\nfunc A() {}\n"})}},
		{Content: "Done.\nprinted by the model"},
		{Content: approve},
	}
	srv = ollamatest.New(t, append(turns, extra...)...)
	cfg = writeFile(t, t.TempDir(), "ops.toml", `workspace_dir = `+tomlString(ws)+`
[ollama]
base_url = `+tomlString(srv.URL)+`
[agent]
planner = "always" # the test scripts a planner turn
max_cycles = 1
[checks.lint]
cmd = `+lint+`
kind = "lint"
filetypes = ["go"]
`)
	return ws, srv, cfg
}
