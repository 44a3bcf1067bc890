package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"flow/internal/text"
	"flow/runtime/journal"
)

// call is the state of one running flow_run or flow_check, shared by the
// frame loop (cancellation) and the job's progress callback.
type call struct {
	id    json.RawMessage
	key   string // idKey(id)
	tool  string
	token json.RawMessage // progressToken, nil when the client sent none
	out   *wire
	stop  context.CancelFunc

	cancelled atomic.Bool // notifications/cancelled named this call

	mu   sync.Mutex
	sent int       // progress notifications written
	done bool      // the handler has its report: no more progress
	last string    // the latest progress message
	at   time.Time // when it was written
	from time.Time // when last was first written (heartbeats repeat it)
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
	c.last, c.at, c.from = message, time.Now(), time.Now()
	_ = c.out.notify("notifications/progress", progressParams{
		ProgressToken: c.token,
		Progress:      c.sent,
		Message:       text.ClipBytes(message, maxProgressBytes),
	})
}

// heartbeat writes a progress notification every period of silence until
// done is closed: the latest step and how long it has lasted.
func (c *call) heartbeat(period time.Duration, done <-chan struct{}) {
	if c == nil || c.token == nil {
		return
	}
	tick := time.NewTicker(period / 2)
	defer tick.Stop()
	start := time.Now()
	for {
		select {
		case <-done:
			return
		case now := <-tick.C:
			c.mu.Lock()
			if c.done || c.cancelled.Load() {
				c.mu.Unlock()
				return
			}
			since := c.from
			if since.IsZero() {
				since = start
			}
			if now.Sub(c.at) >= period/2 {
				step := c.last
				if step == "" {
					step = c.tool + " starting"
				}
				c.sent++
				c.at = now
				_ = c.out.notify("notifications/progress", progressParams{
					ProgressToken: c.token,
					Progress:      c.sent,
					Message:       text.ClipBytes(fmt.Sprintf("%s — still working, %d s", step, int(now.Sub(since).Seconds())), maxProgressBytes),
				})
			}
			c.mu.Unlock()
		}
	}
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

// callTool validates a tools/call request (doc/design.md §10.4) and
// dispatches it. A malformed request (unknown params, no or an unknown tool
// name, arguments that are not an object) is a -32602 protocol error;
// arguments that do not match the tool's schema are the caller's input
// error, answered as a tool result with isError that the model can read and
// correct (a task-augmented call gets a task that failed with it). The
// frame was parsed once, by parseMessage, parseCallParams and the tool's
// argument struct, and the tool is called with the decoded arguments
// (mcp-go only lists the tools). flow_status is answered before returning;
// flow_run and flow_check are runtime jobs: started here and answered from
// their own goroutine (a task-augmented call gets its task at once), or
// refused at once ("busy").
func (ss *session) callTool(m message) {
	p, perr := parseCallParams(m.params, ss.tasks)
	if perr != nil {
		_ = ss.out.error(m.id, perr)
		return
	}
	def := ss.srv.tool[p.name]
	if def == nil {
		_ = ss.out.error(m.id, unknownTool(p.name))
		return
	}
	if p.task != nil && def.tool.Execution == nil {
		_ = ss.out.error(m.id, &rpcError{code: codeMethodNotFound, message: def.name + " does not support tasks; call it without the task parameter"})
		return
	}
	tc, invalid, perr := def.parse(p.arguments)
	if perr != nil {
		_ = ss.out.error(m.id, perr)
		return
	}
	if invalid != "" {
		ss.log.Info("invalid tool arguments", "tool", def.name, "id", string(m.id), "reason", invalid)
		ss.refuse(m.id, def.name, p, errorResult(invalid))
		return
	}
	if tc.answer != nil {
		res, err := ss.answer(def.name, tc.answer)
		ss.replyTool(m.id, res, err)
		return
	}
	asTask := p.task != nil
	wait := ss.wait
	if tc.wait != nil {
		wait = time.Duration(*tc.wait) * time.Second
	}
	if ss.srv.tasks != nil && tc.idempotencyKey != "" && ss.resubmitted(m.id, def.name, p, tc.idempotencyKey, wait) {
		return
	}
	if asTask && ss.srv.workerCmd != nil {
		ss.runInWorker(m, def, p, tc.idempotencyKey)
		return
	}
	c := &call{id: m.id, key: idKey(m.id), tool: def.name, token: p.token, out: ss.out}
	lt := &liveTask{tool: def.name, progress: c.progress}
	var task journal.Task
	if ss.srv.tasks != nil {
		var ttl time.Duration
		if p.task != nil {
			ttl = p.task.ttl
		}
		var err error
		task, err = ss.srv.record(lt, def.name, p.arguments, ttl, tc.idempotencyKey, "")
		if errors.Is(err, errResubmitted) && ss.resubmitted(m.id, def.name, p, tc.idempotencyKey, wait) {
			// Another process recorded a submission with the key since
			// this session looked: answered as any resubmission is.
			return
		}
		if err != nil {
			ss.log.Warn("task not recorded", "tool", def.name, "error", err.Error())
			asTask = false
		}
	}
	ctx, stop := context.WithCancel(ss.base)
	j, err := tc.start(ctx, lt.event)
	if err != nil {
		stop()
		ss.log.Info("tool call refused", "tool", def.name, "id", string(m.id), "reason", err.Error())
		res := refusedResult(err)
		if lt.id == "" {
			ss.refuse(m.id, def.name, p, res)
			return
		}
		task, err := ss.srv.unstarted(lt, res, asTask)
		switch {
		case err != nil:
			ss.log.Warn("refused call's record not ended", "tool", def.name, "task", lt.id, "error", err.Error())
			ss.replyTool(m.id, res, nil)
		case asTask:
			ss.result(m.id, createTaskResult{Task: ss.srv.wireTask(task)})
		default:
			ss.replyTool(m.id, res, nil)
		}
		return
	}
	c.stop = stop
	lt.started(j.Cancel)
	if asTask {
		ss.result(m.id, createTaskResult{Task: ss.srv.wireTask(task)})
	} else {
		ss.longMu.Lock()
		ss.running = c
		ss.longMu.Unlock()
	}
	if lt.id == "" || asTask {
		wait = 0 // without a record there is nothing to follow
	}
	go c.heartbeat(ss.srv.heartbeat, j.Done())
	ss.calls.Add(1)
	go func() {
		defer ss.calls.Done()
		replied := asTask
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-j.Done():
			case <-t.C:
				c.finish()
				ss.clearRunning(c)
				if !c.cancelled.Load() && !ss.out.isShut() {
					ss.replyTool(m.id, ss.srv.runningResult(lt), nil)
				}
				replied = true
			}
			t.Stop()
		}
		rep, status := j.Outcome()
		c.finish()
		stop()
		ss.clearRunning(c)
		var res *mcp.CallToolResult
		if p := j.Panic(); p != nil {
			err = ss.recovered(c.tool, p)
		} else {
			res, err = reportResult(rep, status)
		}
		interrupted := ""
		if ss.out.isShut() {
			interrupted = serverStopped
		}
		ss.srv.finishTask(lt, res, err, c.cancelled.Load() || lt.cancelled.Load(), interrupted)
		if asTask && ss.clientTasks && !ss.out.isShut() {
			ss.notifyTask(lt.id)
		}
		ss.srv.release(lt)
		switch {
		case replied:
		case c.cancelled.Load():
			ss.log.Info("response to a cancelled request not sent", "tool", c.tool, "id", string(c.id))
		case ss.out.isShut():
			ss.log.Info("response not sent: session interrupted", "tool", c.tool, "id", string(c.id))
		default:
			ss.replyTool(m.id, res, err)
		}
	}()
}

// refuse answers a flow_run or flow_check that will not run with res, a
// result with isError: as the tool result, or for a task-augmented call as
// a task that has already failed with it, so that a requestor that asked
// for a task always gets one and tasks/result hands it the result.
func (ss *session) refuse(id json.RawMessage, tool string, p callParams, res *mcp.CallToolResult) {
	if p.task == nil {
		ss.replyTool(id, res, nil)
		return
	}
	task, err := ss.srv.failedTask(tool, p.arguments, p.task.ttl, res, "")
	if err != nil {
		ss.log.Warn("refused task not recorded", "tool", tool, "error", err.Error())
		ss.replyTool(id, res, nil)
		return
	}
	ss.result(id, createTaskResult{Task: ss.srv.wireTask(task)})
}

// clearRunning forgets c as the session's running plain call.
func (ss *session) clearRunning(c *call) {
	ss.longMu.Lock()
	if ss.running == c {
		ss.running = nil
	}
	ss.longMu.Unlock()
}

// answer runs the inline tool called tool; a panic becomes an internal
// error.
func (ss *session) answer(tool string, answer func(context.Context) (*mcp.CallToolResult, error)) (res *mcp.CallToolResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, ss.recovered(tool, p)
		}
	}()
	return answer(ss.base)
}

// recovered logs a tool's panic and returns the error answered for it.
func (ss *session) recovered(tool string, p any) error {
	err := fmt.Errorf("panic recovered in %s tool handler: %v", tool, p)
	ss.log.Error("tool panicked", "tool", tool, "error", err.Error())
	return err
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

// callParams are the accepted members of tools/call params.
type callParams struct {
	name      string
	arguments json.RawMessage
	token     json.RawMessage
	task      *taskParams // the call is task-augmented
}

// taskParams are the task member of a task-augmented request.
type taskParams struct {
	ttl time.Duration // 0: the store's default
}

// unknownTool is the -32602 error of a tools/call whose name is not one of
// flow's tools; it names what was asked for ("" when params.name was
// missing or not a string).
func unknownTool(name string) *rpcError {
	if name == "" {
		return &rpcError{code: codeInvalidParams, message: "tools/call needs params.name, the name of a tool: flow_run, flow_status or flow_check"}
	}
	return &rpcError{code: codeInvalidParams, message: "Unknown tool " + strconv.Quote(text.ClipBytes(name, 64)) + "; the tools are flow_run, flow_status and flow_check"}
}

// parseCallParams accepts exactly name, arguments, _meta and, with tasks,
// task, which must be an object; its ttl (milliseconds) is kept. A progressToken
// in _meta is kept when it is a string or a number; the rest of _meta is
// ignored and not passed on.
func parseCallParams(raw json.RawMessage, tasks bool) (callParams, *rpcError) {
	var p map[string]json.RawMessage
	if raw != nil {
		if err := json.Unmarshal(raw, &p); err != nil {
			return callParams{}, errParamsObject
		}
	}
	var unknown []string
	for k := range p {
		if k != "name" && k != "arguments" && k != "_meta" && (k != "task" || !tasks) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		return callParams{}, &rpcError{code: codeInvalidParams, message: "Unknown tools/call parameters: " + quoteList(unknown)}
	}
	name, ok := jsonString(p["name"])
	if !ok {
		return callParams{}, unknownTool("")
	}
	out := callParams{name: name, arguments: p["arguments"]}
	if raw, ok := p["task"]; ok {
		var tp struct {
			TTL *float64 `json:"ttl"`
		}
		if !isObject(raw) || json.Unmarshal(raw, &tp) != nil {
			return callParams{}, &rpcError{code: codeInvalidParams, message: "task must be an object like {\"ttl\": 3600000}"}
		}
		out.task = &taskParams{}
		if tp.TTL != nil && *tp.TTL > 0 {
			out.task.ttl = time.Duration(*tp.TTL) * time.Millisecond
		}
	}
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
		b.WriteString(strconv.Quote(text.ClipBytes(n, 64)))
	}
	return b.String()
}
