package mcp

import (
	"context"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// call is the state of one tools/call request, shared by the frame loop and
// the tool handler (which finds it in its context).
type call struct {
	id    json.RawMessage
	key   string // idKey(id)
	tool  string
	token json.RawMessage // progressToken, nil when the client sent none
	out   *wire
	stop  context.CancelFunc

	// busy names the tool holding the run slot when this flow_run or
	// flow_check could not take it; the handler then answers "busy".
	busy string

	cancelled atomic.Bool // notifications/cancelled named this call

	mu   sync.Mutex
	sent int  // progress notifications written
	done bool // the handler has its report: no more progress
}

type callKey struct{}

func withCall(ctx context.Context, c *call) context.Context {
	if c == nil {
		return ctx
	}
	return context.WithValue(ctx, callKey{}, c)
}

// callFrom returns the call of a tool handler's context, or nil.
func callFrom(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	return c
}

// maxProgressBytes bounds one progress message.
const maxProgressBytes = 4096

// progressParams are the params of notifications/progress.
type progressParams struct {
	ProgressToken json.RawMessage `json:"progressToken"`
	Progress      int             `json:"progress"`
	Message       string          `json:"message,omitempty"`
}

// progress writes one notifications/progress for message, synchronously, so
// that it is on the wire before the handler can return. Nothing is written
// without a progress token, after [call.finish] or after the call was
// cancelled. A nil call ignores progress.
func (c *call) progress(message string) {
	if c == nil || c.token == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done || c.cancelled.Load() {
		return
	}
	c.sent++
	_ = c.out.notify("notifications/progress", progressParams{
		ProgressToken: c.token,
		Progress:      c.sent,
		Message:       clip(message, maxProgressBytes),
	})
}

// finish ends progress: a progress write in flight completes first, later
// calls are dropped, so the result follows every notification.
func (c *call) finish() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.done = true
	c.mu.Unlock()
}

// busyWith returns the tool holding the slot when this call was refused it.
func (c *call) busyWith() string {
	if c == nil {
		return ""
	}
	return c.busy
}

// callTool validates a tools/call request (reference §11.4: params, tool
// name, arguments, all -32602) and dispatches it through mcp-go. flow_status
// is answered before returning; flow_run and flow_check take the run slot
// and go on on their own goroutine, or are answered "busy" at once.
func (ss *session) callTool(m message) {
	p, perr := parseCallParams(m.params)
	if perr != nil {
		_ = ss.out.error(m.id, perr)
		return
	}
	def := ss.srv.tool[p.name]
	if def == nil {
		_ = ss.out.error(m.id, errUnknownTool)
		return
	}
	args, perr := def.input.validate(def.name, p.arguments)
	if perr != nil {
		_ = ss.out.error(m.id, perr)
		return
	}
	c := &call{id: m.id, key: idKey(m.id), tool: def.name, token: p.token, out: ss.out, stop: func() {}}
	params := map[string]any{"name": def.name, "arguments": args}
	if !def.long {
		ss.reply(m.id, c, ss.invoke(ss.base, c, "tools/call", params))
		return
	}
	if holder := ss.srv.acquire(def.name); holder != "" {
		c.busy = holder
		ss.reply(m.id, c, ss.invoke(ss.base, c, "tools/call", params))
		return
	}
	ctx, stop := context.WithCancel(ss.base)
	c.stop = stop
	ss.longMu.Lock()
	ss.running = c
	ss.longMu.Unlock()
	ss.calls.Add(1)
	go func() {
		defer ss.calls.Done()
		resp := ss.invoke(ctx, c, "tools/call", params)
		stop()
		ss.longMu.Lock()
		ss.running = nil
		ss.longMu.Unlock()
		ss.srv.release()
		switch {
		case c.cancelled.Load():
			ss.log.Info("response to a cancelled request not sent", "tool", c.tool, "id", string(c.id))
		case ss.out.isShut():
			ss.log.Info("response not sent: session interrupted", "tool", c.tool, "id", string(c.id))
		default:
			ss.reply(m.id, c, resp)
		}
	}()
}

// callParams are the accepted members of tools/call params.
type callParams struct {
	name      string
	arguments json.RawMessage
	token     json.RawMessage
}

var errUnknownTool = &rpcError{code: codeInvalidParams, message: "Unknown Flow tool; the tools are flow_run, flow_status and flow_check"}

// parseCallParams accepts exactly name, arguments and _meta. A progressToken
// in _meta is kept when it is a string or a number; the rest of _meta is
// ignored and not passed on.
func parseCallParams(raw json.RawMessage) (callParams, *rpcError) {
	var p map[string]json.RawMessage
	if raw != nil {
		if err := json.Unmarshal(raw, &p); err != nil {
			return callParams{}, errParamsObject
		}
	}
	var unknown []string
	for k := range p {
		if k != "name" && k != "arguments" && k != "_meta" {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		return callParams{}, &rpcError{code: codeInvalidParams, message: "Unknown tools/call parameters: " + quoteList(unknown)}
	}
	name, ok := jsonString(p["name"])
	if !ok {
		return callParams{}, errUnknownTool
	}
	out := callParams{name: name, arguments: p["arguments"]}
	if isObject(p["_meta"]) {
		var meta map[string]json.RawMessage
		if json.Unmarshal(p["_meta"], &meta) == nil {
			if tok := meta["progressToken"]; len(tok) > 0 && (tok[0] == '"' || tok[0] == '-' || (tok[0] >= '0' && tok[0] <= '9')) {
				out.token = tok
			}
		}
	}
	return out, nil
}

// quoteList renders names sorted and quoted, at most five of them.
func quoteList(names []string) string {
	sort.Strings(names)
	var b strings.Builder
	for i, n := range names {
		if i == 5 {
			b.WriteString(", …")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(clip(n, 64)))
	}
	return b.String()
}
