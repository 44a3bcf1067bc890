package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"flow/internal/test/ollamatest"
	"flow/runtime/report"
)

// goEnv is the environment of a flow subprocess that runs real Go checks:
// hermetic XDG directories, but the machine's Go caches so `go test` does
// not rebuild the standard library.
func goEnv(t *testing.T) []string {
	t.Helper()
	env := hermeticEnv(t, "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod", "GOPROXY=off")
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOROOT"} {
		out, err := exec.Command("go", "env", k).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", k, err)
		}
		env = append(env, k+"="+strings.TrimSpace(string(out)))
	}
	return env
}

// calcModule writes a Go module whose Add has a bug.
func calcModule(t *testing.T) string {
	t.Helper()
	ws := workspace(t)
	writeFile(t, ws, "go.mod", "module example.com/calc\n\ngo 1.22\n")
	writeFile(t, ws, "calc.go", "package calc\n\n// Add returns a + b.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n")
	writeFile(t, ws, "calc_test.go", "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n")
	return ws
}

// goConfig writes an operator configuration with real go vet / go test checks.
func goConfig(t *testing.T, ws, url string, extra string) string {
	t.Helper()
	return writeFile(t, t.TempDir(), "ops.toml", `workspace_dir = `+tomlString(ws)+`
[ollama]
base_url = `+tomlString(url)+`
[agent]
planner = "always" # the test scripts a planner turn
max_cycles = 2
[checks.vet]
cmd = ["go", "vet", "./..."]
kind = "lint"
filetypes = ["go"]
[checks.test]
cmd = ["go", "test", "./..."]
kind = "test"
filetypes = ["go"]
`+extra)
}

func call(id, name string, args any) ollamatest.Call {
	b, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return ollamatest.Call{ID: id, Name: name, Arguments: string(b)}
}

func edit(id, old, new string) ollamatest.Turn {
	return ollamatest.Turn{ToolCalls: []ollamatest.Call{call(id, "file_edit", map[string]any{"path": "calc.go", "old_string": old, "new_string": new})}}
}

const approve = `{"approved": true, "summary": "Add adds.", "issues": []}`

func TestRunVerifiesARealGoModule(t *testing.T) {
	t.Parallel()
	ws := calcModule(t)
	srv := ollamatest.New(t,
		ollamatest.Turn{Content: "Plan: make Add add."},
		edit("c1", "return a - b", "return a + b"),
		ollamatest.Turn{Content: "Fixed."},
		ollamatest.Turn{Content: "```json\n" + approve + "\n```"},
	)
	r := runFlow(t, ws, goEnv(t), "run", "--trusted", "--config", goConfig(t, ws, srv.URL, ""), "fix", "Add")
	m := decode(t, r)
	if r.code != 0 || m["status"] != "ok" || m["verified"] != true {
		t.Fatalf("flow run = %d %v\nstderr: %s", r.code, m, r.stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "calc.go")); !strings.Contains(string(got), "return a + b") {
		t.Errorf("calc.go = %q, want the fix", got)
	}
	if m["task"] != "fix Add" || m["cycles"] != 1.0 || srv.Unexpected() != 0 {
		t.Errorf("report task/cycles = %v/%v, unexpected model calls %d", m["task"], m["cycles"], srv.Unexpected())
	}
	if r.stderr != "" {
		t.Errorf("stderr = %q, want no progress when stderr is not a terminal", r.stderr)
	}
}

func TestRunRepairsAWrongFix(t *testing.T) {
	t.Parallel()
	ws := calcModule(t)
	srv := ollamatest.New(t,
		ollamatest.Turn{Content: "Plan: make Add add."},
		edit("c1", "return a - b", "return a * b"),
		ollamatest.Turn{Content: "Fixed, I think."},
		edit("c2", "return a * b", "return a + b"),
		ollamatest.Turn{Content: "Fixed for real."},
		ollamatest.Turn{Content: approve},
	)
	r := runFlow(t, ws, goEnv(t), "run", "--trusted", "-c", goConfig(t, ws, srv.URL, ""), "fix Add")
	m := decode(t, r)
	if r.code != 0 || m["status"] != "ok" || m["cycles"] != 2.0 {
		t.Fatalf("flow run = %d %v\nstderr: %s", r.code, m, r.stderr)
	}
	history := m["verification_history"].([]any)
	if len(history) != 2 || history[0].(map[string]any)["status"] != "failed" || history[1].(map[string]any)["status"] != "ok" {
		t.Errorf("verification_history statuses = %v, want failed then ok", history)
	}
	// The first cycle's check failed, so no reviewer was asked; the second
	// cycle's coder (the fourth model call) is told what failed.
	reqs := srv.Chats()
	if len(reqs) != 6 {
		t.Fatalf("model calls = %d, want 6", len(reqs))
	}
	roles := m["roles"].([]any)
	if r := roles[2].(map[string]any); r["role"] != "reviewer" || r["status"] != "skipped" {
		t.Errorf("first cycle's reviewer = %v, want skipped", r)
	}
	// It sees the failure and the code as it is now, not the last coder's
	// account of it.
	user := messageContent(t, reqs[3].Body, 1)
	for _, want := range []string{"Add(2, 3) = 6, want 5", "return a * b"} {
		if !strings.Contains(user, want) {
			t.Errorf("second coder's task message lacks %q:\n%s", want, user)
		}
	}
	if strings.Contains(user, "Fixed, I think.") {
		t.Errorf("second coder's task message repeats the last coder's account:\n%s", user)
	}
}

// messageContent returns the content of message i of a recorded chat body.
func messageContent(t *testing.T, body map[string]any, i int) string {
	t.Helper()
	msgs, _ := body["messages"].([]any)
	if len(msgs) <= i {
		t.Fatalf("request has %d messages, want more than %d", len(msgs), i)
	}
	s, _ := msgs[i].(map[string]any)["content"].(string)
	return s
}

// TestRunAdversarialModel scripts a model whose tool calls try to escape the
// workspace, write protected files, send oversized or malformed arguments,
// call unknown tools and reuse ids. Every call must get an error result with
// its own id, nothing outside the workspace or under .git may change, and
// the run must not verify.
func TestRunAdversarialModel(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	writeFile(t, outside, "secret.txt", "outside\n")
	ws := calcModule(t)
	writeFile(t, ws, ".git/config", "[core]\n")
	writeFile(t, ws, "config.toml", "# project config\n")
	if err := os.Symlink(outside, filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(ws, "secret-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(outside, "secret.txt"), filepath.Join(ws, "hard")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(ws, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfgDir := t.TempDir()
	srv := ollamatest.New(t)
	// The 300 kB argument must reach the tool (not the context budget, nor
	// the prompt budget of the context window).
	cfg := goConfig(t, ws, srv.URL, "")
	body, _ := os.ReadFile(cfg)
	edited := strings.Replace(string(body), "max_cycles = 2", "max_cycles = 1\nmax_context_chars = 1000000", 1)
	edited = strings.Replace(edited, "[ollama]\n", "[ollama]\ncontext_length = 131072\n", 1)
	os.WriteFile(cfg, []byte(edited), 0o644)
	if err := os.Rename(cfg, filepath.Join(cfgDir, "ops.toml")); err != nil {
		t.Fatal(err)
	}
	cfg = filepath.Join(cfgDir, "ops.toml")

	escapes := []string{
		"/etc/passwd", outside + "/secret.txt", "../x", "a/../../x", "./../x", "C:/x", `a\b`, "\\\\host\\share",
		".git/config", ".GIT/config", "sub/.git/x", "link/secret.txt", "link/new.txt", "secret-link", "hard",
		"fifo", "config.toml", ".flow.toml", strings.Repeat("a/", 33) + "x", strings.Repeat("x", 1025), "a\x00b", "",
	}
	writeID := func(p string) string {
		for i, q := range escapes {
			if q == p {
				return "w" + string(rune('a'+i))
			}
		}
		return ""
	}
	var calls []ollamatest.Call
	for _, p := range escapes {
		id := writeID(p)
		calls = append(calls, call(id, "file_write", map[string]any{"path": p, "content": "pwned"}))
		calls = append(calls, call("r"+id, "file_read", map[string]any{"path": p}))
	}
	calls = append(calls,
		call("big", "file_write", map[string]any{"path": "big.txt", "content": strings.Repeat("x", 300_000)}),
		ollamatest.Call{ID: "badjson", Name: "file_read", Arguments: `{"path": "calc.go"`},
		ollamatest.Call{ID: "unknown", Name: "shell_exec", Arguments: `{"cmd": "touch pwned"}`},
		call("extra", "file_read", map[string]any{"path": "calc.go", "cwd": "/"}),
		call("dup", "file_write", map[string]any{"path": "dup1.txt", "content": "x"}),
		call("dup", "file_write", map[string]any{"path": "dup2.txt", "content": "x"}),
		call("cfg", "file_write", map[string]any{"path": cfg, "content": "[checks.x]\ncmd=[\"touch\",\"pwned\"]\n"}),
	)
	srv.Enqueue(
		ollamatest.Turn{Content: "Plan."},
		ollamatest.Turn{ToolCalls: calls},
		ollamatest.Turn{Content: "Done."},
		ollamatest.Turn{Content: approve},
	)
	before := snapshotTree(t, outside)
	cfgBefore, _ := os.ReadFile(cfg)
	r := runFlow(t, ws, goEnv(t), "run", "--trusted", "-c", cfg, "escape")
	m := decode(t, r)
	if m["verified"] == true || m["status"] == "ok" || r.code != 1 {
		t.Errorf("flow run = %d %v %v, want exit 1 and not verified", r.code, m["status"], m["verified"])
	}
	// Every call got exactly one error result with its own id.
	reqs := srv.Chats()
	if len(reqs) < 3 {
		t.Fatalf("model calls = %d, want at least 3", len(reqs))
	}
	results := toolResults(t, reqs[2].Body)
	if len(results) != len(calls) {
		t.Fatalf("tool results = %d, want %d (one per call)", len(results), len(calls))
	}
	seen := map[string]bool{}
	for i, res := range results {
		if seen[res.id] {
			t.Errorf("tool result id %q repeated", res.id)
		}
		seen[res.id] = true
		if calls[i].ID == "r"+writeID("config.toml") {
			continue // protected files are read-only, not secret
		}
		if !strings.Contains(res.content, `"status":"error"`) {
			t.Errorf("call %d (%s) result = %s, want an error", i, calls[i].ID, res.content)
		}
	}
	for _, c := range calls {
		if c.ID != "dup" && !seen[c.ID] {
			t.Errorf("no tool result for call id %q", c.ID)
		}
	}
	if after := snapshotTree(t, outside); after != before {
		t.Errorf("outside directory changed:\nbefore %s\nafter  %s", before, after)
	}
	if got, _ := os.ReadFile(filepath.Join(ws, ".git/config")); string(got) != "[core]\n" {
		t.Errorf(".git/config = %q, changed", got)
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "config.toml")); string(got) != "# project config\n" {
		t.Errorf("config.toml = %q, changed", got)
	}
	if got, _ := os.ReadFile(cfg); string(got) != string(cfgBefore) {
		t.Errorf("operator config changed")
	}
	for _, f := range []string{"big.txt", "dup1.txt", "dup2.txt", "pwned", ".flow.toml"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err == nil {
			t.Errorf("%s was created", f)
		}
	}
}

type toolResult struct{ id, content string }

// toolResults returns the tool messages of a recorded chat body.
func toolResults(t *testing.T, body map[string]any) []toolResult {
	t.Helper()
	var out []toolResult
	for _, msg := range body["messages"].([]any) {
		m := msg.(map[string]any)
		if m["role"] == "tool" {
			id, _ := m["tool_call_id"].(string)
			c, _ := m["content"].(string)
			out = append(out, toolResult{id, c})
		}
	}
	return out
}

// snapshotTree describes every file under dir: path, mode, size, content.
func snapshotTree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		b.WriteString(p + " " + info.Mode().String())
		if info.Mode().IsRegular() {
			data, _ := os.ReadFile(p)
			b.WriteString(" " + string(data))
		}
		b.WriteString("\n")
		return nil
	})
	return b.String()
}

// TestRunInterrupted sends SIGINT during a slow model turn and during a
// running check: exit 130, the check's process group gone, the edits
// written so far listed on stderr, and on stdout the one JSON report with
// status interrupted — the written file with its diff and the run id,
// which the journal records too and flow undo reverts.
func TestRunInterrupted(t *testing.T) {
	t.Parallel()
	t.Run("slow model turn", func(t *testing.T) {
		t.Parallel()
		ws := calcModule(t)
		srv := ollamatest.New(t, ollamatest.Turn{Content: "never", Delay: time.Minute})
		cmd, out, errb := startFlow(t, ws, goEnv(t), "run", "--trusted", "-c", goConfig(t, ws, srv.URL, ""), "task")
		waitRequests(t, srv, 1)
		cmd.Process.Signal(syscall.SIGINT)
		code := waitExit(t, cmd)
		rep := interruptedReport(t, code, out.String(), errb.String())
		if len(rep.ChangedFiles) != 0 || !strings.Contains(rep.Reason, "it wrote no file") {
			t.Errorf("report = files %v, reason %q; want none written, said so", rep.ChangedFiles, rep.Reason)
		}
	})
	t.Run("running check", func(t *testing.T) {
		t.Parallel()
		ws := calcModule(t)
		srv := ollamatest.New(t,
			ollamatest.Turn{Content: "Plan."},
			edit("c1", "return a - b", "return a + b"),
			ollamatest.Turn{ToolCalls: []ollamatest.Call{call("c2", "flow_check", map[string]any{"name": "slow"})}},
		)
		// Optional, so that the baseline before the first edit leaves it
		// out and the interrupt hits the coder's flow_check of it.
		cfg := goConfig(t, ws, srv.URL, `[checks.slow]
cmd = ["sh", "-c", "(sleep 1; touch grandchild-wrote) & touch started; sleep 30"]
required = false
`)
		env := goEnv(t)
		cmd, out, errb := startFlow(t, ws, env, "run", "--trusted", "-c", cfg, "task")
		waitFor(t, filepath.Join(ws, "started"))
		cmd.Process.Signal(syscall.SIGINT)
		code := waitExit(t, cmd)
		rep := interruptedReport(t, code, out.String(), errb.String())
		if !strings.Contains(errb.String(), "calc.go") {
			t.Errorf("stderr %q does not list calc.go as written", errb.String())
		}
		if !slices.Equal(rep.ChangedFiles, []string{"calc.go"}) || len(rep.Diffs) != 1 || !strings.Contains(rep.Diffs[0].Diff, "+\treturn a + b") ||
			rep.Cycles != 1 || rep.ToolCalls < 2 || !strings.Contains(rep.Reason, "flow undo "+rep.RunID) {
			t.Errorf("report = files %v, diffs %v, cycles %d, tool calls %d, reason %q; want calc.go with its diff, the counts, and how to undo",
				rep.ChangedFiles, rep.Diffs, rep.Cycles, rep.ToolCalls, rep.Reason)
		}
		time.Sleep(1500 * time.Millisecond)
		if _, err := os.Stat(filepath.Join(ws, "grandchild-wrote")); err == nil {
			t.Error("the check's grandchild survived the interrupt")
		}
		// The journal holds the same report, and undo reverts the edit.
		st := runFlow(t, ws, env, "status", "-c", cfg)
		if !strings.Contains(st.stdout, `"status":"interrupted"`) || !strings.Contains(st.stdout, rep.RunID) {
			t.Errorf("flow status after the interrupt = %s; want the last report interrupted, run %s", st.stdout, rep.RunID)
		}
		if u := runFlow(t, ws, env, "undo", "-c", cfg, rep.RunID); u.code != 0 {
			t.Errorf("flow undo %s = %d %s %s", rep.RunID, u.code, u.stdout, u.stderr)
		}
		if data, _ := os.ReadFile(filepath.Join(ws, "calc.go")); !strings.Contains(string(data), "return a - b") {
			t.Errorf("calc.go after undo = %q, want the original", data)
		}
	})
}

// interruptedReport checks an interrupted flow run's exit and output: 130,
// the interrupt on stderr, exactly one JSON object on stdout with status
// interrupted and a run id; it returns the report.
func interruptedReport(t *testing.T, code int, stdout, stderr string) report.Run {
	t.Helper()
	if code != 130 || !strings.Contains(stderr, "interrupted") {
		t.Errorf("flow run after SIGINT = (%d, stderr %q), want 130 and interrupted", code, stderr)
	}
	var rep report.Run
	dec := json.NewDecoder(strings.NewReader(stdout))
	if err := dec.Decode(&rep); err != nil || dec.More() {
		t.Fatalf("stdout after SIGINT = %q (%v), want exactly one JSON object", stdout, err)
	}
	if rep.Status != report.StatusInterrupted || rep.Verified || rep.RunID == "" || !strings.Contains(rep.Reason, "interrupted by SIGINT") {
		t.Errorf("report = status %q, verified %v, run %q, reason %q; want interrupted by SIGINT with the run id", rep.Status, rep.Verified, rep.RunID, rep.Reason)
	}
	return rep
}

// startFlow starts flow in the background.
func startFlow(t *testing.T, dir string, env []string, args ...string) (*exec.Cmd, *strings.Builder, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(flowBin, args...)
	cmd.Dir, cmd.Env = dir, env
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, &out, &errb
}

// waitExit waits (bounded) for cmd and returns its exit code.
func waitExit(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("flow did not exit within 30 s")
		return -1
	}
}

// waitRequests waits (bounded) until the fake model has seen n chat
// requests.
func waitRequests(t *testing.T, srv *ollamatest.Server, n int) {
	t.Helper()
	for i := 0; i < 400; i++ {
		if len(srv.Chats()) >= n {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("the fake model never got %d requests", n)
}

// TestRunProgressOnTerminal: progress goes to stderr only when it is a
// terminal (here a pseudo-terminal from script(1)), and --quiet silences it.
func TestRunProgressOnTerminal(t *testing.T) {
	t.Parallel()
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) not installed")
	}
	for _, quiet := range []bool{false, true} {
		ws := calcModule(t)
		srv := ollamatest.New(t,
			ollamatest.Turn{Content: "Plan.", PromptTokens: 321, CompletionTokens: 12, PromptEvalDuration: 250 * time.Millisecond},
			fileEdit("c1", "calc.go", "a - b", "a + b"),
			ollamatest.Turn{Content: "Fixed Add."},
			ollamatest.Turn{Content: approve},
		)
		cfg := plainConfig(t, ws, srv.URL)
		line := flowBin + " run --trusted -c " + cfg + " task"
		if quiet {
			line += " --quiet"
		}
		// stdout to a file, stderr to the pseudo-terminal that script records.
		out := filepath.Join(t.TempDir(), "report.json")
		cmd := exec.Command(script, "-qec", line+" >"+out, "/dev/null")
		cmd.Env = hermeticEnv(t)
		tty, err := cmd.Output()
		if err != nil {
			t.Fatalf("script: %v\n%s", err, tty)
		}
		report, _ := os.ReadFile(out)
		if !strings.Contains(string(report), `"run_id"`) {
			t.Errorf("stdout = %q, want the report", report)
		}
		shown := strings.Contains(string(tty), "planner") && strings.Contains(string(tty), "reviewer")
		if shown == quiet {
			t.Errorf("quiet=%v: terminal shows %q", quiet, tty)
		}
		// Every model call is in the report, and on the terminal with its
		// tokens and done reason.
		if !strings.Contains(string(report), `{"kind":"model_call","role":"planner","cycle":0,"turn":1,"status":"ok","duration_ms":`) ||
			!strings.Contains(string(report), `"prompt_tokens":321,"completion_tokens":12,"done_reason":"stop","native_tool_calls":0,"text_tool_calls":0,"prompt_eval_ms":250,"prompt_chars":`) {
			t.Errorf("report = %s, want the planner's model call with its tokens", report)
		}
		if !quiet && !strings.Contains(string(tty), "(321+12 tokens, prompt 250ms, stop)") {
			t.Errorf("terminal shows %q, want the planner's model call with its tokens", tty)
		}
	}
}
