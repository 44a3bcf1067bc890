package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"flow/internal/test/ollamatest"
)

// tmuxPane is a flow TUI running in a pane of a private tmux server.
type tmuxPane struct {
	t      *testing.T
	socket string
}

func needTmux(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("FLOW_TEST_TMUX") == "required" {
			t.Fatal("tmux is required (FLOW_TEST_TMUX=required) but missing")
		}
		t.Skip("tmux not installed")
	}
}

func (p *tmuxPane) tmux(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", p.socket}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// screen returns the pane's text, with its scrollback.
func (p *tmuxPane) screen() string {
	return p.tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", "flow")
}

// waitText waits (bounded) until the pane shows want.
func (p *tmuxPane) waitText(want string) string {
	p.t.Helper()
	var s string
	for i := 0; i < 300; i++ {
		if s = p.screen(); strings.Contains(s, want) {
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.t.Fatalf("the pane never showed %q; it shows:\n%s", want, s)
	return ""
}

func (p *tmuxPane) typeLine(text string) {
	p.t.Helper()
	p.tmux("send-keys", "-t", "flow", "-l", text)
	p.tmux("send-keys", "-t", "flow", "Enter")
}

// startTUIPane starts `flow --trusted -c cfg` in a tmux pane. When flow
// exits, the pane's shell writes the terminal's settings to DIR/stty and
// then its exit status to DIR/exit (each renamed into place, so a file that
// exists is complete).
func startTUIPane(t *testing.T, cfg string) (*tmuxPane, string) {
	t.Helper()
	return startTUIPaneEnv(t, cfg, hermeticEnv(t))
}

// startTUIPaneEnv is startTUIPane in the environment env (whose state
// directory may hold earlier runs).
func startTUIPaneEnv(t *testing.T, cfg string, env []string) (*tmuxPane, string) {
	t.Helper()
	dir := t.TempDir()
	p := &tmuxPane{t: t, socket: filepath.Join(dir, "tmux.sock")}
	script := writeFile(t, dir, "run.sh", fmt.Sprintf(`#!/bin/sh
%s --trusted -c %s
code=$?
stty -a > %s/stty.tmp && mv %s/stty.tmp %s/stty
echo "exit=$code" > %s/exit.tmp && mv %s/exit.tmp %s/exit
sleep 600
`, flowBin, cfg, dir, dir, dir, dir, dir, dir))
	os.Chmod(script, 0o755)
	cmd := exec.Command("tmux", "-S", p.socket, "-f", "/dev/null", "new-session", "-d", "-s", "flow", "-x", "140", "-y", "45", script)
	cmd.Env = append(env, "TERM=xterm-256color")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("tmux", "-S", p.socket, "kill-server").Run() })
	return p, dir
}

// checkExit waits for the pane's flow to exit and checks its status and
// that the terminal was restored (canonical mode and echo back on).
func checkExit(t *testing.T, dir, want string) {
	t.Helper()
	exitFile := filepath.Join(dir, "exit")
	waitFor(t, exitFile)
	if got, _ := os.ReadFile(exitFile); strings.TrimSpace(string(got)) != want {
		t.Errorf("flow exited with %q, want %s", got, want)
	}
	waitFor(t, filepath.Join(dir, "stty"))
	stty, _ := os.ReadFile(filepath.Join(dir, "stty"))
	for _, mode := range []string{" icanon", " echo "} {
		if !strings.Contains(string(stty), mode) {
			t.Errorf("terminal not restored: stty -a lacks %q:\n%s", mode, stty)
		}
	}
}

// TestTUIInTmux drives `flow` in a real terminal: /help, /status, a task
// whose live events and verified summary appear, Ctrl-C cancelling a slow
// model turn, and /quit exiting 0 with the terminal restored.
func TestTUIInTmux(t *testing.T) {
	needTmux(t)
	t.Parallel()
	ws, srv, cfg := addAScript(t, `["grep", "-q", "func A", "a.go"]`, ollamatest.Turn{Content: "never", Delay: 2 * time.Minute})
	p, dir := startTUIPane(t, cfg)
	p.waitText("trusted")
	p.typeLine("/help")
	p.waitText("/build")
	p.typeLine("/status")
	p.waitText("connectivity unverified")
	p.typeLine("add A to a.go")
	s := p.waitText("run ok · verified · 1 changed file")
	for _, want := range []string{"planner", "coder", "file_write", "lint", "reviewer"} {
		if !strings.Contains(s, want) {
			t.Errorf("the live log lacks %q:\n%s", want, s)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "a.go")); !strings.Contains(string(got), "func A") {
		t.Errorf("a.go = %q, want the run's edit", got)
	}

	p.typeLine("a slow task")
	waitRequests(t, srv, 5)
	p.tmux("send-keys", "-t", "flow", "C-c")
	p.waitText("run cancelled")

	p.typeLine("/quit")
	checkExit(t, dir, "exit=0")
}

// TestTUIShowsTheModelAtWork: during a run whose planner reply streams
// slowly, the pane shows the text received so far while the turn is still
// in progress (with the spinner's step), then the edit's coloured diff and
// the verified summary.
func TestTUIShowsTheModelAtWork(t *testing.T) {
	needTmux(t)
	t.Parallel()
	// The fake server streams a reply in three equal chunks.
	first, second, third := "Plan, part one:  ", "edit a.go so the ", "lint check passes"
	ws := workspace(t)
	writeFile(t, ws, "a.go", "package a\n")
	srv := ollamatest.New(t,
		ollamatest.Turn{Content: first + second + third, ChunkDelay: 4 * time.Second},
		ollamatest.Turn{ToolCalls: []ollamatest.Call{call("c1", "file_write", map[string]any{"path": "a.go", "content": "package a\n\nfunc A() {}\n"})}},
		ollamatest.Turn{Content: "Done."},
		ollamatest.Turn{Content: approve},
	)
	cfg := writeFile(t, t.TempDir(), "ops.toml", `workspace_dir = `+tomlString(ws)+`
[ollama]
base_url = `+tomlString(srv.URL)+`
[agent]
planner = "always" # the test scripts a planner turn
max_cycles = 1
[checks.lint]
cmd = ["grep", "-q", "func A", "a.go"]
kind = "lint"
filetypes = ["go"]
`)
	p, dir := startTUIPane(t, cfg)
	p.waitText("trusted")
	p.typeLine("add A to a.go")
	s := p.waitText(strings.TrimSpace(first))
	if strings.Contains(s, third) {
		t.Errorf("the whole reply was shown at once, not streamed:\n%s", s)
	}
	for _, want := range []string{"planner  turn 1  …", "planner turn 1 ", "Ctrl-C cancels"} {
		if !strings.Contains(s, want) {
			t.Errorf("while the reply streams, the pane lacks %q:\n%s", want, s)
		}
	}
	s = p.waitText("run ok · verified · 1 changed file")
	for _, want := range []string{
		"  " + first + second + third,
		"coder  file_write a.go  ok  +2 -0",
		"    +func A() {}",
		"  changed  a.go  +2 -0",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the pane lacks %q:\n%s", want, s)
		}
	}
	// The added line is green: the last foreground colour set before it
	// (tmux writes an SGR only where the style changes) is 32.
	colored := p.tmux("capture-pane", "-p", "-e", "-J", "-S", "-200", "-t", "flow")
	if fg := foregroundAt(colored, "+func A() {}"); fg != "32" {
		t.Errorf("the diff's added line has foreground %q, want green (32):\n%q", fg, colored)
	}
	p.typeLine("/quit")
	checkExit(t, dir, "exit=0")
}

// foregroundAt returns the SGR foreground parameter ("32", "38;5;240";
// "" for the default) in effect where text first occurs in captured, a
// pane captured with its escape sequences.
func foregroundAt(captured, text string) string {
	i := strings.Index(captured, text)
	if i < 0 {
		return "missing"
	}
	fg := ""
	for _, m := range sgr.FindAllStringSubmatch(captured[:i], -1) {
		params := strings.Split(m[1], ";")
		for j := 0; j < len(params); j++ {
			switch p := params[j]; {
			case p == "" || p == "0" || p == "39":
				fg = ""
			case p == "38" && j+2 < len(params) && params[j+1] == "5":
				fg = strings.Join(params[j:j+3], ";")
				j += 2
			case len(p) == 2 && (p[0] == '3' || p[0] == '9') && p[1] != '8':
				fg = p
			}
		}
	}
	return fg
}

var sgr = regexp.MustCompile("\x1b\\[([0-9;]*)m")

// TestTUISIGTERMDuringCheck: SIGTERM while a check runs kills the check's
// process group, exits 130 and restores the terminal.
func TestTUISIGTERMDuringCheck(t *testing.T) {
	needTmux(t)
	t.Parallel()
	ws := workspace(t)
	cfg := writeFile(t, t.TempDir(), "ops.toml", `workspace_dir = `+tomlString(ws)+`
[checks.slow]
cmd = ["sh", "-c", "(sleep 1; touch grandchild-wrote) & touch started; sleep 30"]
`)
	p, dir := startTUIPane(t, cfg)
	p.waitText("trusted")
	p.typeLine("/check")
	waitFor(t, filepath.Join(ws, "started"))
	pid := strings.TrimSpace(p.tmux("display-message", "-p", "-t", "flow", "#{pane_pid}"))
	children, err := os.ReadFile("/proc/" + pid + "/task/" + pid + "/children")
	if err != nil || len(strings.Fields(string(children))) == 0 {
		t.Fatalf("no flow process under the pane's shell %s: %v", pid, err)
	}
	if err := exec.Command("kill", "-TERM", strings.Fields(string(children))[0]).Run(); err != nil {
		t.Fatal(err)
	}
	checkExit(t, dir, "exit=130")
	time.Sleep(1500 * time.Millisecond)
	if _, err := os.Stat(filepath.Join(ws, "grandchild-wrote")); err == nil {
		t.Error("the check's grandchild survived SIGTERM")
	}
}

// TestTUILineMode: with stdin not a terminal, flow reads one command or
// task per line and answers each with one JSON object per line.
func TestTUILineMode(t *testing.T) {
	t.Parallel()
	ws, _, cfg := addAScript(t, `["grep", "-q", "func A", "a.go"]`)
	cmd := exec.Command(flowBin, "tui", "--trusted", "-c", cfg)
	cmd.Env = hermeticEnv(t)
	cmd.Stdin = strings.NewReader("/status\nadd A to a.go\n/bogus\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("flow tui: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("line mode wrote %d lines, want 3:\n%s", len(lines), out)
	}
	wants := []string{`"workspace":"` + ws + `"`, `"verified":true`, `"status":"error"`}
	for i, want := range wants {
		if !strings.HasPrefix(lines[i], "{") || !strings.Contains(lines[i], want) {
			t.Errorf("line %d = %.200s, want a JSON object containing %s", i+1, lines[i], want)
		}
	}
}
