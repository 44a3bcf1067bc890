package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"flow/cmd/flow/internal/tui"
	"flow/internal/test/ollamatest"
	flowmcp "flow/mcp"
	"flow/runtime/job"
)

// TestEveryFrontEndGetsTheTypedBusy: while a run of the real runtime
// service holds the workspace (its planner waits on the scripted model),
// starting another job from each front end gets the runtime's typed busy
// refusal, worded by the runtime: the MCP server's flow_run, the TUI's line
// mode (task, /check, /undo) and, from another process, `flow run`, which
// the workspace lock refuses naming this process. Then cancel-all stops the
// run. (The Neovim host's busy answer is tested in plugin with the same
// job system.)
func TestEveryFrontEndGetsTheTypedBusy(t *testing.T) {
	ws := workspace(t)
	writeFile(t, ws, "a.go", "package a\n")
	srv := ollamatest.New(t, ollamatest.Turn{Delay: 10 * time.Minute, Content: "plan"})
	cfg := writeFile(t, t.TempDir(), "ops.toml", `workspace_dir = `+tomlString(ws)+`
[ollama]
base_url = `+tomlString(srv.URL)+`
[checks.lint]
cmd = ["true"]
kind = "lint"
filetypes = ["go"]
`)
	environ := hermeticEnv(t)
	vars := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	e := &env{opts: &options{configFile: cfg, trusted: true}, stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard,
		getenv: func(k string) string { return vars[k] }}
	rt, err := openRuntime(e, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	svc := rt.service(nil)
	run, err := svc.StartRun(t.Context(), "first", nil)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute) // a hang guard, not a timing assertion
	for len(srv.Chats()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the run never reached the model")
		}
		time.Sleep(10 * time.Millisecond)
	}
	want := (&job.BusyError{Kind: job.KindRun, ID: run.ID}).Error()

	// MCP: a flow_run while the run is in progress.
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	mcpSrv := flowmcp.NewServer(serviceRuntime{svc}, flowmcp.Options{Version: "test"})
	served := make(chan error, 1)
	go func() { served <- mcpSrv.Serve(context.Background(), inR, outW); outW.Close() }()
	replies := make(chan []byte, 16)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 8<<20)
		for sc.Scan() {
			replies <- append([]byte(nil), sc.Bytes()...)
		}
		close(replies)
	}()
	send := func(s string) {
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"flow_run","arguments":{"task":"second"}}}`)
	for line := range replies {
		var m struct {
			ID     int `json:"id"`
			Result struct {
				StructuredContent map[string]any `json:"structuredContent"`
				IsError           bool           `json:"isError"`
			} `json:"result"`
		}
		if json.Unmarshal(line, &m) != nil || m.ID != 2 {
			continue
		}
		if sc := m.Result.StructuredContent; sc["status"] != "busy" || sc["error"] != want || !m.Result.IsError {
			t.Errorf("MCP flow_run during a run = %s, want busy saying %q", line, want)
		}
		break
	}
	inW.Close()
	<-served
	for range replies {
	}

	// The TUI's line mode: a task, /check and /undo.
	var out strings.Builder
	tui.Run(t.Context(), svc, tui.Options{}, strings.NewReader("second\n/check\n/undo\n"), &out)
	answers := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(answers) != 3 {
		t.Fatalf("line mode answered %d lines, want 3:\n%s", len(answers), out.String())
	}
	for i, a := range answers {
		var m map[string]any
		if json.Unmarshal([]byte(a), &m) != nil || m["status"] != "busy" || m["error"] != want {
			t.Errorf("line mode answer %d = %s, want busy saying %q", i+1, a, want)
		}
	}

	// Another flow process: `flow run` is refused by the workspace lock.
	res := runFlow(t, ws, environ, "--config", cfg, "--trusted", "run", "elsewhere")
	other := (&job.BusyError{PID: os.Getpid()}).Error()
	var rep map[string]any
	if res.code != 1 || json.Unmarshal([]byte(res.stdout), &rep) != nil || rep["status"] != "busy" || rep["error"] != other {
		t.Errorf("flow run from another process = %d %s, want exit 1 and busy saying %q", res.code, res.stdout, other)
	}

	if n := svc.CancelAll(); n != 1 {
		t.Errorf("CancelAll() = %d, want 1", n)
	}
	if _, status := run.Result(); status != "cancelled" {
		t.Errorf("the run after CancelAll = %s, want cancelled", status)
	}
	if !svc.Wait(t.Context()) || svc.Busy() != nil {
		t.Error("the workspace is still busy after the cancelled run")
	}
}
