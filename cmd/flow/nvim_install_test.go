package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neovim/go-client/nvim"

	"flow/internal/test/nvimtest"
)

// copyCheckout copies the repository's files into a new directory, as a
// fresh clone would have them: no bin/, no doc/tags.
func copyCheckout(t *testing.T) string {
	t.Helper()
	src := nvimtest.RepoRoot(t)
	dst := filepath.Join(t.TempDir(), "flow")
	skip := map[string]bool{".git": true, "bin": true, "node_modules": true, "doc/tags": true, "flow": true}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if skip[filepath.ToSlash(rel)] || d.IsDir() && d.Name() == "node_modules" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// goCacheEnv returns the Go toolchain's cache locations as KEY=VALUE entries, so
// that a build inside a test Neovim (whose HOME is a temporary directory)
// reuses the modules and the build cache instead of fetching them again.
func goCacheEnv(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE", "GOCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	vals := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(vals) != 3 {
		t.Fatalf("go env printed %q", out)
	}
	return []string{"GOMODCACHE=" + vals[0], "GOCACHE=" + vals[1], "GOPATH=" + vals[2]}
}

// notifications replaces vim.notify in v with a recorder; the returned
// function gives what was notified since the last call.
func notifications(t *testing.T, v *nvim.Nvim) func() []string {
	t.Helper()
	nvimtest.Exec(t, v, `_G.flow_test_notes = {}
		vim.notify = function(msg) table.insert(_G.flow_test_notes, tostring(msg)) end`)
	return func() []string {
		t.Helper()
		var out []string
		for _, m := range nvimtest.Exec(t, v, "local l = _G.flow_test_notes; _G.flow_test_notes = {}; return l").([]any) {
			out = append(out, m.(string))
		}
		return out
	}
}

// TestNvimInstallFromFreshCheckout follows a plugin manager that loads flow
// from a local directory and runs no build (lazy.nvim's `dir =` spec, a
// pack/*/start clone): :help flow works at once (the plugin makes doc/tags);
// :FlowStatus and :FlowBuild say how to build the binary instead of
// Neovim's E475, also without Go; :FlowInstall builds bin/flow with progress
// and the host then starts from it.
func TestNvimInstallFromFreshCheckout(t *testing.T) {
	t.Parallel()
	checkout := copyCheckout(t)
	ws := goWorkspace(t)
	log := filepath.Join(t.TempDir(), "flow.log")
	v := nvimtest.New(t, nvimtest.Options{Dir: ws, NoPlugin: true, Env: goCacheEnv(t)})
	nvimtest.Exec(t, v, "vim.opt.runtimepath:prepend(...); vim.cmd('runtime plugin/flow.lua')", checkout)
	if root := nvimtest.Exec(t, v, "return require('flow.config').plugin_root()"); root != checkout {
		t.Fatalf("plugin root = %v, want the fresh checkout %s", root, checkout)
	}
	t.Cleanup(func() {
		if t.Failed() {
			data, _ := os.ReadFile(log)
			t.Logf("flow log:\n%s", data)
		}
	})
	nvimtest.Exec(t, v, "require('flow').setup({ log_file = ... })", log)
	notes := notifications(t, v)

	// Help tags without any build step.
	if _, err := os.Stat(filepath.Join(checkout, "doc", "tags")); err != nil {
		t.Errorf("loading the plugin made no doc/tags: %v", err)
	}
	help := nvimtest.Exec(t, v, "vim.cmd('help flow-commands'); local n = vim.api.nvim_buf_get_name(0); vim.cmd('close'); return n")
	if help != filepath.Join(checkout, "doc", "flow.txt") {
		t.Errorf(":help flow-commands opened %v, want the checkout's doc/flow.txt", help)
	}

	bin := filepath.Join(checkout, "bin", "flow")
	noE475 := func(what string, msgs []string) {
		t.Helper()
		for _, m := range msgs {
			if strings.Contains(m, "E475") || strings.Contains(m, "Vim:") {
				t.Errorf("%s showed Neovim's raw error: %q", what, m)
			}
		}
	}
	wantNote := func(what string, msgs []string, sub string) {
		t.Helper()
		if !strings.Contains(strings.Join(msgs, "\n"), sub) {
			t.Errorf("%s notified %q, want %q", what, msgs, sub)
		}
	}

	// Without Go on PATH: say so.
	path := nvimtest.Exec(t, v, "local p = vim.env.PATH; vim.env.PATH = '/nonexistent'; return p").(string)
	nvimtest.Exec(t, v, "vim.cmd('FlowStatus')")
	msgs := notes()
	wantNote(":FlowStatus without go", msgs, "flow is not built yet: install Go (it is not on PATH), then run :FlowInstall to build "+bin)
	noE475(":FlowStatus without go", msgs)
	nvimtest.Exec(t, v, "vim.cmd('FlowInstall')")
	waitNotes(t, v, notes, "building flow needs Go, which is not on PATH")
	nvimtest.Exec(t, v, "vim.env.PATH = ...", path)

	// With Go: how to build it.
	nvimtest.Exec(t, v, "vim.cmd('FlowStatus')")
	msgs = notes()
	wantNote(":FlowStatus", msgs, "flow is not built yet: run :FlowInstall to build "+bin+" (or `make build` in "+checkout+")")
	noE475(":FlowStatus", msgs)
	nvimtest.Exec(t, v, "vim.cmd('FlowBuild add a test')")
	rep := nvimtest.Exec(t, v, "return require('flow').last_report").(map[string]any)
	if rep["status"] != "error" || !strings.Contains(rep["error"].(string), "run :FlowInstall to build "+bin) {
		t.Errorf(":FlowBuild report = %v, want an error saying to run :FlowInstall", rep)
	}
	noE475(":FlowBuild", []string{rep["error"].(string)})

	// A `cmd` that is not executable is the user's to fix.
	nvimtest.Exec(t, v, "require('flow').setup({ cmd = { '/nonexistent/flow' }, log_file = ... })", log)
	nvimtest.Exec(t, v, "vim.cmd('FlowStatus')")
	wantNote(":FlowStatus with a bad cmd", notes(), "flow: `cmd` /nonexistent/flow is not executable: fix `cmd` in setup(), or remove it and run :FlowInstall")
	nvimtest.Exec(t, v, "require('flow').setup({ log_file = ... })", log)

	// :FlowInstall builds it.
	if err := os.Remove(filepath.Join(checkout, "doc", "tags")); err != nil {
		t.Fatal(err)
	}
	nvimtest.Exec(t, v, "vim.cmd('FlowInstall')")
	msgs = waitNotes(t, v, notes, "flow: built "+bin, "failed")
	wantNote(":FlowInstall", msgs, "flow: building "+bin+" with go build")
	wantNote(":FlowInstall", msgs, "flow: built "+bin+" and the help tags")
	if out, err := exec.Command(bin, "version").Output(); err != nil || !strings.HasPrefix(string(out), "flow ") {
		t.Fatalf("%s version = %q, %v; want flow's version", bin, out, err)
	}
	if _, err := os.Stat(filepath.Join(checkout, "doc", "tags")); err != nil {
		t.Errorf(":FlowInstall made no doc/tags: %v", err)
	}
	if data, _ := os.ReadFile(log); !strings.Contains(string(data), "install: go build") {
		t.Errorf("the log has no install line:\n%s", data)
	}

	// The host now starts from the built binary.
	if cmd := nvimtest.Exec(t, v, "return require('flow.config').cmd()[1]"); cmd != bin {
		t.Errorf("cmd = %v, want the built %s", cmd, bin)
	}
	st := nvimtest.Exec(t, v, "return require('flow').status()").(map[string]any)
	if st["error"] != nil || st["workspace"] != ws {
		t.Errorf("status after :FlowInstall = %v, want a report for %s", st, ws)
	}
}

// waitNotes collects notifications until one contains any of subs (the
// build's outcome, success or failure) and returns them all; the bound is
// generous because a build on a loaded machine is slow.
func waitNotes(t *testing.T, v *nvim.Nvim, notes func() []string, subs ...string) []string {
	t.Helper()
	var all []string
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		all = append(all, notes()...)
		for _, m := range all {
			for _, s := range subs {
				if strings.Contains(m, s) {
					return all
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no notification containing %q; got %q", subs, all)
	return nil
}

// gitIn runs git in dir with a fixed identity and no user or system
// configuration, and returns its trimmed output.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=flow test", "-c", "user.email=test@flow.invalid", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestNvimStaleBinaryAfterNewCommit follows a `dir =` install in a git
// checkout: :FlowInstall stamps bin/flow with the checkout's HEAD, and
// :checkhealth flow says so; after a new commit in the checkout,
// :checkhealth flow and the first command of the session warn that
// bin/flow was built from another commit and say to run :FlowInstall,
// which makes both quiet again.
func TestNvimStaleBinaryAfterNewCommit(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found")
	}
	checkout := copyCheckout(t)
	gitIn(t, checkout, "init", "-q")
	gitIn(t, checkout, "add", "-A")
	gitIn(t, checkout, "commit", "-q", "-m", "first")
	first := gitIn(t, checkout, "rev-parse", "HEAD")
	ws := goWorkspace(t)
	v := nvimtest.New(t, nvimtest.Options{Dir: ws, NoPlugin: true, Env: goCacheEnv(t)})
	nvimtest.Exec(t, v, "vim.opt.runtimepath:prepend(...); vim.cmd('runtime plugin/flow.lua')", checkout)
	nvimtest.Exec(t, v, "require('flow').setup({ log_file = ... })", filepath.Join(t.TempDir(), "flow.log"))
	notes := notifications(t, v)
	bin := filepath.Join(checkout, "bin", "flow")

	nvimtest.Exec(t, v, "vim.cmd('FlowInstall')")
	waitNotes(t, v, notes, "flow: built "+bin, "failed")
	if out, err := exec.Command(bin, "version").Output(); err != nil || !strings.Contains(string(out), "(commit "+first+")") {
		t.Fatalf("%s version = %q, %v; want it stamped with commit %s", bin, out, err, first)
	}
	binary := func() []nvimtest.HealthItem {
		t.Helper()
		items, _ := nvimtest.Health(t, v, "flow")
		var out []nvimtest.HealthItem
		for _, it := range items {
			if it.Section == "flow binary" {
				out = append(out, it)
			}
		}
		return out
	}
	items := binary()
	if _, ok := nvimtest.FindHealth(items, "INFO", "built from commit "+first); !ok {
		t.Errorf("checkhealth flow after :FlowInstall = %v, want INFO built from commit %s", items, first)
	}
	if it, ok := nvimtest.FindHealth(items, "WARNING", ""); ok {
		t.Errorf("checkhealth flow after :FlowInstall warns: %v", it)
	}

	// The checkout moves on.
	writeFile(t, checkout, "NEWS", "a change\n")
	gitIn(t, checkout, "add", "NEWS")
	gitIn(t, checkout, "commit", "-q", "-m", "second")
	second := gitIn(t, checkout, "rev-parse", "HEAD")
	want := "flow: " + bin + " was built from commit " + first[:12] + ", but the checkout is at " + second[:12] +
		"; run :FlowInstall (or `make build` in " + checkout + ") to rebuild it"
	items = binary()
	if it, ok := nvimtest.FindHealth(items, "WARNING", want); !ok || len(it.Advice) == 0 {
		t.Errorf("checkhealth flow after a new commit = %v, want WARNING %q with advice", items, want)
	}
	for _, it := range items {
		t.Logf("after a new commit: %s", it)
	}
	nvimtest.Exec(t, v, "vim.cmd('FlowStatus')")
	if msgs := notes(); !strings.Contains(strings.Join(msgs, "\n"), want) {
		t.Errorf("the first command after a new commit notified %q, want %q", msgs, want)
	}

	nvimtest.Exec(t, v, "vim.cmd('FlowInstall')")
	waitNotes(t, v, notes, "flow: built "+bin, "failed")
	items = binary()
	if _, ok := nvimtest.FindHealth(items, "INFO", "built from commit "+second); !ok {
		t.Errorf("checkhealth flow after the second :FlowInstall = %v, want INFO built from commit %s", items, second)
	}
	if it, ok := nvimtest.FindHealth(items, "WARNING", ""); ok {
		t.Errorf("checkhealth flow after the second :FlowInstall warns: %v", it)
	}
	nvimtest.Exec(t, v, "vim.cmd('FlowStatus')")
	for _, m := range notes() {
		if strings.Contains(m, "was built from commit") {
			t.Errorf("the first command after :FlowInstall notified %q", m)
		}
	}
}
