// Package nvimtest starts real headless Neovim instances for tests, in the
// spirit of go-client's nvimtest: `nvim --clean --embed --headless` with
// every XDG directory (and HOME) in t.TempDir(), NVIM_LOG_FILE set, and the
// repository root prepended to 'runtimepath' so that flow's Lua modules
// load. It is a Go-only package: Neovim never sources it.
//
// The Neovim is $FLOW_TEST_NVIM_BIN, or nvim in PATH. A missing nvim skips
// the test, unless FLOW_TEST_NVIM=required (CI, `make test-nvim`), which
// fails it instead.
package nvimtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neovim/go-client/nvim"

	"flow/internal/text"
)

// CallTimeout bounds every helper call into Neovim, so a prompt that would
// block the editor fails the test instead of hanging it.
const CallTimeout = 20 * time.Second

// Options configure a Neovim instance.
type Options struct {
	// Dir is Neovim's working directory; "" means a new temporary directory.
	Dir string
	// Env holds extra KEY=VALUE entries for Neovim's environment.
	Env []string
	// NoPlugin skips sourcing plugin/flow.lua.
	NoPlugin bool
}

// BinaryEnv names the environment variable that selects the Neovim to test
// with; when it is empty, nvim is looked up in PATH. CI runs the Neovim
// tests once with Debian's nvim and once with a current one
// (scripts/nvim-current.sh).
const BinaryEnv = "FLOW_TEST_NVIM_BIN"

// Binary returns the path of the Neovim to test with: $FLOW_TEST_NVIM_BIN,
// or nvim in PATH. A variable naming something that cannot run fails the
// test; a nvim missing from PATH skips it, or fails it when
// FLOW_TEST_NVIM=required.
func Binary(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv(BinaryEnv); bin != "" {
		p, err := exec.LookPath(bin)
		if err != nil {
			t.Fatalf("%s=%s: %v", BinaryEnv, bin, err)
		}
		return p
	}
	p, err := exec.LookPath("nvim")
	if err != nil {
		if os.Getenv("FLOW_TEST_NVIM") == "required" {
			t.Fatalf("nvim is required (FLOW_TEST_NVIM=required) but not found: %v", err)
		}
		t.Skip("nvim not found; set FLOW_TEST_NVIM=required to fail instead")
	}
	return p
}

var (
	rootOnce sync.Once
	rootDir  string
	rootErr  error
)

// RepoRoot returns the repository root: the nearest directory above the
// working directory that holds go.mod.
func RepoRoot(t testing.TB) string {
	t.Helper()
	rootOnce.Do(func() {
		dir, err := os.Getwd()
		if err != nil {
			rootErr = err
			return
		}
		for {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				rootDir = dir
				return
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				rootErr = errors.New("go.mod not found above the working directory")
				return
			}
			dir = parent
		}
	})
	if rootErr != nil {
		t.Fatal(rootErr)
	}
	return rootDir
}

// Env returns an isolated environment for a Neovim child: the test's
// environment without XDG, NVIM and VIM variables, plus XDG_CONFIG_HOME,
// XDG_DATA_HOME, XDG_STATE_HOME, XDG_CACHE_HOME, XDG_RUNTIME_DIR and HOME
// in a temporary directory and NVIM_LOG_FILE, then extra.
func Env(t testing.TB, extra ...string) []string {
	t.Helper()
	base := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "XDG_") || strings.HasPrefix(k, "NVIM") || strings.HasPrefix(k, "VIM") ||
			k == "MYVIMRC" || k == "HOME" || strings.HasPrefix(k, "FLOW_") {
			continue
		}
		env = append(env, kv)
	}
	for _, d := range []string{"config", "data", "state", "cache", "runtime", "home"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	env = append(env,
		"XDG_CONFIG_HOME="+filepath.Join(base, "config"),
		"XDG_DATA_HOME="+filepath.Join(base, "data"),
		"XDG_STATE_HOME="+filepath.Join(base, "state"),
		"XDG_CACHE_HOME="+filepath.Join(base, "cache"),
		"XDG_RUNTIME_DIR="+filepath.Join(base, "runtime"),
		"HOME="+filepath.Join(base, "home"),
		"NVIM_LOG_FILE="+filepath.Join(base, "nvim.log"),
	)
	return append(env, extra...)
}

// logger forwards go-client's log lines to the test until it ends.
type logger struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (l *logger) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done {
		l.t.Logf("go-client: "+format, args...)
	}
}

// New starts `nvim --clean --embed --headless -n`, prepends the repository
// root to 'runtimepath' and sources plugin/flow.lua. Neovim is closed when
// the test ends.
func New(t testing.TB, opts Options) *nvim.Nvim {
	t.Helper()
	bin := Binary(t)
	dir := opts.Dir
	if dir == "" {
		dir = t.TempDir()
	}
	ctx, cancel := context.WithCancel(context.Background())
	lg := &logger{t: t}
	v, err := nvim.NewChildProcess(
		nvim.ChildProcessCommand(bin),
		nvim.ChildProcessArgs("--clean", "--embed", "--headless", "-n"),
		nvim.ChildProcessDir(dir),
		nvim.ChildProcessEnv(Env(t, opts.Env...)),
		nvim.ChildProcessContext(ctx),
		nvim.ChildProcessLogf(lg.logf),
	)
	if err != nil {
		cancel()
		t.Fatalf("start nvim: %v", err)
	}
	t.Cleanup(func() {
		done := make(chan struct{})
		go func() {
			v.Close()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cancel() // kills the child
			<-done
		}
		cancel()
		lg.mu.Lock()
		lg.done = true
		lg.mu.Unlock()
	})
	Setup(t, v, opts.NoPlugin)
	return v
}

// Setup prepends the repository root to 'runtimepath' of v and, unless
// noPlugin, sources plugin/flow.lua.
func Setup(t testing.TB, v *nvim.Nvim, noPlugin bool) {
	t.Helper()
	Exec(t, v, "vim.opt.runtimepath:prepend(...)", RepoRoot(t))
	if !noPlugin {
		Exec(t, v, "vim.cmd('runtime plugin/flow.lua')")
	}
}

// Exec evaluates Lua code in v with args (available as ...) and returns its
// result decoded into any. It fails the test on an error or after
// CallTimeout.
func Exec(t testing.TB, v *nvim.Nvim, code string, args ...any) any {
	t.Helper()
	out, err := Try(v, CallTimeout, code, args...)
	if err != nil {
		t.Fatalf("nvim_exec_lua(%q) = %v", text.Clip(code, 80), err)
	}
	return out
}

// Try evaluates Lua code in v with args, bounded by timeout.
func Try(v *nvim.Nvim, timeout time.Duration, code string, args ...any) (any, error) {
	type reply struct {
		v   any
		err error
	}
	done := make(chan reply, 1)
	go func() {
		var out any
		err := v.ExecLua(code, &out, args...)
		done <- reply{out, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-time.After(timeout):
		return nil, fmt.Errorf("no answer after %s", timeout)
	}
}

// Listen starts `nvim --clean --headless -n --listen sock` as a plain
// process (not embedded), with the repository on 'runtimepath', waits until
// the socket accepts connections and stops Neovim when the test ends.
func Listen(t testing.TB, sock string, opts Options) {
	t.Helper()
	bin := Binary(t)
	dir := opts.Dir
	if dir == "" {
		dir = t.TempDir()
	}
	rtp := "lua vim.opt.runtimepath:prepend(vim.env.FLOW_TEST_RTP)"
	cmd := exec.Command(bin, "--clean", "--headless", "-n", "--listen", sock, "--cmd", rtp)
	cmd.Dir = dir
	cmd.Env = Env(t, append(opts.Env, "FLOW_TEST_RTP="+RepoRoot(t))...)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start nvim --listen: %v", err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		// The socket file exists once bound, a moment before Neovim
		// listens: wait until a connection is accepted.
		if st, err := os.Lstat(sock); err == nil && st.Mode()&os.ModeSocket != 0 {
			if c, err := net.Dial("unix", sock); err == nil {
				c.Close()
				return
			}
		}
		select {
		case <-exited:
			t.Fatalf("nvim --listen %s exited early", sock)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("nvim did not create %s", sock)
		}
	}
}

// AttachUI attaches v as a width×height UI (its redraw notifications are
// dropped), so that Neovim behaves as with a person in front of it: a
// message longer than the command line then stops at a hit-enter prompt.
// Without a UI no prompt ever appears.
func AttachUI(t testing.TB, v *nvim.Nvim, width, height int) {
	t.Helper()
	if err := v.RegisterHandler("redraw", func(...any) {}); err != nil {
		t.Fatalf("register redraw: %v", err)
	}
	if err := v.AttachUI(width, height, map[string]any{"ext_linegrid": true}); err != nil {
		t.Fatalf("attach UI: %v", err)
	}
}

// Prompt reports whether Neovim waits at a prompt (hit-enter, more,
// confirm) and its mode. It uses nvim_get_mode, which answers even while
// Neovim is blocked.
func Prompt(t testing.TB, v *nvim.Nvim) (string, bool) {
	t.Helper()
	type reply struct {
		m   *nvim.Mode
		err error
	}
	done := make(chan reply, 1)
	go func() {
		m, err := v.Mode()
		done <- reply{m, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("nvim_get_mode: %v", r.err)
		}
		return r.m.Mode, r.m.Blocking || strings.HasPrefix(r.m.Mode, "r")
	case <-time.After(CallTimeout):
		t.Fatalf("nvim_get_mode: no answer after %s", CallTimeout)
	}
	return "", false
}

// NoPrompt fails the test when Neovim waits at a prompt, after letting its
// main loop run once (a hit-enter prompt appears when the loop returns
// from the callback that printed too much).
func NoPrompt(t testing.TB, v *nvim.Nvim) {
	t.Helper()
	if mode, blocked := Prompt(t, v); blocked {
		t.Fatalf("Neovim waits at a prompt (mode %q)", mode)
	}
	if _, err := Try(v, CallTimeout, "return vim.wait(0)"); err != nil {
		mode, _ := Prompt(t, v)
		t.Fatalf("Neovim does not answer (mode %q): %v", mode, err)
	}
	if mode, blocked := Prompt(t, v); blocked {
		t.Fatalf("Neovim waits at a prompt (mode %q)", mode)
	}
}
