package mcp

import (
	"context"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// callTool answers a tools/call request (doc/design.md §10.4): the params
// are parsed once (a malformed request is a -32602 protocol error), and
// the call passes through the shared steps of every tool, in order; each
// answers it itself or hands it on. What a tool declares (tool.go) decides
// which steps act on it: a tool answered inline ends at answerInline, a
// runtime job goes on to its record and its start.
func (ss *session) callTool(m message) {
	p, perr := parseCallParams(m.params, ss.tasks, ss.srv.tools)
	if perr != nil {
		_ = ss.out.error(m.id, perr)
		return
	}
	rq := &toolRequest{id: m.id, params: p, asTask: p.task != nil}
	rq.reply = func(res *mcp.CallToolResult, err error) { ss.replyTool(m.id, res, err) }
	chain(ss.startJob,
		ss.findTool,      // the tool called, and whether it may be a task
		ss.bindArguments, // its arguments, checked against its schema
		ss.answerInline,  // a tool answered inline (flow_status) ends here
		ss.resubmission,  // a repeated idempotency key gets its first submission
		ss.runInWorker,   // a task, with task workers, runs in a worker process
		ss.recordJob,     // the record, before the job can start
	)(rq) // then startJob: the job, answered from its own goroutine
}

// findTool is the step that looks up the tool called: an unknown name is
// -32602 naming the tools, a task-augmented call of a tool that cannot
// run as a task -32601.
func (ss *session) findTool(rq *toolRequest, next func(*toolRequest)) {
	def := ss.srv.tools.byName[rq.params.name]
	if def == nil {
		_ = ss.out.error(rq.id, ss.srv.tools.unknown(rq.params.name))
		return
	}
	if rq.params.task != nil && !def.task {
		_ = ss.out.error(rq.id, &rpcError{code: codeMethodNotFound, message: def.name + " does not support tasks; call it without the task parameter"})
		return
	}
	rq.def = def
	next(rq)
}

// bindArguments is the step that checks the call's arguments against the
// tool's argument struct, the one its input schema was generated from.
// Arguments that are not an object make the request malformed (-32602);
// arguments that do not match are the caller's input error, answered as a
// tool result with isError that the model can read and correct (a
// task-augmented call gets a task that failed with it). Nothing reaches
// the runtime in either case.
func (ss *session) bindArguments(rq *toolRequest, next func(*toolRequest)) {
	tc, invalid, perr := rq.def.parse(rq.params.arguments)
	if perr != nil {
		_ = ss.out.error(rq.id, perr)
		return
	}
	if invalid != "" {
		ss.log.Info("invalid tool arguments", "tool", rq.def.name, "id", string(rq.id), "reason", invalid)
		ss.refuse(rq, errorResult(invalid))
		return
	}
	rq.call = tc
	rq.wait = ss.wait
	if tc.wait != nil {
		rq.wait = time.Duration(*tc.wait) * time.Second
	}
	next(rq)
}

// answerInline is the step that answers a tool answered inline, before the
// next frame is read; a panic is -32603. A job call goes on.
func (ss *session) answerInline(rq *toolRequest, next func(*toolRequest)) {
	if rq.call.answer == nil {
		next(rq)
		return
	}
	rq.reply(ss.answer(rq.def.name, rq.call.answer))
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
