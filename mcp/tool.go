package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"flow/runtime/job"
	"flow/runtime/report"
	"flow/runtime/tools"
)

// Runtime is what the server needs from flow's runtime. flow_run and
// flow_check are jobs of the runtime's one job system ([job.Gate]): a Start
// method returns the job at once, or an error matching [job.ErrBusy] while
// another job holds the workspace, which the server answers with a "busy"
// result. Status may be called at any time, also while a job is in
// progress, and must not wait for it.
type Runtime interface {
	// StartRun starts one task; the job's result is a report.Run. progress
	// receives one short human-readable line per runtime event; it may be
	// called from any goroutine until the job is done (later calls are
	// ignored). When ctx is cancelled the run stops with a "cancelled"
	// report.
	// runID is the run's id (the same for every line of one run).
	StartRun(ctx context.Context, task string, progress func(runID, message string)) (*job.Job[report.Run], error)
	// StartCheck starts the configured check called name, or every check
	// when name is ""; the job's result is a report.CheckReport.
	StartCheck(ctx context.Context, name string) (*job.Job[report.CheckReport], error)
	// Status reports flow's local state without contacting the model.
	Status(ctx context.Context) report.Status
	// Review lists a finished run's hunks and, with keep or revert
	// (selectors: a hunk id, a changed file's path, or "all"), applies
	// those decisions, as a job under the workspace lock: a busy workspace
	// gives a report with status "busy". A request that cannot be made (no
	// such run, an unknown id) is an error and nothing is written.
	Review(ctx context.Context, runID string, keep, revert []string) (report.ReviewReport, error)
}

// toolEnv is what the tools' handlers are built with: the runtime, whether
// the server has a task store (a tool that may run as an MCP task then says
// so), and the look-up of a run in the task records (flow_status {run_id}).
type toolEnv struct {
	rt        Runtime
	tasks     bool
	runStatus func(runID string) (*mcp.CallToolResult, error)
}

// toolSpec declares one tool whose arguments are the struct A
// (doc/design.md §10.4): what it advertises and what a call does. Exactly
// one of answer and start is set. The shared steps of every tools/call
// (call.go) read the rest: whether a call may be a task, and which
// arguments are its wait and its idempotency key.
type toolSpec[A any] struct {
	// tool is the advertised definition; its inputSchema is generated from
	// A and its execution member follows task.
	tool mcp.Tool
	// task: the tool may run as an MCP task (execution.taskSupport
	// "optional", where the server has a task store). Only a job can.
	task bool
	// answer answers a call inline, in the frame loop, while a job may be
	// running (flow_status); it is not recorded. A tool that refuses while
	// a job holds the workspace answers [refusedResult] of the runtime's
	// busy error itself. An error is -32603, as a panic is.
	answer func(ctx context.Context, a A) (*mcp.CallToolResult, error)
	// start starts a call as a runtime job (flow_run, flow_check): it is
	// recorded first, answered from its own goroutine (or with its task at
	// once), and a start error (busy: another job holds the workspace) is
	// answered as a refusal.
	start func(ctx context.Context, a A, progress func(runID, message string)) (*job.Handle, error)
	// wait returns the call's wait_seconds (nil when absent: the session's
	// default); nil for a tool without one.
	wait func(a A) *int
	// key returns the call's idempotency_key ("" when absent); nil for a
	// tool without one.
	key func(a A) string
}

// toolDef is one entry of the tool table: a tool's advertised definition
// and bind, which checks a call's arguments against the tool's argument
// struct (the same struct its inputSchema was generated from) and returns
// what the call does.
type toolDef struct {
	name string
	tool mcp.Tool
	// plain is tool without execution, for sessions of a protocol version
	// that has no tasks.
	plain mcp.Tool
	// usage describes the arguments in one line: {"task": string, …}.
	usage string
	// task: a call may be task-augmented (tool.Execution is set).
	task bool
	bind func(raw json.RawMessage) (toolCall, error)
}

// toolCall is one validated call of a tool: answer, for a tool answered
// inline (flow_status), or start, for a tool that is a runtime job
// (flow_run, flow_check), with the arguments the session itself acts on.
type toolCall struct {
	answer func(ctx context.Context) (*mcp.CallToolResult, error)
	start  func(ctx context.Context, progress func(runID, message string)) (*job.Handle, error)
	// wait is wait_seconds, nil when absent (the session's default wait).
	wait *int
	// idempotencyKey is idempotency_key, "" when absent.
	idempotencyKey string
}

// newTool returns the table entry of spec, whose arguments are the struct
// A: its inputSchema is generated from A, and a call's arguments are
// decoded into an A, which spec's handler is bound to. Schema and check
// come from runtime/tools, the model tools' machinery, so the two cannot
// drift apart.
func newTool[A any](env toolEnv, spec toolSpec[A]) *toolDef {
	tool := spec.tool
	if (spec.answer == nil) == (spec.start == nil) || (spec.task && spec.start == nil) {
		panic(fmt.Sprintf("tool %s: set answer or start, and task only with start", tool.Name)) // static data
	}
	schema, err := marshal(tools.Schema[A]())
	if err != nil {
		panic(fmt.Sprintf("encode %s input schema: %v", tool.Name, err)) // static data
	}
	tool.RawInputSchema = schema
	plain := tool
	if spec.task && env.tasks {
		// With a task store a client may call the tool as an MCP task or
		// plainly; without one, plainly.
		tool.Execution = &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}
	}
	return &toolDef{
		name:  tool.Name,
		tool:  tool,
		plain: plain,
		usage: tools.Usage[A](),
		task:  tool.Execution != nil,
		bind: func(raw json.RawMessage) (toolCall, error) {
			args, err := tools.Parse[A](raw)
			if err != nil {
				return toolCall{}, err
			}
			return spec.bind(args), nil
		},
	}
}

// bind is the call of spec with the arguments a.
func (spec toolSpec[A]) bind(a A) toolCall {
	var tc toolCall
	if spec.answer != nil {
		tc.answer = func(ctx context.Context) (*mcp.CallToolResult, error) { return spec.answer(ctx, a) }
	} else {
		tc.start = func(ctx context.Context, progress func(runID, message string)) (*job.Handle, error) {
			return spec.start(ctx, a, progress)
		}
	}
	if spec.wait != nil {
		tc.wait = spec.wait(a)
	}
	if spec.key != nil {
		tc.idempotencyKey = spec.key(a)
	}
	return tc
}

// parse checks the arguments of a call to def before anything is
// dispatched; absent arguments are an empty object. Arguments that are not
// an object make the tools/call request itself malformed: perr is a
// -32602 protocol error. Any other fault is in the input a model wrote, and
// MCP (2025-11-25, tool execution errors) wants the model to read it:
// invalid is then the one sentence of a tool result with isError, naming
// the offending key, what was expected and the tool's arguments.
func (def *toolDef) parse(raw json.RawMessage) (tc toolCall, invalid string, perr *rpcError) {
	if raw == nil {
		raw = json.RawMessage(`{}`)
	}
	if !isObject(raw) {
		return toolCall{}, "", &rpcError{code: codeInvalidParams, message: "Invalid params: the arguments of " + def.name + " must be a JSON object, got " + jsonKind(raw)}
	}
	tc, err := def.bind(raw)
	if err != nil {
		return toolCall{}, "Invalid arguments for " + def.name + ": " + err.Error() + "; expected " + def.usage, nil
	}
	return tc, "", nil
}

// jsonKind names the JSON type of a value for an error message.
func jsonKind(raw json.RawMessage) string {
	switch t := strings.TrimSpace(string(raw)); {
	case t == "null":
		return "null"
	case strings.HasPrefix(t, "["):
		return "an array"
	case strings.HasPrefix(t, `"`):
		return "a string"
	case t == "true" || t == "false":
		return "a boolean"
	default:
		return "a number"
	}
}

// objectSchema is the JSON Schema of a tool's output, an object. It is
// written by hand rather than generated like the input schemas: a report
// has more members than the schema lists (those a client can rely on), so
// the object is open, and it carries a description of its own, while the
// argument-struct machinery makes closed objects without one.
type objectSchema struct {
	Type        string                 `json:"type"`
	Description string                 `json:"description,omitempty"`
	Properties  map[string]fieldSchema `json:"properties"`
	Required    []string               `json:"required,omitempty"`
}

// fieldSchema is the schema of one scalar member of a report.
type fieldSchema struct {
	Type        string `json:"type"`
	Description string `json:"description,omitempty"`
}

// raw encodes the schema for mcp.Tool.
func (sc objectSchema) raw() json.RawMessage {
	b, err := marshal(sc)
	if err != nil {
		panic(fmt.Sprintf("encode tool schema: %v", err)) // static data
	}
	return b
}

// annotations returns tool annotations with every hint set explicitly
// (mcp-go's defaults claim destructive and open-world).
func annotations(title string, readOnly, destructive, idempotent bool) mcp.ToolAnnotation {
	openWorld := false
	return mcp.ToolAnnotation{
		Title:           title,
		ReadOnlyHint:    &readOnly,
		DestructiveHint: &destructive,
		IdempotentHint:  &idempotent,
		OpenWorldHint:   &openWorld,
	}
}

// Output schema fields shared by the reports.
var (
	outStatus   = fieldSchema{Type: "string", Description: `"ok" only when the result is verified; otherwise failed, unverified, stale, error, busy or cancelled; "running" while a run goes on after wait_seconds.`}
	outVerified = fieldSchema{Type: "boolean", Description: "True only when flow's own gates verified the result from real evidence."}
	outError    = fieldSchema{Type: "string", Description: "What went wrong, when something did."}
)
