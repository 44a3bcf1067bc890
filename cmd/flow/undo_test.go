package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"flow/internal/test/ollamatest"
)

// plainConfig writes an operator configuration with a trivial lint check.
func plainConfig(t *testing.T, ws, url string) string {
	t.Helper()
	return writeFile(t, t.TempDir(), "ops.toml", `workspace_dir = `+tomlString(ws)+`
[ollama]
base_url = `+tomlString(url)+`
[agent]
planner = "always" # the test scripts a planner turn
max_cycles = 1
[checks.lint]
cmd = ["true"]
kind = "lint"
filetypes = ["*"]
[verify]
# The test is about undo, not about evidence: its check passes
# before the run too, so the task is declared to change no behaviour.
behaviour_preserving = true
`)
}

func write(id, path, content string) ollamatest.Call {
	return call(id, "file_write", map[string]any{"path": path, "content": content})
}

type fileState struct {
	data string
	mode os.FileMode
}

func stateOf(t *testing.T, ws string, names ...string) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	for _, n := range names {
		p := filepath.Join(ws, n)
		st, err := os.Stat(p)
		if err != nil {
			out[n] = fileState{data: "<absent>"}
			continue
		}
		data, _ := os.ReadFile(p)
		out[n] = fileState{string(data), st.Mode().Perm()}
	}
	return out
}

func TestUndoRestoresARun(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	writeFile(t, ws, "a.txt", "a\n")
	writeFile(t, ws, "b.sh", "#!/bin/sh\n")
	writeFile(t, ws, "c/secret.txt", "c\n")
	os.Chmod(filepath.Join(ws, "b.sh"), 0o755)
	os.Chmod(filepath.Join(ws, "c/secret.txt"), 0o600)
	names := []string{"a.txt", "b.sh", "c/secret.txt", "new/d.txt"}
	before := stateOf(t, ws, names...)

	srv := ollamatest.New(t,
		ollamatest.Turn{Content: "Plan."},
		ollamatest.Turn{ToolCalls: []ollamatest.Call{
			write("1", "a.txt", "A\n"), write("2", "b.sh", "#!/bin/sh\necho hi\n"),
			write("3", "c/secret.txt", "C\n"), write("4", "new/d.txt", "created\n"),
		}},
		ollamatest.Turn{ToolCalls: []ollamatest.Call{write("5", "a.txt", "AA\n")}},
		ollamatest.Turn{Content: "Done."},
		ollamatest.Turn{Content: approve},
	)
	cfg := plainConfig(t, ws, srv.URL)
	env := hermeticEnv(t)
	r := runFlow(t, ws, env, "run", "--trusted", "-c", cfg, "edit")
	if m := decode(t, r); m["status"] != "ok" || len(m["changed_files"].([]any)) != 4 {
		t.Fatalf("flow run = %d %v", r.code, m)
	}
	runID := decode(t, r)["run_id"].(string)

	// A user edit after the run: reported as a conflict and left alone.
	writeFile(t, ws, "b.sh", "#!/bin/sh\necho mine\n")
	os.Chmod(filepath.Join(ws, "b.sh"), 0o700)
	r = runFlow(t, ws, env, "undo", "-c", cfg)
	m := decode(t, r)
	if r.code != 1 || m["status"] != "conflict" || m["run_id"] != runID {
		t.Fatalf("flow undo with a conflict = %d %v, want 1 and conflict for %s", r.code, m, runID)
	}
	got := stateOf(t, ws, names...)
	if got["b.sh"] != (fileState{"#!/bin/sh\necho mine\n", 0o700}) {
		t.Errorf("b.sh = %+v, want the user's version left exactly", got["b.sh"])
	}
	for _, n := range []string{"a.txt", "c/secret.txt", "new/d.txt"} {
		if got[n] != before[n] {
			t.Errorf("%s after undo = %+v, want %+v", n, got[n], before[n])
		}
	}
	conflicts := m["conflicts"].([]any)
	if len(conflicts) != 1 || conflicts[0].(map[string]any)["path"] != "b.sh" {
		t.Errorf("conflicts = %v, want b.sh", conflicts)
	}

	// Put b.sh back as the run left it: now everything is restored.
	writeFile(t, ws, "b.sh", "#!/bin/sh\necho hi\n")
	os.Chmod(filepath.Join(ws, "b.sh"), 0o755)
	r = runFlow(t, ws, env, "undo", runID, "-c", cfg)
	if m := decode(t, r); r.code != 0 || m["status"] != "ok" {
		t.Fatalf("second flow undo = %d %v, want ok", r.code, m)
	}
	if got := stateOf(t, ws, names...); got["b.sh"] != before["b.sh"] || got["new/d.txt"].data != "<absent>" {
		t.Errorf("after undo: %+v, want %+v", got, before)
	}
	// A third undo is a no-op that says so.
	r = runFlow(t, ws, env, "undo", "-c", cfg)
	if m := decode(t, r); r.code != 0 || m["already_undone"] != true || !strings.Contains(m["message"].(string), "already undone") {
		t.Errorf("third flow undo = %d %v, want a no-op saying so", r.code, m)
	}
	// Status shows the last report from this other process.
	r = runFlow(t, ws, env, "status", "-c", cfg)
	if last := decode(t, r)["last_report"].(map[string]any); last["run_id"] != runID {
		t.Errorf("status last_report = %v, want run %s", last, runID)
	}
}

// TestUndoAfterSIGKILL kills flow between two scripted writes: undo must
// restore what was journalled and written, and report ok.
func TestUndoAfterSIGKILL(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	writeFile(t, ws, "a.txt", "a\n")
	writeFile(t, ws, "b.txt", "b\n")
	srv := ollamatest.New(t,
		ollamatest.Turn{Content: "Plan."},
		ollamatest.Turn{ToolCalls: []ollamatest.Call{write("1", "a.txt", strings.Repeat("A", 200_000)), write("2", "n.txt", "new\n")}},
		ollamatest.Turn{ToolCalls: []ollamatest.Call{write("3", "b.txt", "B\n")}, Delay: time.Minute},
	)
	env := hermeticEnv(t)
	cfg := plainConfig(t, ws, srv.URL)
	cmd, _, _ := startFlow(t, ws, env, "run", "--trusted", "-c", cfg, "edit")
	waitRequests(t, srv, 3) // the writes of turn 2 are done; turn 3 hangs
	cmd.Process.Signal(syscall.SIGKILL)
	waitExit(t, cmd)
	if got, _ := os.ReadFile(filepath.Join(ws, "a.txt")); len(got) != 200_000 {
		t.Fatalf("a.txt has %d bytes before undo, want the run's 200000", len(got))
	}
	r := runFlow(t, ws, env, "undo", "-c", cfg)
	if m := decode(t, r); r.code != 0 || m["status"] != "ok" {
		t.Fatalf("flow undo after SIGKILL = %d %v", r.code, m)
	}
	got := stateOf(t, ws, "a.txt", "b.txt", "n.txt")
	if got["a.txt"].data != "a\n" || got["b.txt"].data != "b\n" || got["n.txt"].data != "<absent>" {
		t.Errorf("after undo: %+v, want the originals and n.txt gone", got)
	}
}

// TestConcurrentRunsOneWorkspace starts two flow runs on one workspace: one
// runs, the other is busy and names the holder's pid; a run on another
// workspace is not blocked.
func TestConcurrentRunsOneWorkspace(t *testing.T) {
	t.Parallel()
	ws, other := workspace(t), workspace(t)
	slow := ollamatest.Turn{Content: "Plan.", Delay: 2 * time.Second}
	// Each run writes a file: a run that changes nothing does not verify.
	edit := ollamatest.Turn{ToolCalls: []ollamatest.Call{write("c1", "note.txt", "done\n")}}
	srv := ollamatest.New(t, slow, edit, ollamatest.Turn{Content: "Done."}, ollamatest.Turn{Content: approve})
	srvOther := ollamatest.New(t, slow, edit, ollamatest.Turn{Content: "Done."}, ollamatest.Turn{Content: approve})
	env := hermeticEnv(t)
	cfg, cfgOther := plainConfig(t, ws, srv.URL), plainConfig(t, other, srvOther.URL)

	a, aout, _ := startFlow(t, ws, env, "run", "--trusted", "-c", cfg, "one")
	b, bout, _ := startFlow(t, ws, env, "run", "--trusted", "-c", cfg, "two")
	c, cout, _ := startFlow(t, other, env, "run", "--trusted", "-c", cfgOther, "three")
	codes := []int{waitExit(t, a), waitExit(t, b), waitExit(t, c)}
	outs := []string{aout.String(), bout.String(), cout.String()}
	pids := []int{a.Process.Pid, b.Process.Pid}

	busy := -1
	for i := 0; i < 2; i++ {
		if strings.Contains(outs[i], `"status":"busy"`) {
			if busy != -1 {
				t.Fatalf("both runs were busy: %v", outs)
			}
			busy = i
		}
	}
	if busy == -1 {
		t.Fatalf("neither run was busy: %v", outs)
	}
	holder := pids[1-busy]
	if codes[busy] != 1 || !strings.Contains(outs[busy], "process "+itoa(holder)) {
		t.Errorf("busy run = %d %s, want exit 1 naming pid %d", codes[busy], outs[busy], holder)
	}
	if codes[1-busy] != 0 || codes[2] != 0 {
		t.Errorf("the running flows exited %d and %d, want 0 (%v)", codes[1-busy], codes[2], outs)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
