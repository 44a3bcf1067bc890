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

// TestModelCannotReachFlowState: with the state directory inside the
// workspace (a workspace at $HOME), a model's file_write to the workspace's
// lock file, file_read of the journal and file_list of the workspace are
// refused or hide flow's files, and a second run while the first is still
// working is busy.
func TestModelCannotReachFlowState(t *testing.T) {
	t.Parallel()
	home := workspace(t)
	writeFile(t, home, "a.go", "package a\n")
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C.UTF-8",
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"FLOW_LOG_FILE=" + filepath.Join(home, "flow.log"),
	}
	writeFile(t, home, "flow.log", "")
	var st syscall.Stat_t
	if err := syscall.Stat(home, &st); err != nil {
		t.Fatal(err)
	}
	lock := ".local/state/flow/locks/" + strconv.FormatUint(st.Dev, 16) + "-" + strconv.FormatUint(st.Ino, 16) + ".lock"
	writes := []ollamatest.Call{
		call("w1", "file_write", map[string]any{"path": lock, "content": "0\n"}),
		call("w2", "file_write", map[string]any{"path": strings.ToUpper(".local/state/flow") + "/x", "content": "x"}),
		call("r1", "file_read", map[string]any{"path": lock}),
		call("r2", "file_read", map[string]any{"path": "flow.log"}),
		call("r3", "file_read", map[string]any{"path": ".config/flow/config.toml"}),
		call("l1", "file_list", map[string]any{"path": "."}),
	}
	srv := ollamatest.New(t,
		ollamatest.Turn{Content: "Plan: break the lock."},
		ollamatest.Turn{ToolCalls: writes},
		ollamatest.Turn{Content: "never", Delay: time.Minute},
	)
	cfg := writeFile(t, home, ".config/flow/config.toml", "[ollama]\nbase_url = "+tomlString(srv.URL)+"\n[agent]\nplanner = \"always\"\nmax_cycles = 1\n")
	first, out, errb := startFlow(t, home, env, "run", "--trusted", "-w", home, "task")
	waitRequests(t, srv, 3) // the third request is the one after the tool calls
	if _, err := os.Stat(filepath.Join(home, lock)); err != nil {
		t.Fatalf("lock file: %v", err)
	}

	second := runFlow(t, home, env, "run", "--trusted", "-w", home, "-c", cfg, "task two")
	m := decode(t, second)
	if second.code != 1 || m["status"] != "busy" {
		t.Errorf("second flow run while the first works = %d %v, want 1 and busy\nstderr: %s", second.code, m, second.stderr)
	}

	results := srv.Chats()[2].Body["messages"].([]any)
	for _, id := range []string{"w1", "w2", "r1", "r2", "r3"} {
		if text := toolMessage(t, results, id); !strings.Contains(text, "off limits to file tools") {
			t.Errorf("tool call %s = %s, want refused as flow's own state", id, text)
		}
	}
	if text := toolMessage(t, results, "l1"); strings.Contains(text, ".local/") || strings.Contains(text, "flow.log") || strings.Contains(text, "config.toml") || !strings.Contains(text, "a.go") {
		t.Errorf("file_list . = %s, want a.go and none of flow's files", text)
	}
	first.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, first); code != 130 {
		t.Errorf("first flow run after SIGTERM = %d (stdout %q, stderr %q), want 130", code, out.String(), errb.String())
	}
}

// toolMessage returns the content of the tool message answering call id.
func toolMessage(t *testing.T, messages []any, id string) string {
	t.Helper()
	for _, m := range messages {
		msg := m.(map[string]any)
		if msg["role"] == "tool" && msg["tool_call_id"] == id {
			return msg["content"].(string)
		}
	}
	t.Fatalf("no tool result for %s in %v", id, messages)
	return ""
}
