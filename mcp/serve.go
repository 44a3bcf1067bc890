package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"flow/internal/text"
)

// The top of a session: [Server.Serve], the frame loop, the session's end
// and the dispatch of each frame to what answers it (doc/design.md
// §10.2–§10.8).

// Serve runs one MCP session: it reads frames from r and writes replies and
// notifications to w until the end of r, an oversized frame (after one
// -32700 reply) or a write error, and then returns nil, after the running
// flow_run or flow_check has returned (at the end of r it runs to its end,
// otherwise it is cancelled). When ctx is cancelled it
// cancels the running call, waits for it, writes nothing more and returns
// ctx.Err(). Another read error is returned wrapped.
//
// The goroutine reading r may stay blocked in r.Read after Serve returns
// because of ctx or a write error; it ends when r is closed.
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	return s.newSession(ctx, w).run(ctx, r)
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
				// A question it asked the client can no longer be
				// answered.
				ss.peer.abandon()
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

// handle answers one frame. Only a flow_run or flow_check job that started
// is still running when it returns. A response goes to the server's
// request it answers, and is never answered itself.
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
	if m.response {
		if !ss.peer.deliver(m) {
			ss.log.Debug("response to no request of the server dropped", "id", string(m.id))
		}
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
		ss.result(m.id, ss.srv.tools.listTools(ss.tasks))
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
	req := ss.requests[key]
	ss.longMu.Unlock()
	if req != nil {
		ss.log.Info("request cancelled by the client", "id", string(p["requestId"]))
		(*req)(errRequestCancelled)
	}
	if c != nil && c.key == key {
		ss.log.Info("request cancelled by the client", "tool", c.tool, "id", string(c.id))
		c.cancelled.Store(true)
		c.stop()
	}
}
