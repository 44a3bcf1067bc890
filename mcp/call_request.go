package mcp

import (
	"encoding/json"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"flow/runtime/journal"
)

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

// parseCallParams accepts exactly name, arguments, _meta and, with tasks,
// task, which must be an object; its ttl (milliseconds) is kept. A
// progressToken in _meta is kept when it is a string or a number; the rest
// of _meta is ignored and not passed on. A missing name is answered with
// the names of tools.
func parseCallParams(raw json.RawMessage, tasks bool, tools *toolTable) (callParams, *rpcError) {
	p, perr := callMembers(raw, tasks)
	if perr != nil {
		return callParams{}, perr
	}
	name, ok := jsonString(p["name"])
	if !ok {
		return callParams{}, tools.unknown("")
	}
	out := callParams{name: name, arguments: p["arguments"], token: progressToken(p["_meta"])}
	if raw, ok := p["task"]; ok {
		if out.task, perr = parseTaskParams(raw); perr != nil {
			return callParams{}, perr
		}
	}
	return out, nil
}

// callMembers decodes params, an object, and refuses members other than
// name, arguments, _meta and, with tasks, task.
func callMembers(raw json.RawMessage, tasks bool) (map[string]json.RawMessage, *rpcError) {
	var p map[string]json.RawMessage
	if raw != nil {
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, errParamsObject
		}
	}
	var unknown []string
	for k := range p {
		if k != "name" && k != "arguments" && k != "_meta" && (k != "task" || !tasks) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		return nil, &rpcError{code: codeInvalidParams, message: "Unknown tools/call parameters: " + quoteList(unknown)}
	}
	return p, nil
}

// parseTaskParams decodes the task member, {"ttl": milliseconds}; a ttl
// that is absent or not positive is the store's default.
func parseTaskParams(raw json.RawMessage) (*taskParams, *rpcError) {
	var tp struct {
		TTL *float64 `json:"ttl"`
	}
	if !isObject(raw) || json.Unmarshal(raw, &tp) != nil {
		return nil, &rpcError{code: codeInvalidParams, message: "task must be an object like {\"ttl\": 3600000}"}
	}
	out := &taskParams{}
	if tp.TTL != nil && *tp.TTL > 0 {
		out.ttl = time.Duration(*tp.TTL) * time.Millisecond
	}
	return out, nil
}

// progressToken is _meta's progressToken when it is a string or a number,
// else nil.
func progressToken(meta json.RawMessage) json.RawMessage {
	if !isObject(meta) {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(meta, &m) != nil {
		return nil
	}
	if tok := m["progressToken"]; len(tok) > 0 && (tok[0] == '"' || tok[0] == '-' || (tok[0] >= '0' && tok[0] <= '9')) {
		return tok
	}
	return nil
}

// toolRequest is one tools/call on its way through the steps of
// [session.callTool]: each step reads what the steps before it found and
// adds its own.
type toolRequest struct {
	id     json.RawMessage
	params callParams
	// def is the tool called, and call its bound arguments.
	def  *toolDef
	call toolCall
	// wait is how long a plain job call waits before it answers "running"
	// (0: until it ends): wait_seconds, else the session's default.
	wait time.Duration
	// asTask: the call is answered with its task. It starts as the call's
	// task-augmentation and is cleared when no record could be written.
	asTask bool
	// job and live are the running job's call (progress, cancellation) and
	// its live task; task is its record, when it has one.
	job  *jobCall
	live *liveTask
	task journal.Task
	// reply writes a tool result for the call, or -32603 for err. Every
	// tool result of the call goes out through it (a task's is in its
	// record), so a step that acts on a result before the client sees it
	// wraps reply before it hands the call on.
	reply func(res *mcp.CallToolResult, err error)
}

// callStep is one shared step of a tools/call: it answers rq itself, or
// hands it to next, after adding to it what it found.
type callStep func(rq *toolRequest, next func(*toolRequest))

// chain returns the handler that passes a request through steps, in
// order, and then to last.
func chain(last func(*toolRequest), steps ...callStep) func(*toolRequest) {
	h := last
	for i := len(steps) - 1; i >= 0; i-- {
		step, next := steps[i], h
		h = func(rq *toolRequest) { step(rq, next) }
	}
	return h
}
