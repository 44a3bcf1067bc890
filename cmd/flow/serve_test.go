package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mcpProc is a `flow serve` subprocess driven over its stdio.
type mcpProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string // stdout lines
	stderr *strings.Builder
	all    []string // every stdout line, for the protocol-only check
}

func startServe(t *testing.T, dir string, env []string, args ...string) *mcpProc {
	t.Helper()
	cmd := exec.Command(flowBin, append([]string{"serve"}, args...)...)
	cmd.Dir, cmd.Env = dir, env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &mcpProc{t: t, cmd: cmd, stdin: stdin, lines: make(chan string, 100), stderr: &strings.Builder{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	return p
}

func (p *mcpProc) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatalf("write %q: %v", line, err)
	}
}

// recv returns the next stdout message, decoded.
func (p *mcpProc) recv() map[string]any {
	p.t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			p.t.Fatalf("flow serve closed stdout; stderr: %s", p.stderr)
		}
		p.all = append(p.all, line)
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil || m["jsonrpc"] != "2.0" {
			p.t.Fatalf("stdout line is not a JSON-RPC message: %q", line)
		}
		return m
	case <-time.After(60 * time.Second):
		p.t.Fatal("no reply from flow serve within 60 s")
		return nil
	}
}

// recvID skips notifications and returns the reply to id.
func (p *mcpProc) recvID(id float64) (reply map[string]any, notes []map[string]any) {
	p.t.Helper()
	for {
		m := p.recv()
		if _, isReply := m["id"]; !isReply {
			notes = append(notes, m)
			continue
		}
		if m["id"] != id {
			p.t.Fatalf("reply id = %v, want %v: %v", m["id"], id, m)
		}
		return m, notes
	}
}

func (p *mcpProc) initialize() {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
	r, _ := p.recvID(0)
	if v := r["result"].(map[string]any)["protocolVersion"]; v != "2025-06-18" {
		p.t.Fatalf("negotiated version = %v, want 2025-06-18", v)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// exit closes stdin and returns the exit code.
func (p *mcpProc) exit() int {
	p.t.Helper()
	p.stdin.Close()
	for line := range p.lines {
		p.all = append(p.all, line)
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil || m["jsonrpc"] != "2.0" {
			p.t.Errorf("stdout line is not a JSON-RPC message: %q", line)
		}
	}
	return waitExit(p.t, p.cmd)
}

func errorCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

func TestServeSession(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	cfg := writeFile(t, t.TempDir(), "ops.toml", `workspace_dir = `+tomlString(ws)+`
[checks.lint]
cmd = ["sh", "-c", "echo noisy check output; echo more >&2; touch checked"]
kind = "lint"
`)
	p := startServe(t, t.TempDir(), hermeticEnv(t), "--trusted", "-c", cfg)

	// Before initialize.
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if r, _ := p.recvID(1); errorCode(r) != -32002 {
		t.Errorf("tools/list before initialize = %v, want -32002", r)
	}
	p.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if r, _ := p.recvID(2); r["result"] == nil {
		t.Errorf("ping before initialize = %v, want {}", r)
	}
	p.send(`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`)
	if r, _ := p.recvID(3); errorCode(r) != -32602 {
		t.Errorf("initialize without clientInfo = %v, want -32602", r)
	}
	p.send(`{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":[],"capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	if r, _ := p.recvID(9); errorCode(r) != -32602 {
		t.Errorf("initialize with an unhashable version = %v, want -32602 with id 9", r)
	}
	p.send(`{"jsonrpc":"2.0","id":15,"method":"ping","params":{"x":NaN}}`)
	if r := p.recv(); errorCode(r) != -32700 || r["id"] != nil {
		t.Errorf("NaN in a request = %v, want -32700 with a null id", r)
	}
	p.send(`{"jsonrpc":"2.0","id":11,"method":"initialize","params":{"protocolVersion":"2099-01-01","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	if r, _ := p.recvID(11); r["result"].(map[string]any)["protocolVersion"] != "2025-11-25" {
		t.Errorf("initialize with an unknown version = %v, want 2025-11-25", r)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(`{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	if r, _ := p.recvID(4); errorCode(r) != -32600 {
		t.Errorf("second initialize = %v, want -32600", r)
	}

	// Parse errors and invalid requests: the session continues.
	for _, bad := range []struct {
		line string
		code float64
	}{{"not-json", -32700}, {"[]", -32600}, {`{"jsonrpc":"2.0","id":true,"method":"ping"}`, -32600}, {`{"jsonrpc":"2.0","id":null,"method":"ping"}`, -32600}} {
		p.send(bad.line)
		if r := p.recv(); errorCode(r) != bad.code || r["id"] != nil {
			t.Errorf("%s = %v, want %v with a null id", bad.line, r, bad.code)
		}
	}
	// A request split across two writes is one frame.
	io.WriteString(p.stdin, `{"jsonrpc":"2.0","id":"ali`)
	time.Sleep(50 * time.Millisecond)
	p.send(`ve","method":"ping"}`)
	if r := p.recv(); r["id"] != "alive" || r["result"] == nil {
		t.Errorf("fragmented ping = %v", r)
	}
	p.send(`{"jsonrpc":"2.0","id":5,"method":"resources/list"}`)
	if r, _ := p.recvID(5); errorCode(r) != -32601 {
		t.Errorf("unknown method = %v, want -32601", r)
	}

	p.send(`{"jsonrpc":"2.0","id":6,"method":"tools/list"}`)
	r, _ := p.recvID(6)
	var names []string
	for _, tool := range r["result"].(map[string]any)["tools"].([]any) {
		names = append(names, tool.(map[string]any)["name"].(string))
	}
	if strings.Join(names, ",") != "flow_run,flow_status,flow_check,flow_review" {
		t.Errorf("tools = %v, want exactly flow_run, flow_status, flow_check, flow_review", names)
	}

	p.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"flow_status","arguments":{}}}`)
	r, _ = p.recvID(7)
	res := r["result"].(map[string]any)
	var fromText map[string]any
	json.Unmarshal([]byte(res["content"].([]any)[0].(map[string]any)["text"].(string)), &fromText)
	sc := res["structuredContent"].(map[string]any)
	if res["isError"] != false || sc["workspace"] != ws || sc["backend"].(map[string]any)["connectivity"] != "unverified" {
		t.Errorf("flow_status result = %v", res)
	}
	if a, _ := json.Marshal(fromText); string(a) != mustJSON(sc) {
		t.Errorf("flow_status text %s != structuredContent %s", a, mustJSON(sc))
	}

	// Injection attempts are refused, and nothing runs: a malformed call
	// is invalid params, arguments off the schema an isError result.
	for i, call := range []struct {
		params   string
		protocol bool
	}{
		{`{"name":"shell_exec","arguments":{"cmd":"id"}}`, true},
		{`{"name":"flow_check","arguments":{"cwd":"/"}}`, false},
		{`{"name":"flow_check","arguments":{"argv":["sh"]}}`, false},
		{`{"name":"flow_run","arguments":["x"]}`, true},
		{`{"name":"flow_run","arguments":{"task":1}}`, false},
		{`{"name":"flow_run","arguments":{}}`, false},
		{`{"name":"flow_status","arguments":{},"cwd":"/"}`, true},
	} {
		id := float64(100 + i)
		p.send(`{"jsonrpc":"2.0","id":` + itoa(int(id)) + `,"method":"tools/call","params":` + call.params + `}`)
		r, _ := p.recvID(id)
		if call.protocol && errorCode(r) != -32602 {
			t.Errorf("tools/call %s = %v, want -32602", call.params, r)
		}
		if res, _ := r["result"].(map[string]any); !call.protocol && (res["isError"] != true || !strings.HasPrefix(fmt.Sprint(toolReport(t, r)["reason"]), "Invalid arguments for ")) {
			t.Errorf("tools/call %s = %v, want an isError result naming the invalid arguments", call.params, r)
		}
	}
	// A tools/call notification never executes.
	p.send(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"flow_check","arguments":{}}}`)
	p.send(`{"jsonrpc":"2.0","id":8,"method":"ping"}`)
	p.recvID(8)
	if _, err := os.Stat(filepath.Join(ws, "checked")); err == nil {
		t.Error("a tools/call notification ran the check")
	}

	// A real configured check (which prints to stdout) and a missing one.
	p.send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"flow_check","arguments":{}}}`)
	r, _ = p.recvID(9)
	if res := r["result"].(map[string]any); res["isError"] != false || res["structuredContent"].(map[string]any)["verified"] != true {
		t.Errorf("flow_check = %v, want verified", res)
	}
	p.send(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"flow_check","arguments":{"name":"nope"}}}`)
	r, _ = p.recvID(10)
	if res := r["result"].(map[string]any); res["isError"] != true || res["structuredContent"].(map[string]any)["verified"] != false {
		t.Errorf("flow_check nope = %v, want isError and not verified", res)
	}

	if code := p.exit(); code != 0 || p.stderr.String() != "" {
		t.Errorf("flow serve at EOF = %d, stderr %q; want 0 and nothing on stderr", code, p.stderr)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestServeOversizedFrame(t *testing.T) {
	t.Parallel()
	p := startServe(t, workspace(t), hermeticEnv(t))
	p.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	p.recvID(1)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":"` + strings.Repeat("x", 1<<20) + `"}}`)
	if r := p.recv(); errorCode(r) != -32700 {
		t.Errorf("oversized frame = %v, want -32700", r)
	}
	if code := p.exit(); code != 0 || len(p.all) != 2 {
		t.Errorf("after an oversized frame: exit %d with %d stdout lines, want 0 and 2", code, len(p.all))
	}
}

// TestServeRunWithProgress runs flow_run against the fake model with a
// progress token: progress notifications arrive before the result, none
// after, and the model's and checks' output never reaches stdout raw.
func TestServeRunWithProgress(t *testing.T) {
	t.Parallel()
	ws, _, cfg := addAScript(t, `["sh", "-c", "echo noise from the check on stdout; echo and on stderr >&2; grep -q func a.go"]`)
	p := startServe(t, ws, hermeticEnv(t), "--trusted", "-c", cfg)
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flow_run","arguments":{"task":"add A"},"_meta":{"progressToken":"tok"}}}`)
	r, notes := p.recvID(1)
	res := r["result"].(map[string]any)
	if res["isError"] != false || res["structuredContent"].(map[string]any)["verified"] != true {
		t.Fatalf("flow_run = %v", res)
	}
	if len(notes) < 5 {
		t.Errorf("got %d progress notifications, want one per runtime event", len(notes))
	}
	last := -1.0
	for _, n := range notes {
		params := n["params"].(map[string]any)
		if n["method"] != "notifications/progress" || params["progressToken"] != "tok" || params["progress"].(float64) <= last {
			t.Errorf("notification = %v, want increasing progress for tok", n)
		}
		last = params["progress"].(float64)
	}
	p.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if _, after := p.recvID(2); len(after) != 0 {
		t.Errorf("notifications after the result: %v", after)
	}
	if code := p.exit(); code != 0 || p.stderr.String() != "" {
		t.Errorf("exit %d, stderr %q", code, p.stderr)
	}
}

// TestServeSIGTERMDuringCheck: exit 130, the check's grandchild killed,
// only the protocol on stdout.
func TestServeSIGTERMDuringCheck(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	cfg := writeFile(t, t.TempDir(), "ops.toml", `workspace_dir = `+tomlString(ws)+`
[checks.slow]
cmd = ["sh", "-c", "(sleep 1; touch grandchild-wrote) & echo started; touch started; sleep 30"]
`)
	p := startServe(t, ws, hermeticEnv(t), "--trusted", "-c", cfg)
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flow_check","arguments":{}}}`)
	waitFor(t, filepath.Join(ws, "started"))
	p.cmd.Process.Signal(syscall.SIGTERM)
	for line := range p.lines {
		p.all = append(p.all, line)
	}
	code := waitExit(t, p.cmd)
	if code != 130 || !strings.Contains(p.stderr.String(), "interrupted") {
		t.Errorf("flow serve after SIGTERM = %d, stderr %q; want 130 and interrupted", code, p.stderr)
	}
	if len(p.all) != 1 || !strings.Contains(p.all[0], `"protocolVersion"`) {
		t.Errorf("stdout = %q, want only the initialize reply", p.all)
	}
	time.Sleep(1500 * time.Millisecond)
	if _, err := os.Stat(filepath.Join(ws, "grandchild-wrote")); err == nil {
		t.Error("the check's grandchild survived SIGTERM")
	}
}
