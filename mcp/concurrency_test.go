package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"flow/runtime/report"
)

// blockingRun is a fake Run that reports "started", then blocks until
// release is closed or ctx is done; it closes returned when it returns.
type blockingRun struct {
	release  chan struct{}
	returned chan struct{}
	ctxDone  bool
}

func newBlockingRun() *blockingRun {
	return &blockingRun{release: make(chan struct{}), returned: make(chan struct{})}
}

func (b *blockingRun) run(ctx context.Context, task string, progress func(string)) report.Run {
	defer close(b.returned)
	progress("started " + task)
	select {
	case <-b.release:
		return report.Run{Status: report.StatusOK, Verified: true, Task: task}
	case <-ctx.Done():
		b.ctxDone = true
		return report.Run{Status: report.StatusCancelled, Task: task, Error: "The run was cancelled"}
	}
}

func (b *blockingRun) waitReturned(t *testing.T) {
	t.Helper()
	select {
	case <-b.returned:
	case <-time.After(hangGuard):
		t.Fatal("the fake Run did not return")
	}
}

// TestProgressBeforeResult: with a progressToken every progress message
// becomes one notifications/progress, with an increasing counter, before the
// result, and none follows the result, even from a runtime that keeps
// calling progress after Run returned. 50 sessions, to shake out ordering.
func TestProgressBeforeResult(t *testing.T) {
	const steps = 20
	for i := range 50 {
		startLate, stopLate := make(chan struct{}), make(chan struct{})
		var late sync.WaitGroup
		rt := &fakeRuntime{run: func(_ context.Context, task string, progress func(string)) report.Run {
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Go(func() {
					for j := range steps / 4 {
						progress(fmt.Sprintf("step %d.%d", g, j))
					}
				})
			}
			wg.Wait()
			late.Go(func() { // misbehaving runtime: progress after returning
				<-startLate
				for {
					select {
					case <-stopLate:
						return
					default:
						progress("late")
					}
				}
			})
			return report.Run{Status: report.StatusOK, Verified: true, Task: task}
		}}
		c := startServer(t, rt)
		c.handshake()
		c.send(callLine(1, "flow_run", map[string]any{"task": "t"}, fmt.Sprintf("tok-%d", i)))
		seen := map[string]bool{}
		for n := 1; ; n++ {
			m := c.recvMsg()
			if m["id"] == 1.0 {
				if n != steps+1 {
					t.Fatalf("session %d: result after %d notifications, want %d", i, n-1, steps)
				}
				break
			}
			p, _ := m["params"].(map[string]any)
			if m["method"] != "notifications/progress" || p["progressToken"] != fmt.Sprintf("tok-%d", i) || p["progress"] != float64(n) {
				t.Fatalf("session %d: message %d = %v, want progress %d with the call's token", i, n, m, n)
			}
			seen[p["message"].(string)] = true
		}
		if len(seen) != steps {
			t.Fatalf("session %d: %d distinct progress messages, want %d", i, len(seen), steps)
		}
		close(startLate)
		c.send(`{"jsonrpc":"2.0","id":"sync","method":"ping"}`)
		c.expect(`{"jsonrpc":"2.0","id":"sync","result":{}}`)
		close(stopLate)
		late.Wait()
		if err := c.closeInput(); err != nil {
			t.Fatal(err)
		}
		if rest := c.rest(); len(rest) != 0 {
			t.Fatalf("session %d: %d lines after the result, the first: %s", i, len(rest), rest[0])
		}
	}
}

// TestNoProgressWithoutToken: a call without progressToken gets only its
// result.
func TestNoProgressWithoutToken(t *testing.T) {
	c := startServer(t, &fakeRuntime{})
	c.handshake()
	c.send(callLine(1, "flow_run", map[string]any{"task": "t"}, nil))
	if m := c.recvMsg(); m["id"] != 1.0 {
		t.Fatalf("first line = %v, want the result", m)
	}
}

// TestBusyAndAnswersDuringRun: while a flow_run runs, a second flow_run and
// a flow_check get a busy result, and ping, tools/list and flow_status are
// answered; after the run the slot is free again.
func TestBusyAndAnswersDuringRun(t *testing.T) {
	b := newBlockingRun()
	rt := &fakeRuntime{run: b.run}
	c := startServer(t, rt)
	c.handshake()
	c.send(callLine(1, "flow_run", map[string]any{"task": "first"}, "p"))
	c.expect(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"message":"started first"}}`)

	busy := func(id int, holder string) string {
		msg := fmt.Sprintf("busy: a %s is already in progress in this flow process; wait for it to finish or stop it", holder)
		sc := fmt.Sprintf(`{"status":"busy","verified":false,"reason":%q,"error":%q}`, msg, msg)
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":%q},{"type":"text","text":%q}],"structuredContent":%s,"isError":true}}`, id, msg, sc, sc)
	}
	c.send(callLine(2, "flow_run", map[string]any{"task": "second"}, nil))
	c.expect(busy(2, "run"))
	c.send(callLine(3, "flow_check", map[string]any{}, nil))
	c.expect(busy(3, "run"))
	c.send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	c.expect(`{"jsonrpc":"2.0","id":4,"result":{}}`)
	c.send(`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`)
	if m := c.recvMsg(); m["id"] != 5.0 || m["result"] == nil {
		t.Fatalf("tools/list during a run = %v, want a result", m)
	}
	c.send(callLine(6, "flow_status", map[string]any{}, nil))
	if m := c.recvMsg(); m["id"] != 6.0 || m["result"].(map[string]any)["isError"] != false {
		t.Fatalf("flow_status during a run = %v, want an ok result", m)
	}

	close(b.release)
	if m := c.recvMsg(); m["id"] != 1.0 || m["result"].(map[string]any)["isError"] != false {
		t.Fatalf("run result = %v, want id 1 ok", m)
	}
	waitFor(t, "the run slot to be released", func() bool { return slotFree(c.srv) })
	c.send(callLine(7, "flow_check", map[string]any{}, nil))
	if m := c.recvMsg(); m["id"] != 7.0 || m["result"].(map[string]any)["isError"] != false {
		t.Fatalf("check after the run = %v, want an ok result", m)
	}
	runs, checks := rt.calls()
	if len(runs) != 1 || len(checks) != 1 {
		t.Errorf("runtime saw runs %q checks %q, want one of each (busy calls never reach it)", runs, checks)
	}
}

// TestSessionsShareTheSlot: two sessions of one Server share the
// one-run-at-a-time slot.
func TestSessionsShareTheSlot(t *testing.T) {
	b := newBlockingRun()
	srv := NewServer(&fakeRuntime{run: b.run}, Options{})
	first := startSession(t, context.Background(), srv)
	second := startSession(t, context.Background(), srv)
	first.handshake()
	second.handshake()
	first.send(callLine(1, "flow_run", map[string]any{"task": "a"}, "p"))
	first.recvMsg() // progress: the run holds the slot
	second.send(callLine(1, "flow_run", map[string]any{"task": "b"}, nil))
	m := second.recvMsg()
	if sc := m["result"].(map[string]any)["structuredContent"].(map[string]any); sc["status"] != "busy" {
		t.Fatalf("second session's run = %v, want busy", m)
	}
	close(b.release)
	first.recvMsg()
}

// TestCancelledCallGetsNoResponse: notifications/cancelled for the running
// call cancels the runtime's context; no response (neither the cancelled
// report nor mcp-go's -32603 "context canceled") is written for it, and the
// slot is released.
func TestCancelledCallGetsNoResponse(t *testing.T) {
	b := newBlockingRun()
	rt := &fakeRuntime{run: b.run}
	c := startServer(t, rt)
	c.handshake()
	c.send(callLine(1, "flow_run", map[string]any{"task": "t"}, "p"))
	c.recvMsg() // progress: running
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99,"reason":"other"}}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"1"}}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":true}}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	c.expect(`{"jsonrpc":"2.0","id":2,"result":{}}`)
	select {
	case <-b.returned:
		t.Fatal("a cancellation naming another id cancelled the run")
	default:
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user"}}`)
	b.waitReturned(t)
	if !b.ctxDone {
		t.Fatal("the run returned without its context being cancelled")
	}
	waitFor(t, "the run slot to be released", func() bool { return slotFree(c.srv) })
	c.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	c.expect(`{"jsonrpc":"2.0","id":3,"result":{}}`)
	if err := c.closeInput(); err != nil {
		t.Fatal(err)
	}
	if rest := c.rest(); len(rest) != 0 {
		t.Fatalf("lines after cancellation: %q, want none (no response to a cancelled request)", rest)
	}
}

// TestEOFLetsRunFinish: at end of input the running call is not
// cancelled; Serve waits for it and its report is written.
func TestEOFLetsRunFinish(t *testing.T) {
	b := newBlockingRun()
	c := startServer(t, &fakeRuntime{run: b.run})
	c.handshake()
	c.send(callLine(1, "flow_run", map[string]any{"task": "t"}, "p"))
	c.recvMsg()
	c.in.Close()
	select {
	case err := <-c.done:
		t.Fatalf("Serve = %v before the running call returned", err)
	case <-b.returned:
		t.Fatal("the run returned before it was released: EOF cancelled it")
	case <-time.After(50 * time.Millisecond):
	}
	close(b.release)
	if err := c.wait(); err != nil {
		t.Fatalf("Serve = %v, want nil at EOF", err)
	}
	if b.ctxDone {
		t.Error("the run's context was cancelled at EOF")
	}
	rest := c.rest()
	if len(rest) != 1 || !strings.Contains(rest[0], `"id":1`) || !strings.Contains(rest[0], `"status":"ok"`) {
		t.Fatalf("lines after EOF = %q, want the ok report of id 1", rest)
	}
}

// TestEOFThenContextCancelIsQuiet: cancelling Serve's context while the
// running call finishes after end of input (a client closes stdin and sends
// SIGTERM at once) cancels the call, writes nothing more and returns the
// context's error.
func TestEOFThenContextCancelIsQuiet(t *testing.T) {
	b := newBlockingRun()
	ctx, cancel := context.WithCancel(context.Background())
	c := startServerContext(t, ctx, &fakeRuntime{run: b.run})
	c.handshake()
	c.send(callLine(1, "flow_run", map[string]any{"task": "t"}, "p"))
	c.recvMsg()
	c.in.Close()
	cancel()
	if err := c.wait(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Serve = %v, want context.Canceled", err)
	}
	if !b.ctxDone {
		t.Error("the run's context was not cancelled")
	}
	if rest := c.rest(); len(rest) != 0 {
		t.Fatalf("lines after interruption = %q, want none", rest)
	}
}

// TestContextCancelIsQuiet: cancelling Serve's context (SIGTERM) cancels the
// running call, writes nothing more and returns the context's error.
func TestContextCancelIsQuiet(t *testing.T) {
	b := newBlockingRun()
	ctx, cancel := context.WithCancel(context.Background())
	c := startServerContext(t, ctx, &fakeRuntime{run: b.run})
	c.handshake()
	c.send(callLine(1, "flow_run", map[string]any{"task": "t"}, "p"))
	c.recvMsg()
	cancel()
	if err := c.wait(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Serve = %v, want context.Canceled", err)
	}
	if !b.ctxDone {
		t.Error("the run's context was not cancelled")
	}
	if rest := c.rest(); len(rest) != 0 {
		t.Fatalf("lines after interruption = %q, want none", rest)
	}
}
