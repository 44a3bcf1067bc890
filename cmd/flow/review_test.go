package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"flow/internal/test/ollamatest"
)

// lines returns n lines "line 1" … "line n" with the lines in edit
// replaced.
func lines(n int, edit map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if s, ok := edit[i]; ok {
			b.WriteString(s + "\n")
		} else {
			fmt.Fprintf(&b, "line %d\n", i)
		}
	}
	return b.String()
}

// reviewedRun is a scripted run that changes two places in a.txt and one
// in b.txt; it returns the workspace, the configuration, the environment
// and the run id.
func reviewedRun(t *testing.T) (ws, cfg string, env []string, runID string) {
	t.Helper()
	ws, cfg = reviewScript(t)
	env = hermeticEnv(t)
	r := runFlow(t, ws, env, "run", "--trusted", "-c", cfg, "edit")
	m := decode(t, r)
	if m["status"] != "ok" {
		t.Fatalf("flow run = %d %v", r.code, m)
	}
	return ws, cfg, env, m["run_id"].(string)
}

// reviewScript returns a workspace and a configuration whose scripted
// server's run changes two places of a.txt and one of b.txt.
func reviewScript(t *testing.T) (ws, cfg string) {
	t.Helper()
	ws = workspace(t)
	writeFile(t, ws, "a.txt", lines(30, nil))
	writeFile(t, ws, "b.txt", lines(5, nil))
	srv := ollamatest.New(t,
		ollamatest.Turn{Content: "Plan."},
		ollamatest.Turn{ToolCalls: []ollamatest.Call{
			write("1", "a.txt", lines(30, map[int]string{3: "THREE", 25: "TWENTY-FIVE"})),
			write("2", "b.txt", lines(5, map[int]string{2: "TWO"})),
		}},
		ollamatest.Turn{Content: "Done."},
		ollamatest.Turn{Content: approve},
	)
	return ws, plainConfig(t, ws, srv.URL)
}

// hunkIDs maps each hunk's added line to its id and state.
func hunkIDs(t *testing.T, m map[string]any) map[string][2]string {
	t.Helper()
	out := map[string][2]string{}
	for _, h := range m["hunks"].([]any) {
		h := h.(map[string]any)
		for _, l := range strings.Split(h["text"].(string), "\n") {
			if strings.HasPrefix(l, "+") {
				out[l[1:]] = [2]string{h["id"].(string), h["state"].(string)}
			}
		}
	}
	return out
}

func readWS(t *testing.T, ws, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReviewRevertsOneHunk: flow review --list shows the three hunks with
// their ranges and evidence; --revert of one puts back only its lines;
// the states survive into new processes and into the run's record.
func TestReviewRevertsOneHunk(t *testing.T) {
	t.Parallel()
	ws, cfg, env, runID := reviewedRun(t)
	r := runFlow(t, ws, env, "review", "--list", "-c", cfg)
	t.Logf("flow review --list → exit %d\n%s", r.code, r.stdout)
	m := decode(t, r)
	if r.code != 0 || m["run_id"] != runID || len(m["hunks"].([]any)) != 3 {
		t.Fatalf("flow review --list = %d %v", r.code, m)
	}
	first := m["hunks"].([]any)[0].(map[string]any)
	for _, k := range []string{"id", "path", "old_start", "old_lines", "new_start", "new_lines", "state", "evidence"} {
		if _, ok := first[k]; !ok {
			t.Errorf("a hunk lacks %q: %v", k, first)
		}
	}
	if ev := first["evidence"].(map[string]any); ev["shows"] != "behaviour_preserving" {
		t.Errorf("evidence %v, want the run's behaviour_preserving", ev)
	}
	ids := hunkIDs(t, m)
	r = runFlow(t, ws, env, "review", runID, "--revert", ids["TWENTY-FIVE"][0], "-c", cfg)
	t.Logf("flow review RUN --revert %s → exit %d\n%s", ids["TWENTY-FIVE"][0], r.code, r.stdout)
	if m := decode(t, r); r.code != 0 || m["status"] != "ok" {
		t.Fatalf("flow review --revert = %d %v", r.code, m)
	}
	if got, want := readWS(t, ws, "a.txt"), lines(30, map[int]string{3: "THREE"}); got != want {
		t.Errorf("a.txt = %q, want only line 25 back", got)
	}
	if got := readWS(t, ws, "b.txt"); got != lines(5, map[int]string{2: "TWO"}) {
		t.Errorf("b.txt = %q, want the run's", got)
	}
	r = runFlow(t, ws, env, "review", runID, "--keep", ids["THREE"][0], "-c", cfg)
	if r.code != 0 {
		t.Fatalf("flow review --keep = %d %s", r.code, r.stderr)
	}
	states := hunkIDs(t, decode(t, runFlow(t, ws, env, "review", runID, "--list", "-c", cfg)))
	if states["THREE"][1] != "kept" || states["TWENTY-FIVE"][1] != "reverted" || states["TWO"][1] != "pending" {
		t.Errorf("states in a new process: %v", states)
	}
	last := decode(t, runFlow(t, ws, env, "status", "-c", cfg))["last_report"].(map[string]any)
	rv, _ := last["review"].(map[string]any)
	if rv["by"] != "person" || rv["accepted"] != 1.0 || rv["rejected"] != 1.0 || rv["pending"] != 1.0 || last["verified"] != true {
		t.Errorf("the run's record: review %v verified %v", rv, last["verified"])
	}
	// Undo after the review still restores every file.
	if r := runFlow(t, ws, env, "undo", "-c", cfg); decode(t, r)["status"] != "ok" {
		t.Fatalf("flow undo after a review = %d %v", r.code, decode(t, r))
	}
	if readWS(t, ws, "a.txt") != lines(30, nil) || readWS(t, ws, "b.txt") != lines(5, nil) {
		t.Error("undo after a review left the run's lines")
	}
}

// TestReviewConflictAndBadInput: a hunk whose lines changed since the run
// is refused and nothing is written; bad requests exit 2 writing nothing.
func TestReviewConflictAndBadInput(t *testing.T) {
	t.Parallel()
	ws, cfg, env, runID := reviewedRun(t)
	ids := hunkIDs(t, decode(t, runFlow(t, ws, env, "review", "--list", "-c", cfg)))
	mine := lines(5, map[int]string{2: "TWO, edited by me"})
	writeFile(t, ws, "b.txt", mine)
	r := runFlow(t, ws, env, "review", "--revert", ids["TWO"][0], "-c", cfg)
	t.Logf("flow review --revert %s after b.txt changed → exit %d\n%s", ids["TWO"][0], r.code, r.stdout)
	m := decode(t, r)
	if r.code != 1 || m["status"] != "conflict" || !strings.Contains(m["message"].(string), "changed since the run") {
		t.Fatalf("revert of changed lines = %d %v", r.code, m)
	}
	if readWS(t, ws, "b.txt") != mine {
		t.Error("a refused revert wrote b.txt")
	}
	before := readWS(t, ws, "a.txt")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"review", "--revert", "0000000000"}, `no hunk or changed file "0000000000"`},
		{[]string{"review", "run-of-elsewhere", "--list"}, "is not in the journal"},
		{[]string{"review", "--keep", ids["THREE"][0], "--revert", "all"}, "both kept and reverted"},
		{[]string{"status", "--keep", "all"}, "--keep is only valid with review"},
	} {
		r := runFlow(t, ws, env, append(tc.args, "-c", cfg)...)
		if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("flow %v = %d stdout %q stderr %q, want 2 and %q", tc.args, r.code, r.stdout, r.stderr, tc.want)
		}
	}
	if readWS(t, ws, "a.txt") != before {
		t.Error("a bad request wrote a.txt")
	}
	_ = runID
}

// TestReviewWalkInTmux answers the walk in a real terminal: y, then n.
func TestReviewWalkInTmux(t *testing.T) {
	t.Parallel()
	needTmux(t)
	ws, cfg, env, _ := reviewedRun(t)
	dir := t.TempDir()
	p := &tmuxPane{t: t, socket: filepath.Join(dir, "tmux.sock")}
	script := writeFile(t, dir, "run.sh", fmt.Sprintf("#!/bin/sh\ncd %s\n%s review -c %s\necho \"exit=$?\" > %s/exit.tmp && mv %s/exit.tmp %s/exit\nsleep 600\n",
		ws, flowBin, cfg, dir, dir, dir))
	os.Chmod(script, 0o755)
	cmd := exec.Command("tmux", "-S", p.socket, "-f", "/dev/null", "new-session", "-d", "-s", "flow", "-x", "120", "-y", "60", script)
	cmd.Env = append(env, "TERM=xterm-256color", "NO_COLOR=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("tmux", "-S", p.socket, "kill-server").Run() })
	p.waitText("(1/3) Keep this hunk [y,n,a,d,q,?]?")
	p.typeLine("y")
	p.waitText("(2/3) Keep this hunk")
	p.typeLine("n")
	screen := p.waitText("(3/3) Keep this hunk")
	t.Logf("the screen after two answers:\n%s", screen)
	for _, want := range []string{"+THREE", "kept ", "+TWENTY-FIVE", "reverted ", "+TWO", "changes no behaviour"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the screen lacks %q", want)
		}
	}
	p.typeLine("q")
	screen = p.waitText("left 1 pending")
	waitFor(t, filepath.Join(dir, "exit"))
	if got, _ := os.ReadFile(filepath.Join(dir, "exit")); strings.TrimSpace(string(got)) != "exit=0" {
		t.Errorf("flow review exited %q:\n%s", got, screen)
	}
	if got := readWS(t, ws, "a.txt"); got != lines(30, map[int]string{3: "THREE"}) {
		t.Errorf("a.txt after y, n: %q", got)
	}
}

// TestTUIReviewInTmux: in the terminal UI, /review walks the last run's
// hunks one key at a time: n reverts the first (its old line is back in
// the file), y keeps the second, q leaves the third pending, and
// `flow review --list` in another process sees the same states.
func TestTUIReviewInTmux(t *testing.T) {
	t.Parallel()
	needTmux(t)
	ws, cfg, env, _ := reviewedRun(t)
	p, dir := startTUIPaneEnv(t, cfg, env)
	p.waitText("trusted")
	p.typeLine("/review")
	p.waitText("hunk 1/3")
	p.tmux("send-keys", "-t", "flow", "n")
	p.waitText("hunk 2/3")
	p.tmux("send-keys", "-t", "flow", "y")
	screen := p.waitText("hunk 3/3")
	t.Logf("the screen after two answers:\n%s", screen)
	for _, want := range []string{"pending   ", "+THREE", "reverted ", "+TWENTY-FIVE", "kept ", "+TWO", "y keep · n revert"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the screen lacks %q", want)
		}
	}
	p.tmux("send-keys", "-t", "flow", "q")
	p.waitText("review stopped · 1 hunk stays pending")
	if got := readWS(t, ws, "a.txt"); got != lines(30, map[int]string{25: "TWENTY-FIVE"}) {
		t.Errorf("a.txt after n, y: %q", got)
	}
	p.typeLine("/quit")
	checkExit(t, dir, "exit=0")
	m := decode(t, runFlow(t, ws, env, "review", "-c", cfg, "--list"))
	states := hunkIDs(t, m)
	for line, want := range map[string]string{"THREE": "reverted", "TWENTY-FIVE": "kept", "TWO": "pending"} {
		if states[line][1] != want {
			t.Errorf("hunk +%s is %q, want %s", line, states[line][1], want)
		}
	}
}
