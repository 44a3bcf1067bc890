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

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// session is one Serve call: the frame loop and its lifecycle state.
type session struct {
	srv *Server
	id  string
	out *wire
	log *slog.Logger

	// base is the context every request reaches mcp-go with: it carries
	// mcp-go's session and is cancelled when the session ends.
	base    context.Context
	stop    context.CancelFunc
	calls   sync.WaitGroup
	seq     atomic.Int64 // internal request ids for mcp-go
	initOK  bool         // initialize succeeded (frame loop only)
	ready   bool         // notifications/initialized followed it (frame loop only)
	longMu  sync.Mutex
	running *call // the flow_run or flow_check of this session in the slot
}

func (s *Server) newSession(ctx context.Context, w io.Writer) (*session, error) {
	n := s.sessions.Add(1)
	ss := &session{srv: s, id: fmt.Sprintf("flow-stdio-%d", n), out: newWire(w)}
	ss.log = s.log.With("session", ss.id)
	ms := &mcpSession{id: ss.id, notifications: make(chan mcp.JSONRPCNotification)}
	if err := s.mcp.RegisterSession(ctx, ms); err != nil {
		return nil, fmt.Errorf("register mcp session: %w", err)
	}
	// Requests do not inherit ctx's cancellation directly: when ctx ends,
	// run first shuts the output and only then cancels them, so a cancelled
	// call cannot slip its report out in between.
	base := s.mcp.WithContext(context.WithoutCancel(ctx), ms)
	// server/discover never reaches mcp-go; should it ever, it would offer
	// only the legacy versions flow speaks.
	base = server.WithSupportedProtocolVersions(base, []string{versionPreferred, version20250618, version20250326})
	ss.base, ss.stop = context.WithCancel(base)
	return ss, nil
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
			case fr.err == nil:
				ss.handle(fr.frame)
			case errors.Is(fr.err, io.EOF):
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

// end cancels what is still running, waits for it and detaches the session
// from mcp-go.
func (ss *session) end(why string) {
	ss.stop()
	ss.calls.Wait()
	ss.srv.mcp.UnregisterSession(context.Background(), ss.id)
	ss.log.Debug("session end", "reason", why)
}

// handle answers one frame. Only a flow_run or flow_check that took the slot
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
	switch {
	case m.method == "ping":
		ss.reply(m.id, ss.invoke("ping", nil))
	case m.method == "initialize":
		ss.initialize(m)
	case !ss.ready:
		_ = ss.out.error(m.id, errNotReady)
	case m.method == "tools/list":
		ss.reply(m.id, ss.invoke("tools/list", nil))
	case m.method == "tools/call":
		ss.callTool(m)
	default:
		_ = ss.out.error(m.id, &rpcError{code: codeMethodNotFound, message: "Method not found: " + clip(m.method, 100)})
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

// invoke hands one request (initialize, ping, tools/list) to mcp-go under a
// fresh internal id and returns mcp-go's response (a result or an error,
// never nil).
func (ss *session) invoke(method string, params any) (resp mcp.JSONRPCMessage) {
	id := ss.seq.Add(1)
	internal := mcp.NewJSONRPCError(mcp.NewRequestId(id), codeInternalError, "Internal error", nil)
	req := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		req["params"] = params
	}
	msg, err := marshal(req)
	if err != nil {
		return internal
	}
	defer func() {
		if r := recover(); r != nil {
			ss.log.Error("panic in request handler", "method", method, "panic", fmt.Sprint(r))
			resp = internal
		}
	}()
	resp = ss.srv.mcp.HandleMessage(ss.base, msg)
	if resp == nil {
		resp = internal
	}
	return resp
}

// reply writes mcp-go's response under the client's id.
func (ss *session) reply(id json.RawMessage, resp mcp.JSONRPCMessage) {
	var err error
	switch r := resp.(type) {
	case mcp.JSONRPCResponse:
		var result json.RawMessage
		result, err = marshal(r.Result)
		if err == nil {
			err = ss.out.result(id, result)
			break
		}
		ss.log.Error("encode result", "error", err)
		err = ss.out.error(id, &rpcError{code: codeInternalError, message: "Internal error"})
	case mcp.JSONRPCError:
		err = ss.out.error(id, &rpcError{code: r.Error.Code, message: r.Error.Message, data: r.Error.Data})
	default:
		err = ss.out.error(id, &rpcError{code: codeInternalError, message: "Internal error"})
	}
	if err != nil {
		ss.log.Warn("write reply", "error", err)
	}
}

// clip shortens s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// mcpSession is the mcp-go side of a session. Its notification channel is
// never read: mcp-go sends to it without blocking and drops what does not
// fit, and flow writes its own progress notifications (see call.progress).
type mcpSession struct {
	id            string
	notifications chan mcp.JSONRPCNotification
	initialized   atomic.Bool
}

func (m *mcpSession) SessionID() string { return m.id }
func (m *mcpSession) Initialize()       { m.initialized.Store(true) }
func (m *mcpSession) Initialized() bool { return m.initialized.Load() }
func (m *mcpSession) NotificationChannel() chan<- mcp.JSONRPCNotification {
	return m.notifications
}

var _ server.ClientSession = (*mcpSession)(nil)
