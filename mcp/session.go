package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// session is one Serve call: its writer, its lifecycle state and its
// running calls. Its frame loop and dispatch (serve.go) sit on top of
// everything a session does: initialize (lifecycle.go), the steps of a
// tools/call (call.go and the files below it) and the tasks/* requests
// (tasks.go).
type session struct {
	srv *Server
	id  string
	out *wire
	log *slog.Logger

	// base is the context of every request and job of the session; it is
	// cancelled when the session ends.
	base   context.Context
	stop   context.CancelFunc
	calls  sync.WaitGroup
	initOK bool // initialize succeeded (frame loop only)
	ready  bool // notifications/initialized followed it (frame loop only)
	// tasks: the session speaks MCP's tasks utility (the server has a task
	// store and the negotiated version has tasks, 2025-11-25);
	// clientTasks: the client declared the tasks capability too (it gets
	// notifications/tasks/status); wait: the default wait_seconds of a
	// plain flow_run for this client (0: until the end). Set by initialize.
	tasks       bool
	clientTasks bool
	wait        time.Duration
	// elicit: the client declared form-mode elicitation (set by
	// initialize); a plain flow_run that leaves an unverified change then
	// asks the person what to do with it (run_decision.go), and so does
	// tasks/result for such a flow_run task (task_decision.go). peer holds the
	// server's requests to the client that await their response.
	elicit  bool
	peer    *peerRequests
	longMu  sync.Mutex
	running *jobCall   // the running flow_run or flow_check job of this session
	watched []*jobCall // the calls of tasks in worker processes it watches
	// requests are the session's other cancellable requests (tasks/result),
	// by idKey: notifications/cancelled ends their context.
	requests map[string]*context.CancelCauseFunc
	// ended is set when the session ends; the tasks it started in worker
	// processes go on, without notifications.
	ended atomic.Bool
}

func (s *Server) newSession(ctx context.Context, w io.Writer) *session {
	n := s.sessions.Add(1)
	ss := &session{srv: s, id: fmt.Sprintf("flow-stdio-%d", n), out: newWire(w)}
	ss.peer = newPeerRequests(ss.out)
	ss.log = s.log.With("session", ss.id)
	// Requests do not inherit ctx's cancellation directly: when ctx ends,
	// run first shuts the output and only then cancels them, so a cancelled
	// call cannot slip its report out in between.
	ss.base, ss.stop = context.WithCancel(context.WithoutCancel(ctx))
	return ss
}

// watchCall keeps c, the call of a task in a worker process, to end its
// notifications with the session.
func (ss *session) watchCall(c *jobCall) {
	ss.longMu.Lock()
	defer ss.longMu.Unlock()
	if ss.ended.Load() {
		c.finish()
		return
	}
	ss.watched = append(ss.watched, c)
}

// result writes a successful response with v as its result.
func (ss *session) result(id json.RawMessage, v any) {
	b, err := marshal(v)
	if err == nil {
		err = ss.out.result(id, b)
	} else {
		ss.log.Error("encode result", "error", err)
		err = ss.out.error(id, &rpcError{code: codeInternalError, message: "Internal error"})
	}
	if err != nil {
		ss.log.Warn("write reply", "error", err)
	}
}

// replyTool writes a tools/call result, or -32603 for err (a tool that
// panicked or returned data that is not JSON).
func (ss *session) replyTool(id json.RawMessage, res *mcp.CallToolResult, err error) {
	var result json.RawMessage
	if err == nil {
		result, err = toolResultJSON(res)
	}
	if err == nil {
		err = ss.out.result(id, result)
	} else {
		err = ss.out.error(id, &rpcError{code: codeInternalError, message: err.Error()})
	}
	if err != nil {
		ss.log.Warn("write reply", "error", err)
	}
}

// recovered logs a tool's panic and returns the error answered for it.
func (ss *session) recovered(tool string, p any) error {
	err := panicError(tool, p)
	ss.log.Error("tool panicked", "tool", tool, "error", err.Error())
	return err
}

// refuse answers a call that will not run with res, a result with
// isError: as the tool result, or for a task-augmented call as a task that
// has already failed with it, so that a requestor that asked for a task
// always gets one and tasks/result hands it the result.
func (ss *session) refuse(rq *toolRequest, res *mcp.CallToolResult) {
	if rq.params.task == nil {
		rq.reply(res, nil)
		return
	}
	task, err := ss.srv.failedTask(rq.def.name, rq.params.arguments, rq.params.task.ttl, res, "")
	if err != nil {
		ss.log.Warn("refused task not recorded", "tool", rq.def.name, "error", err.Error())
		rq.reply(res, nil)
		return
	}
	ss.result(rq.id, createTaskResult{Task: ss.srv.wireTask(task)})
}

// setRunning makes c the session's running plain call, the one
// notifications/cancelled can name.
func (ss *session) setRunning(c *jobCall) {
	ss.longMu.Lock()
	ss.running = c
	ss.longMu.Unlock()
}

// clearRunning forgets c as the session's running plain call.
func (ss *session) clearRunning(c *jobCall) {
	ss.longMu.Lock()
	if ss.running == c {
		ss.running = nil
	}
	ss.longMu.Unlock()
}

// errRequestCancelled is the cause of a request's context that
// notifications/cancelled ended.
var errRequestCancelled = errors.New("the client cancelled the request")

// cancellable returns the context of request id, which
// notifications/cancelled naming it ends with errRequestCancelled, and the
// function that forgets it once it is answered.
func (ss *session) cancellable(id json.RawMessage) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ss.base)
	key, mine := idKey(id), &cancel
	ss.longMu.Lock()
	if ss.requests == nil {
		ss.requests = make(map[string]*context.CancelCauseFunc)
	}
	ss.requests[key] = mine
	ss.longMu.Unlock()
	return ctx, func() {
		ss.longMu.Lock()
		if ss.requests[key] == mine { // a reused id may have replaced it
			delete(ss.requests, key)
		}
		ss.longMu.Unlock()
		cancel(nil)
	}
}
