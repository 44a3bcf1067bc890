package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"flow/runtime/report"
)

// openPTY opens a pseudo-terminal pair: the test reads the master, the
// child writes to the slave, which is a real terminal for isatty.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		unix.Close(fd)
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		unix.Close(fd)
		t.Fatalf("pty number: %v", err)
	}
	master = os.NewFile(uintptr(fd), "/dev/ptmx")
	slave, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		t.Fatalf("open pty slave: %v", err)
	}
	t.Cleanup(func() { master.Close(); slave.Close() })
	return master, slave
}

// runFlowTTY runs flow with stdout on a terminal and returns what the
// terminal showed (line endings back to "\n") and the exit code.
func runFlowTTY(t *testing.T, dir string, env []string, args ...string) (string, int) {
	t.Helper()
	master, slave := openPTY(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, flowBin, args...)
	cmd.Dir, cmd.Env = dir, env
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = slave, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	var out bytes.Buffer
	done := make(chan struct{})
	go func() {
		// Reading the master ends with EIO once the child and every copy of
		// the slave are gone.
		io.Copy(&out, master)
		close(done)
	}()
	err := cmd.Wait()
	<-done
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("flow %v: %v", args, err)
	}
	return strings.ReplaceAll(out.String(), "\r\n", "\n"), code
}

// TestHumanOutputOnATerminal runs each report command with stdout on a real
// terminal: a summary a person reads, led by the status and the reason, with
// the failing check's output; with --json, or piped, the very same JSON
// object as before.
func TestHumanOutputOnATerminal(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	dir := t.TempDir()
	cfg := writeFile(t, dir, "op.toml", `
workspace_dir = `+tomlString(ws)+`
[checks.lint]
cmd = ["sh", "-c", "echo linted"]
kind = "lint"
filetypes = ["go"]
[checks.test]
cmd = ["sh", "-c", "echo '--- FAIL: TestAdd (0.00s)'; echo '    calc_test.go:7: Add(2, 3) = -1, want 5'; echo FAIL; exit 1"]
kind = "test"
`)
	env := hermeticEnv(t, "NO_COLOR=1", "TERM=xterm")

	out, code := runFlowTTY(t, dir, env, "check", "--trusted", "-c", cfg)
	if code != 1 {
		t.Fatalf("flow check on a terminal = %d\n%s", code, out)
	}
	for _, want := range []string{
		"✗ not verified · failed\n  The required check test (exit 1) failed; its output says why\n",
		"checks\n  ✓ lint  ok  ",
		"  ✗ test  failed (exit 1)  ",
		"      --- FAIL: TestAdd (0.00s)\n          calc_test.go:7: Add(2, 3) = -1, want 5\n      FAIL\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "{\"status\"") || strings.Contains(out, "\x1b[") {
		t.Errorf("the summary holds JSON or colours despite NO_COLOR:\n%s", out)
	}

	out, code = runFlowTTY(t, dir, env, "status", "-c", cfg)
	if code != 0 || !strings.HasPrefix(out, "✓ flow ") || !strings.Contains(out, ws+" · read-only\n") ||
		!strings.Contains(out, "  config:  "+cfg+"\n") || !strings.Contains(out, "  test  required test") {
		t.Errorf("status summary = %d:\n%s", code, out)
	}

	out, code = runFlowTTY(t, dir, env, "undo", "-c", cfg)
	if code != 1 || !strings.HasPrefix(out, "! undo · unverified") {
		t.Errorf("undo summary = %d:\n%s", code, out)
	}

	// --json on a terminal and a pipe both give exactly one JSON object,
	// byte for byte the same.
	jsonTTY, code := runFlowTTY(t, dir, env, "status", "--json", "-c", cfg)
	piped := runFlow(t, dir, env, "status", "-c", cfg)
	if code != 0 || piped.code != 0 || jsonTTY != piped.stdout || !strings.HasPrefix(piped.stdout, `{"status":"ok",`) ||
		strings.Count(piped.stdout, "\n") != 1 {
		t.Errorf("status --json on a terminal:\n%q\npiped:\n%q", jsonTTY, piped.stdout)
	}

	// Without --trusted, check says exactly why nothing ran.
	out, code = runFlowTTY(t, dir, env, "check", "-c", cfg)
	if code != 1 || !strings.HasPrefix(out, "! not verified\n  Checks were not run because flow was started without --trusted: run it with --trusted") {
		t.Errorf("untrusted check summary = %d:\n%s", code, out)
	}

	// Piped, stdout is byte for byte the report's one JSON object: the
	// report re-encoded gives the same bytes.
	pipedCheck := runFlow(t, dir, env, "check", "--trusted", "-c", cfg)
	var rep report.CheckReport
	if err := json.Unmarshal([]byte(pipedCheck.stdout), &rep); err != nil {
		t.Fatalf("piped check stdout is not one JSON report: %v\n%q", err, pipedCheck.stdout)
	}
	again, err := report.Marshal(rep)
	if err != nil || string(again)+"\n" != pipedCheck.stdout || pipedCheck.code != 1 {
		t.Errorf("piped check stdout (exit %d) is not exactly the report's JSON:\n%q\nre-encoded:\n%q", pipedCheck.code, pipedCheck.stdout, again)
	}
	if rep.Reason != "The required check test (exit 1) failed; its output says why" {
		t.Errorf("piped check reason = %q", rep.Reason)
	}

	// Colours unless NO_COLOR.
	colorEnv := hermeticEnv(t, "TERM=xterm")
	out, _ = runFlowTTY(t, dir, colorEnv, "check", "--trusted", "-c", cfg, "test")
	if !strings.Contains(out, "\x1b[31m✗\x1b[0m") {
		t.Errorf("no colour on a terminal without NO_COLOR:\n%q", out)
	}
}

// TestDoctorHumanOutput covers the last report command, doctor, against an
// unreachable backend.
func TestDoctorHumanOutput(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	dir := t.TempDir()
	cfg := writeFile(t, dir, "op.toml", "workspace_dir = "+tomlString(ws)+"\n[ollama]\nbase_url = \"http://127.0.0.1:9\"\n")
	out, code := runFlowTTY(t, dir, hermeticEnv(t, "NO_COLOR=1"), "doctor", "-c", cfg)
	if code != 1 || !strings.Contains(out, "doctor · ") || !strings.Contains(out, "servers\n  ✗ ollama http://127.0.0.1:9 (native) for planner, coder, reviewer") {
		t.Errorf("doctor summary = %d:\n%s", code, out)
	}
}
