package main

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neovim/go-client/nvim"

	"flow/internal/test/nvimtest"
	"flow/internal/test/ollamatest"
)

// `flow serve --nvim SOCKET` against a real Neovim that provides flow's
// editor tool module under Rose's name, and the socket rules.

// socketDir returns a new short private (0700) directory for a Unix socket
// (t.TempDir's long names can exceed the 108-byte socket path limit).
func socketDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "flow-sock-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestServeNvimBridge runs flow_run over MCP with the editor bridge: the
// coder's write goes through Neovim, whose loaded buffer shows it
// unmodified (a write to disk alone would leave the old text there).
func TestServeNvimBridge(t *testing.T) {
	t.Parallel()
	ws := goWorkspace(t)
	sock := filepath.Join(socketDir(t), "nvim.sock")
	nvimtest.Listen(t, sock, nvimtest.Options{Dir: ws})
	v, err := nvim.Dial(sock)
	if err != nil {
		t.Fatalf("dial %s: %v", sock, err)
	}
	t.Cleanup(func() { v.Close() })
	nvimtest.Exec(t, v, `package.loaded['rose.tools'] = require('flow.tools').setup({ workspace = select(1, ...), trusted = true })
		vim.cmd('edit a.go')`, ws)

	srv := ollamatest.New(t, buildScript(write("w1", "a.go", newGo))...)
	cfg := nvimConfig(t, ws, srv.URL, lintGrep...)
	p := startServe(t, ws, hermeticEnv(t), "--trusted", "-c", cfg, "--nvim", sock)
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flow_run","arguments":{"task":"add New"}}}`)
	r, _ := p.recvID(1)
	res, _ := r["result"].(map[string]any)
	sc, _ := res["structuredContent"].(map[string]any)
	if res["isError"] != false || sc["status"] != "ok" || sc["verified"] != true {
		t.Fatalf("flow_run over the editor bridge = %v\nstderr: %s", r, p.stderr)
	}
	if got := readAll(t, ws, "a.go"); got != newGo {
		t.Errorf("a.go on disk = %q, want %q", got, newGo)
	}
	buf := nvimtest.Exec(t, v, `local b = vim.fn.bufnr('a.go')
		return { table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\n'), vim.api.nvim_buf_get_option(b, 'modified') }`).([]any)
	if buf[0] != strings.TrimSuffix(newGo, "\n") || buf[1] != false {
		t.Errorf("a.go buffer in Neovim = %q (modified %v), want flow's text, unmodified", buf[0], buf[1])
	}
	// The model was told the write succeeded.
	if res := toolResultByID(t, srv, "w1"); !strings.Contains(res, `"status":"ok"`) {
		t.Errorf("file_write result = %q, want ok", res)
	}
	if code := p.exit(); code != 0 {
		t.Errorf("flow serve --nvim exit = %d, stderr %q", code, p.stderr)
	}
}

// runGuarded runs flow with stdin at EOF, killing it after 20 s (so a hang
// fails the test instead of blocking it).
func runGuarded(t *testing.T, dir string, args ...string) (int, string, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, flowBin, args...)
	cmd.Dir, cmd.Env = dir, hermeticEnv(t)
	var errb strings.Builder
	cmd.Stderr = &errb
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("flow %v did not exit within 20 s; stderr: %s", args, errb.String())
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), errb.String(), took
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, errb.String(), took
}

// listenUnix listens on a Unix socket at path and accepts connections that
// it never answers; they are closed when the test ends.
func listenUnix(t *testing.T, path string) {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
}

// TestServeNvimRefusesUnsafeSockets: sockets that are not private, not
// Unix sockets, or never answer are refused at start with exit 2.
func TestServeNvimRefusesUnsafeSockets(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	cfg := writeFile(t, t.TempDir(), "ops.toml", `workspace_dir = `+tomlString(ws)+"\n")

	// A 0666 socket in a 0755 directory.
	open := socketDir(t)
	if err := os.Chmod(open, 0o755); err != nil {
		t.Fatal(err)
	}
	public := filepath.Join(open, "public.sock")
	listenUnix(t, public)
	if err := os.Chmod(public, 0o666); err != nil {
		t.Fatal(err)
	}
	// A private socket that accepts and never answers.
	silent := filepath.Join(socketDir(t), "silent.sock")
	listenUnix(t, silent)

	tests := []struct {
		name, socket, want string
	}{
		{"not private", public, "private"},
		{"tcp address", "127.0.0.1:6666", "--nvim must be an absolute"},
		{"relative path", "nvim.sock", "--nvim must be an absolute"},
		{"never answers", silent, "timed out"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"serve", "--trusted", "-c", cfg, "--editor-timeout", "0.5", "--nvim", tc.socket}
			code, stderr, took := runGuarded(t, ws, args...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("flow %v = exit %d, stderr %q; want 2 and %q", args, code, stderr, tc.want)
			}
			t.Logf("refused after %s", took)
		})
	}
}
