package tui

import (
	"context"
	"io"
	"testing"
	"time"

	"flow/runtime/report"
)

// startProgram runs Run with IsTerminal set, reading keys from a pipe; it
// returns the pipe's writer and a channel with Run's exit code.
func startProgram(t *testing.T, ctx context.Context, rt Runtime) (io.WriteCloser, <-chan int) {
	t.Helper()
	t.Setenv("TERM", "xterm-256color")
	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.Close() })
	done := make(chan int, 1)
	opts := testOptions
	opts.IsTerminal = true
	go func() { done <- Run(ctx, rt, opts, pr, io.Discard) }()
	return pw, done
}

// exitCode waits for Run's exit code (a hang guard, not a timing check).
func exitCode(t *testing.T, done <-chan int) int {
	t.Helper()
	select {
	case code := <-done:
		return code
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return")
		return -1
	}
}

func TestRunProgramQuit(t *testing.T) {
	tests := []struct{ name, keys string }{
		{"quit", "/quit\r"},
		{"exit", "/exit\r"},
		{"ctrl-d", "\x04"},
		{"ctrl-c twice", "\x03\x03"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, done := startProgram(t, t.Context(), newFake())
			if _, err := io.WriteString(in, tt.keys); err != nil {
				t.Fatal(err)
			}
			if code := exitCode(t, done); code != ExitOK {
				t.Errorf("exit code = %d, want 0", code)
			}
		})
	}
}

// TestRunProgramContextCancelled is SIGTERM: main cancels ctx; the program
// must end, cancel the running task, wait for it to return, and exit 130.
func TestRunProgramContextCancelled(t *testing.T) {
	rt := newFake()
	rt.gate = make(chan struct{})
	rt.report = report.Run{ChangedFiles: []string{"a.go"}}
	ctx, cancel := context.WithCancel(t.Context())
	in, done := startProgram(t, ctx, rt)
	if _, err := io.WriteString(in, "long task\r"); err != nil {
		t.Fatal(err)
	}
	wait(t, rt.emitted, "the run to start")
	cancel()
	if code := exitCode(t, done); code != ExitInterrupted {
		t.Errorf("exit code = %d, want 130", code)
	}
	select {
	case <-rt.cancelled:
	default:
		t.Error("the running task did not observe the cancellation")
	}
	if !rt.returned.Load() {
		t.Error("Run returned before the running task did")
	}
}
