package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"flow/runtime/report"
)

// workspace makes a temporary workspace and returns its resolved path.
func workspace(t *testing.T) string {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// decode parses one JSON object from a subprocess's stdout.
func decode(t *testing.T, r result) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if len(lines) != 1 {
		t.Fatalf("stdout has %d lines, want exactly one JSON object:\n%s\nstderr: %s", len(lines), r.stdout, r.stderr)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &m); err != nil {
		t.Fatalf("stdout is not a JSON object: %v\n%s", err, r.stdout)
	}
	return m
}

func TestVersion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{{"version"}, {"--version"}} {
		r := runFlow(t, dir, hermeticEnv(t), args...)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "flow ") || strings.Count(r.stdout, "\n") != 1 {
			t.Errorf("flow %v = %d %q, want 0 and one line \"flow <version>\"", args, r.code, r.stdout)
		}
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{{"bogus"}, {"status", "--bogus"}, {"run"}, {"check", "a", "b"}, {"status", "--editor-timeout", "0"}} {
		r := runFlow(t, dir, hermeticEnv(t), args...)
		if r.code != 2 || r.stdout != "" || !strings.HasPrefix(r.stderr, "flow: ") {
			t.Errorf("flow %v = (%d, stdout %q, stderr %q), want exit 2, no stdout, \"flow: \" on stderr", args, r.code, r.stdout, r.stderr)
		}
	}
}

func TestStatusReport(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	cfg := writeFile(t, t.TempDir(), "op.toml", `
workspace_dir = `+tomlString(ws)+`
[models]
coder = "coder-model"
[checks.vet]
cmd = ["go", "vet", "./..."]
kind = "lint"
filetypes = ["go"]
`)
	r := runFlow(t, t.TempDir(), hermeticEnv(t), "status", "--config", cfg)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("flow status = %d, stderr %q; want 0 and silent stderr", r.code, r.stderr)
	}
	m := decode(t, r)
	if m["status"] != "ok" || m["workspace"] != ws || m["trusted"] != false {
		t.Errorf("status report = %v, want status ok, workspace %s, trusted false", m, ws)
	}
	backend := m["backend"].(map[string]any)
	if backend["connectivity"] != "unverified" || backend["base_url"] != "http://127.0.0.1:11434" || backend["api"] != "native" {
		t.Errorf("backend = %v", backend)
	}
	models := m["models"].(map[string]any)
	if models["coder"] != "coder-model" || models["planner"] != "qwen2.5-coder:7b" {
		t.Errorf("models = %v, want coder-model for the coder and the default for the others", models)
	}
	checks := m["checks"].([]any)
	if len(checks) != 1 {
		t.Fatalf("checks = %v, want one", checks)
	}
	c := checks[0].(map[string]any)
	if _, hasCmd := c["cmd"]; hasCmd || c["name"] != "vet" || c["kind"] != "lint" {
		t.Errorf("status check = %v, want name/kind without argv", c)
	}
	for _, key := range []string{"version", "editor", "warnings", "capabilities", "busy", "last_report"} {
		if _, ok := m[key]; !ok {
			t.Errorf("status report lacks %q: %v", key, m)
		}
	}
	if m["config_path"] != cfg {
		t.Errorf("config_path = %v, want %s", m["config_path"], cfg)
	}
}

func TestProjectConfigIsNeverLoaded(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	writeFile(t, ws, "config.toml", "[ollama]\nbase_url = \"http://evil.example:1\"\n")
	writeFile(t, ws, ".flow.toml", "[checks.pwn]\ncmd = [\"touch\", \"pwned\"]\n")
	r := runFlow(t, ws, hermeticEnv(t), "status", "--trusted")
	if r.code != 0 {
		t.Fatalf("flow status = %d %s %s", r.code, r.stdout, r.stderr)
	}
	m := decode(t, r)
	if m["backend"].(map[string]any)["base_url"] != "http://127.0.0.1:11434" || len(m["checks"].([]any)) != 0 {
		t.Errorf("a project configuration took effect: %v", m)
	}
	warnings := strings.Join(toStrings(m["warnings"]), "\n")
	for _, f := range []string{"config.toml", ".flow.toml"} {
		want := "Ignored project configuration: " + filepath.Join(ws, f)
		if !strings.Contains(warnings, want) {
			t.Errorf("warnings = %q, want %q", warnings, want)
		}
	}
	// flow check must not run the project's check either.
	r = runFlow(t, ws, hermeticEnv(t), "check", "--trusted")
	if r.code != 1 || decode(t, r)["status"] != "unverified" {
		t.Errorf("flow check with only a project config = %d %s, want 1 unverified", r.code, r.stdout)
	}
	if _, err := os.Stat(filepath.Join(ws, "pwned")); err == nil {
		t.Error("the project's .flow.toml check ran")
	}
}

func TestEmptyXDGConfigHomeReadsHomeNotCwd(t *testing.T) {
	t.Parallel()
	cwd := workspace(t)
	home := t.TempDir()
	writeFile(t, cwd, "flow/config.toml", "[checks.cwd]\ncmd = [\"true\"]\n")
	writeFile(t, home, ".config/flow/config.toml", "[checks.home]\ncmd = [\"true\"]\n")
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME="}
	r := runFlow(t, cwd, env, "status")
	m := decode(t, r)
	checks := m["checks"].([]any)
	if len(checks) != 1 || checks[0].(map[string]any)["name"] != "home" {
		t.Errorf("checks with empty XDG_CONFIG_HOME = %v, want only the one from ~/.config", checks)
	}
}

func TestCheckCommand(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	other := workspace(t)
	dir := t.TempDir()
	cfg := writeFile(t, dir, "op.toml", `
workspace_dir = `+tomlString(other)+`
[checks.where]
cmd = ["sh", "-c", "pwd > where.txt; echo checked"]
kind = "lint"
[checks.fails]
cmd = ["sh", "-c", "echo bad >&2; exit 7"]
required = false
`)
	env := hermeticEnv(t)

	// Flags before and after the subcommand; --workspace (relative, against
	// the CWD) beats workspace_dir.
	r := runFlow(t, filepath.Dir(ws), env, "--trusted", "-c", cfg, "check", "--workspace", filepath.Base(ws), "where")
	if r.code != 0 {
		t.Fatalf("flow check where = %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	m := decode(t, r)
	if m["status"] != "ok" || m["verified"] != true {
		t.Errorf("check report = %v, want ok and verified", m)
	}
	got, err := os.ReadFile(filepath.Join(ws, "where.txt"))
	if err != nil || strings.TrimSpace(string(got)) != ws {
		t.Errorf("check ran in %q (%v), want %s", got, err, ws)
	}
	c := m["checks"].([]any)[0].(map[string]any)
	if c["stdout"] != "checked\n" || c["source"] != "flow.check" || c["returncode"] != 0.0 {
		t.Errorf("check result = %v", c)
	}

	// A failing check named explicitly is treated as required → exit 1.
	r = runFlow(t, dir, env, "check", "fails", "--trusted", "-c", cfg)
	m = decode(t, r)
	c = m["checks"].([]any)[0].(map[string]any)
	if r.code != 1 || m["status"] != "failed" || c["returncode"] != 7.0 || c["stderr"] != "bad\n" {
		t.Errorf("flow check fails = %d %v, want 1, failed, returncode 7", r.code, m)
	}

	// Untrusted → unverified, nothing runs.
	os.Remove(filepath.Join(other, "where.txt"))
	r = runFlow(t, dir, env, "check", "-c", cfg)
	if m := decode(t, r); r.code != 1 || m["status"] != "unverified" {
		t.Errorf("untrusted flow check = %d %v, want 1 unverified", r.code, m)
	}
	if _, err := os.Stat(filepath.Join(other, "where.txt")); err == nil {
		t.Error("an untrusted check ran")
	}

	// No checks configured → unverified, exit 1.
	r = runFlow(t, ws, env, "check", "--trusted")
	if m := decode(t, r); r.code != 1 || m["status"] != "unverified" || m["verified"] != false {
		t.Errorf("flow check without checks = %d %v, want 1 unverified", r.code, m)
	}
}

func TestConfigErrorsExit2(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := map[string]string{
		"bad range":  "[agent]\nmax_cycles = 1000\n",
		"no cmd":     "[checks.x]\nkind = \"lint\"\n",
		"legacy key": "[tools]\nshell = true\n",
		"bad toml":   "[[[",
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := writeFile(t, dir, strings.ReplaceAll(name, " ", "_")+".toml", body)
			r := runFlow(t, dir, hermeticEnv(t), "status", "-c", cfg)
			if r.code != 2 || r.stdout != "" || !strings.HasPrefix(r.stderr, "flow: ") {
				t.Errorf("flow status -c %s = (%d, %q, %q), want 2, no stdout, flow: message", name, r.code, r.stdout, r.stderr)
			}
		})
	}
	// 1 MiB of nested inline tables: refused before the TOML decoder (whose
	// memory grows with the square of the depth) sees it.
	deep := "[agent]\nx = " + strings.Repeat("{a=", 1<<19)
	cfg := writeFile(t, dir, "deep.toml", deep[:1<<20-1]+"\n")
	r := runFlow(t, dir, hermeticEnv(t), "status", "-c", cfg)
	if want := "nesting deeper than 64 levels (tables, arrays or dotted keys) at line 2"; r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, want) {
		t.Errorf("flow status -c deep.toml = (%d, %q, %q), want 2 and %q", r.code, r.stdout, r.stderr, want)
	}
	r = runFlow(t, dir, hermeticEnv(t), "status", "-c", filepath.Join(dir, "missing.toml"))
	if r.code != 2 || !strings.Contains(r.stderr, "missing.toml") {
		t.Errorf("missing config = %d %q, want 2 naming the file", r.code, r.stderr)
	}
	r = runFlow(t, dir, hermeticEnv(t), "status", "-w", filepath.Join(dir, "nope"))
	if r.code != 2 || !strings.Contains(r.stderr, "nope") {
		t.Errorf("missing workspace = %d %q, want 2 naming the directory", r.code, r.stderr)
	}
}

// TestSignalDuringCheck sends SIGTERM (and SIGINT) while a check runs whose
// grandchild would write a file after a second: flow must exit 130, print
// its report (status interrupted, naming the signal) as one JSON object,
// and the grandchild must never write.
func TestSignalDuringCheck(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			ws := workspace(t)
			cfg := writeFile(t, t.TempDir(), "op.toml", `
[checks.slow]
cmd = ["sh", "-c", "(sleep 1; touch grandchild-wrote) & touch started; sleep 30"]
`)
			cmd := exec.Command(flowBin, "check", "--trusted", "-c", cfg, "-w", ws)
			cmd.Env = hermeticEnv(t)
			var out, errb strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, filepath.Join(ws, "started"))
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			if code != 130 || !strings.Contains(errb.String(), "interrupted") {
				t.Errorf("flow check after %v = (%d, stderr %q), want 130 and \"interrupted\"", sig, code, errb.String())
			}
			// One JSON object on stdout: the check report, interrupted by the signal.
			var rep report.CheckReport
			dec := json.NewDecoder(strings.NewReader(out.String()))
			if err := dec.Decode(&rep); err != nil || dec.More() {
				t.Errorf("stdout after %v = %q (%v), want exactly one JSON object", sig, out.String(), err)
			} else if name := signalName(sig); rep.Status != report.StatusInterrupted || rep.Verified || !strings.Contains(rep.Reason, "interrupted by "+name) {
				t.Errorf("check report after %v = status %q, verified %v, reason %q; want interrupted by %s", sig, rep.Status, rep.Verified, rep.Reason, name)
			}
			time.Sleep(1500 * time.Millisecond)
			if _, err := os.Stat(filepath.Join(ws, "grandchild-wrote")); err == nil {
				t.Error("the check's grandchild survived the interrupt and wrote its file")
			}
		})
	}
}

// waitFor waits until path exists (bounded, so a broken flow fails the test).
func waitFor(t *testing.T, path string) {
	t.Helper()
	for i := 0; i < 200; i++ {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never appeared", path)
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}
