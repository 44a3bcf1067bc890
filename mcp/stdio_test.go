package mcp

import (
	"bytes"
	"context"
	"io"
	"log"
	"log/slog"
	"os"
	"strings"
	"testing"

	"flow/runtime/report"
)

// TestNothingOnStderr runs a session full of errors, a panic, a busy call
// and a cancellation with os.Stderr and the standard logger redirected, and
// checks that nothing was written there: stdout carries the protocol and
// diagnostics go only to Options.Logger. (Not parallel: it swaps process
// globals.)
func TestNothingOnStderr(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	log.SetOutput(w)
	defer func() {
		os.Stderr = stderr
		log.SetOutput(stderr)
	}()
	captured := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(r)
		captured <- string(b)
	}()

	var logged bytes.Buffer
	b := newBlockingRun()
	rt := &fakeRuntime{
		run: func(ctx context.Context, task string, progress func(string)) report.Run {
			if task == "block" {
				return b.run(ctx, task, progress)
			}
			return report.Run{Status: report.StatusOK, Task: task}
		},
		check: func(context.Context, string) report.CheckReport { panic("boom") },
	}
	srv := NewServer(rt, Options{Logger: slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	c := startSession(t, context.Background(), srv)
	for _, line := range goldenRequests {
		c.send(line)
	}
	c.send(callLine("boom", "flow_check", map[string]any{}, nil))
	c.send(`{"jsonrpc":"2.0","id":"sentinel","method":"ping"}`)
	for m := c.recvMsg(); m["id"] != "sentinel"; m = c.recvMsg() {
	}
	waitFor(t, "the earlier calls to finish", func() bool { return slotFree(srv) })
	c.send(callLine("run", "flow_run", map[string]any{"task": "block"}, "p"))
	waitFor(t, "the run to start", func() bool { return !slotFree(srv) })
	c.send(callLine("busy", "flow_run", map[string]any{"task": "t"}, nil))
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"run"}}`)
	b.waitReturned(t)
	if err := c.closeInput(); err != nil {
		t.Fatal(err)
	}
	c.rest()

	os.Stderr = stderr
	log.SetOutput(stderr)
	w.Close()
	if got := <-captured; got != "" {
		t.Errorf("the session wrote to stderr:\n%s", got)
	}
	for _, want := range []string{"mcp.request", "panic recovered", "request cancelled by the client", "response to a cancelled request not sent"} {
		if !strings.Contains(logged.String(), want) {
			t.Errorf("Options.Logger output lacks %q:\n%s", want, logged.String())
		}
	}
}
