package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"flow/internal/text"
	"flow/runtime/job"
	"flow/runtime/report"
)

var update = flag.Bool("update", false, "rewrite mcp/testdata golden files")

// hangGuard bounds every wait of a test for a reply; it catches a server
// that stopped answering and is not a performance assertion.
const hangGuard = 10 * time.Second

// fakeRuntime is a hand-written Runtime whose jobs run under the runtime's
// real job system (a job.Gate), so busy and cancellation behave as in flow.
// It records every call; the optional functions replace the default
// behaviour.
type fakeRuntime struct {
	gate job.Gate

	mu       sync.Mutex
	runs     []string
	checks   []string
	statuses int

	run    func(ctx context.Context, task string, progress func(string)) report.Run
	check  func(ctx context.Context, name string) report.CheckReport
	status func(ctx context.Context) report.Status
	review func(runID string, keep, revert []string) report.ReviewReport
}

func (f *fakeRuntime) StartRun(ctx context.Context, task string, progress func(runID, message string)) (*job.Job[report.Run], error) {
	return job.Start(&f.gate, ctx, job.KindRun, func(ctx context.Context, j *job.Job[report.Run]) (report.Run, string) {
		runID := fmt.Sprintf("run-%d", j.ID)
		progress(runID, "")
		rep := f.Run(ctx, task, func(m string) { progress(runID, m) })
		return rep, rep.Status
	}, func(p any) report.Run {
		return report.Run{Status: report.StatusError, Error: job.PanicMessage(job.KindRun, p)}
	})
}

func (f *fakeRuntime) StartCheck(ctx context.Context, name string) (*job.Job[report.CheckReport], error) {
	return job.Start(&f.gate, ctx, job.KindCheck, func(ctx context.Context, _ *job.Job[report.CheckReport]) (report.CheckReport, string) {
		rep := f.Check(ctx, name)
		return rep, rep.Status
	}, func(p any) report.CheckReport {
		return report.CheckReport{Status: report.StatusError, Error: job.PanicMessage(job.KindCheck, p)}
	})
}

func (f *fakeRuntime) Review(_ context.Context, runID string, keep, revert []string) (report.ReviewReport, error) {
	f.mu.Lock()
	fn := f.review
	f.mu.Unlock()
	if fn != nil {
		return fn(runID, keep, revert), nil
	}
	return report.ReviewReport{Status: report.StatusOK, RunID: runID, Hunks: []report.Hunk{}}, nil
}

func (f *fakeRuntime) Run(ctx context.Context, task string, progress func(string)) report.Run {
	f.mu.Lock()
	f.runs = append(f.runs, task)
	fn := f.run
	f.mu.Unlock()
	if fn != nil {
		return fn(ctx, task, progress)
	}
	progress("planner  start")
	return report.Run{
		Status: report.StatusOK, Verified: true, Task: task, RunID: "run-1", Workspace: "/ws",
		StartedAt: "2026-01-02T03:04:05Z", Roles: []report.Role{}, Events: []report.Event{},
		ChangedFiles: []string{"a.go"}, Checks: []report.CheckResult{}, VerificationHistory: []report.Verification{},
		Summary: "done <ok> & \"quoted\"",
	}
}

func (f *fakeRuntime) Check(ctx context.Context, name string) report.CheckReport {
	f.mu.Lock()
	f.checks = append(f.checks, name)
	fn := f.check
	f.mu.Unlock()
	if fn != nil {
		return fn(ctx, name)
	}
	if name != "" && name != "test" {
		return report.CheckReport{Status: report.StatusUnverified, Checks: []report.CheckResult{{
			Name: name, Source: report.SourceCheck, Required: true, Filetypes: []string{},
			Status: report.StatusUnavailable, Error: "Unknown check",
		}}, Reason: "no required check passed"}
	}
	rc := 0
	return report.CheckReport{Status: report.StatusOK, Verified: true, Checks: []report.CheckResult{{
		Name: "test", Source: report.SourceCheck, Cmd: []string{"go", "test", "./..."}, Timeout: 60000,
		Required: true, Kind: "test", Filetypes: []string{"go"}, Status: report.StatusOK, Returncode: &rc,
		Stdout: "ok\n",
	}}, Reason: "all required checks passed"}
}

func (f *fakeRuntime) Status(ctx context.Context) report.Status {
	f.mu.Lock()
	f.statuses++
	fn := f.status
	f.mu.Unlock()
	if fn != nil {
		return fn(ctx)
	}
	noEditor := "No editor bridge configured"
	return report.Status{
		Status: report.StatusOK, Version: "test", Workspace: "/ws", Trusted: true,
		Backend:  report.Backend{Type: "ollama", API: "native", BaseURL: "http://127.0.0.1:11434", Connectivity: "unverified"},
		Models:   report.Models{Planner: "m", Coder: "m", Reviewer: "m"},
		Checks:   []report.CheckSummary{{Name: "test", Required: true, Kind: "test", Filetypes: []string{"go"}}},
		Editor:   report.Editor{Status: report.StatusUnavailable, Tools: []string{}, Error: &noEditor},
		Warnings: []string{}, Capabilities: report.Capabilities{SingleWriter: true, ReadOnlyConcurrency: 1},
	}
}

func (f *fakeRuntime) calls() (runs, checks []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.runs...), append([]string(nil), f.checks...)
}

// client drives one Serve call over io.Pipe with raw lines.
type client struct {
	t     testing.TB
	srv   *Server
	in    *io.PipeWriter
	lines chan []byte
	done  chan error
}

// startServer starts a session for rt on pipes; the session ends when the
// test does.
func startServer(t testing.TB, rt Runtime) *client {
	return startServerContext(t, context.Background(), rt)
}

func startServerContext(t testing.TB, ctx context.Context, rt Runtime) *client {
	t.Helper()
	return startSession(t, ctx, NewServer(rt, Options{Version: "test"}))
}

// startSession starts one more session of srv.
func startSession(t testing.TB, ctx context.Context, srv *Server) *client {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &client{t: t, srv: srv, in: inW, lines: make(chan []byte, 4096), done: make(chan error, 1)}
	go func() {
		err := srv.Serve(ctx, inR, outW)
		outW.Close()
		c.done <- err
	}()
	go func() {
		br := bufio.NewReader(outR)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				c.lines <- line
			}
			if err != nil {
				close(c.lines)
				return
			}
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		inR.Close()
		select {
		case <-c.done:
		case <-time.After(hangGuard):
			t.Errorf("Serve did not return after the test")
		}
		outR.Close()
	})
	return c
}

// send writes one frame (a newline is added).
func (c *client) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatalf("write %q: %v", text.Clip(line, 80), err)
	}
}

// sendJSON writes v as one frame.
func (c *client) sendJSON(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	c.send(string(b))
}

// recv returns the next line the server wrote.
func (c *client) recv() []byte {
	c.t.Helper()
	select {
	case line, ok := <-c.lines:
		if !ok {
			c.t.Fatalf("recv: output closed")
		}
		return line
	case <-time.After(hangGuard):
		c.t.Fatalf("recv: no line within %v", hangGuard)
	}
	return nil
}

// recvMsg returns the next line decoded.
func (c *client) recvMsg() map[string]any {
	c.t.Helper()
	line := c.recv()
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		c.t.Fatalf("server wrote a non-JSON line %q: %v", line, err)
	}
	return m
}

// expect reads the next line and compares it with want as JSON.
func (c *client) expect(want string) {
	c.t.Helper()
	got := c.recv()
	if diff := jsonDiff(want, string(got)); diff != "" {
		c.t.Fatalf("reply mismatch (-want +got):\n%s", diff)
	}
}

// closeInput ends the input and returns Serve's result.
func (c *client) closeInput() error {
	c.t.Helper()
	c.in.Close()
	return c.wait()
}

// wait returns Serve's result.
func (c *client) wait() error {
	c.t.Helper()
	select {
	case err := <-c.done:
		c.done <- err
		return err
	case <-time.After(hangGuard):
		c.t.Fatalf("Serve did not return within %v", hangGuard)
	}
	return nil
}

// rest returns every line written until the output closes.
func (c *client) rest() []string {
	c.t.Helper()
	var out []string
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				return out
			}
			out = append(out, strings.TrimSuffix(string(line), "\n"))
		case <-time.After(hangGuard):
			c.t.Fatalf("output did not close within %v", hangGuard)
		}
	}
}

// handshake initializes the session and makes it ready.
func (c *client) handshake() {
	c.t.Helper()
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
	m := c.recvMsg()
	if m["result"] == nil {
		c.t.Fatalf("initialize failed: %v", m)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// callLine is a tools/call request line.
func callLine(id any, tool string, args any, token any) string {
	params := map[string]any{"name": tool, "arguments": args}
	if token != nil {
		params["_meta"] = map[string]any{"progressToken": token}
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
	return string(b)
}

// jsonDiff compares two JSON texts as values.
func jsonDiff(want, got string) string {
	var w, g any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		return "want is not JSON: " + err.Error()
	}
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		return "got is not JSON: " + err.Error() + ": " + got
	}
	return cmp.Diff(w, g)
}

// errorCode returns the error code of a reply, or 0.
func errorCode(m map[string]any) int {
	e, ok := m["error"].(map[string]any)
	if !ok {
		return 0
	}
	code, _ := e["code"].(float64)
	return int(code)
}

// waitFor polls cond until it holds; it guards against hangs only.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// slotFree reports whether no flow_run or flow_check holds the workspace:
// the runtime's job gate is free.
func slotFree(srv *Server) bool {
	return srv.rt.(*fakeRuntime).gate.Current() == nil
}
