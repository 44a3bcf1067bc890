package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"flow/internal/text"
)

// session is one Serve call: the frame loop and its lifecycle state.
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
	longMu      sync.Mutex
	running     *call   // the running flow_run or flow_check job of this session
	watched     []*call // the calls of tasks in worker processes it watches
	// ended is set when the session ends; the tasks it started in worker
	// processes go on, without notifications.
	ended atomic.Bool
}

func (s *Server) newSession(ctx context.Context, w io.Writer) *session {
	n := s.sessions.Add(1)
	ss := &session{srv: s, id: fmt.Sprintf("flow-stdio-%d", n), out: newWire(w)}
	ss.log = s.log.With("session", ss.id)
	// Requests do not inherit ctx's cancellation directly: when ctx ends,
	// run first shuts the output and only then cancels them, so a cancelled
	// call cannot slip its report out in between.
	ss.base, ss.stop = context.WithCancel(context.WithoutCancel(ctx))
	return ss
}

// frameResult is one result of the reading goroutine.
type frameResult struct {
	frame []byte
	err   error
}

// run is the frame loop.
func (ss *session) run(ctx context.Context, r io.Reader) error {
	frames := make(chan frameResult)
	done := make(chan struct{})
	defer close(done)
	go readFrames(newFrameReader(r, MaxFrameBytes), frames, done)

	ss.log.Debug("session start")
	for {
		select {
		case <-ctx.Done():
			ss.out.shut()
			ss.end("interrupted")
			return ctx.Err()
		case <-ss.out.dead:
			ss.end("write failed: " + ss.out.failed().Error())
			return nil
		case fr := <-frames:
			switch {
			case ctx.Err() != nil:
				// Both were ready and select chose the frame: the
				// interruption wins, and the frame is not answered.
				ss.out.shut()
				ss.end("interrupted")
				return ctx.Err()
			case fr.err == nil:
				ss.handle(fr.frame)
			case errors.Is(fr.err, io.EOF):
				// The running flow_run or flow_check finishes first, as in
				// a loop that reads the next frame only after answering;
				// an interruption meanwhile (a client closes stdin and
				// sends SIGTERM at once) is handled as at any other time.
				if ss.waitCalls(ctx) != nil {
					ss.out.shut()
					ss.end("interrupted")
					return ctx.Err()
				}
				ss.end("end of input")
				return nil
			case errors.Is(fr.err, errFrameTooLarge):
				_ = ss.out.error(nil, errTooLarge)
				ss.end("oversized frame")
				return nil
			default:
				ss.end("read failed")
				return fmt.Errorf("read frame: %w", fr.err)
			}
		}
	}
}

// readFrames feeds frames to the loop until an error, which it sends too.
func readFrames(fr *frameReader, frames chan<- frameResult, done <-chan struct{}) {
	for {
		frame, err := fr.next()
		select {
		case frames <- frameResult{frame, err}:
		case <-done:
			return
		}
		if err != nil {
			return
		}
	}
}

// waitCalls waits for the running call, if any, to return; it returns
// ctx's error when ctx ends first.
func (ss *session) waitCalls(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		ss.calls.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// end cancels what is still running and waits for it. Tasks running in
// worker processes go on; their progress stops here.
func (ss *session) end(why string) {
	ss.stop()
	ss.calls.Wait()
	ss.ended.Store(true)
	ss.longMu.Lock()
	for _, c := range ss.watched {
		c.finish()
	}
	ss.watched = nil
	ss.longMu.Unlock()
	ss.log.Debug("session end", "reason", why)
}

// watchCall keeps c, the call of a task in a worker process, to end its
// notifications with the session.
func (ss *session) watchCall(c *call) {
	ss.longMu.Lock()
	defer ss.longMu.Unlock()
	if ss.ended.Load() {
		c.finish()
		return
	}
	ss.watched = append(ss.watched, c)
}

// handle answers one frame. Only a flow_run or flow_check job that started
// is still running when it returns.
func (ss *session) handle(frame []byte) {
	if isBlank(frame) {
		return
	}
	m, perr := parseMessage(frame)
	if perr != nil {
		ss.log.Debug("invalid frame", "error", perr.message)
		_ = ss.out.error(nil, perr)
		return
	}
	if m.id == nil {
		ss.notification(m)
		return
	}
	if m.params != nil && !isObject(m.params) {
		_ = ss.out.error(m.id, errParamsObject)
		return
	}
	ss.log.Info("mcp.request", "mcp.method", text.ClipBytes(m.method, 100), "id", string(m.id))
	switch {
	case m.method == "ping":
		ss.result(m.id, struct{}{})
	case m.method == "initialize":
		ss.initialize(m)
	case !ss.ready:
		_ = ss.out.error(m.id, errNotReady)
	case m.method == "tools/list":
		ss.result(m.id, ss.srv.listTools(ss.tasks))
	case m.method == "tools/call":
		ss.callTool(m)
	case strings.HasPrefix(m.method, "tasks/") && ss.tasks:
		ss.taskRequest(m)
	default:
		_ = ss.out.error(m.id, &rpcError{code: codeMethodNotFound, message: "Method not found: " + text.ClipBytes(m.method, 100)})
	}
}

// notification handles a message without id. Notifications never produce a
// reply and never execute anything; params that are not an object are
// dropped with the notification.
func (ss *session) notification(m message) {
	if m.params != nil && !isObject(m.params) {
		return
	}
	switch m.method {
	case "notifications/initialized":
		if ss.initOK && !ss.ready {
			ss.ready = true
			ss.log.Debug("session ready")
		}
	case "notifications/cancelled":
		ss.cancel(m.params)
	}
}

// cancel cancels the running call named by params.requestId. The call's
// response is then never written.
func (ss *session) cancel(params json.RawMessage) {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil || !validID(p["requestId"]) {
		return
	}
	key := idKey(p["requestId"])
	ss.longMu.Lock()
	c := ss.running
	ss.longMu.Unlock()
	if c != nil && c.key == key {
		ss.log.Info("request cancelled by the client", "tool", c.tool, "id", string(c.id))
		c.cancelled.Store(true)
		c.stop()
	}
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
