package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// escapeCheck is a check command (TOML) whose grandchild double-forks: a
// background subshell runs setsid, whose shell starts `sleep 3171` in the
// background holding the check's stdout and stderr, records its pid in
// escaped.pid and exits. The check then runs then.
func escapeCheck(then string) string {
	return `["sh", "-c", ` + tomlString(`(setsid sh -c 'sleep 3171 & echo $! > escaped.pid' &); `+
		`while [ ! -s escaped.pid ]; do sleep 0.01; done; `+then) + `]`
}

// needSetsid skips a test when setsid(1) is missing.
func needSetsid(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid not installed")
	}
}

// escapedAlive reports whether the process recorded in ws/escaped.pid is
// still the check's `sleep 3171` (and kills it at cleanup if so).
func escapedAlive(t *testing.T, ws string) bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(ws, "escaped.pid"))
	if err != nil {
		t.Fatalf("the check did not start its escaping process: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		t.Fatalf("escaped.pid = %q", data)
	}
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err == nil && bytes.Equal(cmdline, []byte("sleep\x003171\x00")) {
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
		return true
	}
	return false
}

// TestCheckLeavesNoProcess: after `flow check` no process of the check is
// left, not even one that left its session and held its pipes, and the
// check's result does not wait for it.
func TestCheckLeavesNoProcess(t *testing.T) {
	t.Parallel()
	needSetsid(t)
	ws := workspace(t)
	cfg := writeFile(t, t.TempDir(), "ops.toml", "[checks.escape]\ncmd = "+escapeCheck("echo done")+"\n")
	r := runFlow(t, ws, hermeticEnv(t), "check", "--trusted", "-c", cfg, "-w", ws)
	m := decode(t, r)
	if r.code != 0 || m["status"] != "ok" {
		t.Errorf("flow check = %d %v\nstderr: %s", r.code, m, r.stderr)
	}
	if escapedAlive(t, ws) {
		t.Error("the check's setsid grandchild outlived flow check")
	}
}

// TestRunLeavesNoProcess: the same for the checks of `flow run`'s
// verification.
func TestRunLeavesNoProcess(t *testing.T) {
	t.Parallel()
	needSetsid(t)
	ws, srv, cfg := addAScript(t, escapeCheck("grep -q func a.go && echo done"))
	r := runFlow(t, ws, hermeticEnv(t), "run", "--trusted", "-c", cfg, "add A")
	m := decode(t, r)
	if r.code != 0 || m["status"] != "ok" || srv.Unexpected() != 0 {
		t.Errorf("flow run = %d %v (unexpected model calls %d)\nstderr: %s", r.code, m, srv.Unexpected(), r.stderr)
	}
	if escapedAlive(t, ws) {
		t.Error("the check's setsid grandchild outlived flow run")
	}
}

// serveCheck starts `flow serve` on a workspace whose one check runs
// check, and calls flow_check; it returns when the check has touched
// "started".
func serveCheck(t *testing.T, check string) (*mcpProc, string) {
	t.Helper()
	ws := workspace(t)
	cfg := writeFile(t, t.TempDir(), "ops.toml", "workspace_dir = "+tomlString(ws)+"\n[checks.slow]\ncmd = "+check+"\n")
	p := startServe(t, ws, hermeticEnv(t), "--trusted", "-c", cfg)
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flow_check","arguments":{}}}`)
	waitFor(t, filepath.Join(ws, "started"))
	return p, ws
}

// interrupted checks that p exited 130 with the interrupted line and wrote
// nothing after the initialize reply.
func (p *mcpProc) interrupted() {
	p.t.Helper()
	for line := range p.lines {
		p.all = append(p.all, line)
	}
	code := waitExit(p.t, p.cmd)
	if code != 130 || !strings.Contains(p.stderr.String(), "interrupted") {
		p.t.Errorf("flow serve after SIGTERM = %d, stderr %q; want 130 and interrupted", code, p.stderr)
	}
	if len(p.all) != 1 || !strings.Contains(p.all[0], `"protocolVersion"`) {
		p.t.Errorf("stdout = %q, want only the initialize reply", p.all)
	}
}

// TestServeSIGTERMLeavesNoProcess: SIGTERM to `flow serve` during a check
// kills the check's setsid grandchild too.
func TestServeSIGTERMLeavesNoProcess(t *testing.T) {
	t.Parallel()
	needSetsid(t)
	p, ws := serveCheck(t, escapeCheck("touch started; sleep 30"))
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.interrupted()
	if escapedAlive(t, ws) {
		t.Error("the check's setsid grandchild outlived flow serve's SIGTERM")
	}
}
