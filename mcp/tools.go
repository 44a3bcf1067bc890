package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"flow/runtime/job"
	"flow/runtime/tools"
)

// toolDef is one of the three tools: its advertised definition and bind,
// which checks a call's arguments against the tool's argument struct (the
// same struct its inputSchema was generated from) and returns what the
// call does.
type toolDef struct {
	name string
	tool mcp.Tool
	// plain is tool without execution, for sessions of a protocol version
	// that has no tasks.
	plain mcp.Tool
	// usage describes the arguments in one line: {"task": string, …}.
	usage string
	bind  func(raw json.RawMessage) (toolCall, error)
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

// newTool returns the definition of tool, whose arguments are the struct A:
// its inputSchema is generated from A, and a call's arguments are decoded
// into an A, which call turns into what the call does. Schema and check come
// from runtime/tools, the model tools' machinery, so the two cannot drift
// apart.
func newTool[A any](tool mcp.Tool, call func(A) toolCall) *toolDef {
	schema, err := marshal(tools.Schema[A]())
	if err != nil {
		panic(fmt.Sprintf("encode %s input schema: %v", tool.Name, err)) // static data
	}
	tool.RawInputSchema = schema
	plain := tool
	plain.Execution = nil
	return &toolDef{
		name:  tool.Name,
		tool:  tool,
		plain: plain,
		usage: tools.Usage[A](),
		bind: func(raw json.RawMessage) (toolCall, error) {
			args, err := tools.Parse[A](raw)
			if err != nil {
				return toolCall{}, err
			}
			return call(args), nil
		},
	}
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

// execution is the execution of flow_run and flow_check: with a task store
// a client may call them as MCP tasks or plainly; without one, plainly.
func (s *Server) execution() *mcp.ToolExecution {
	if s.tasks == nil {
		return nil
	}
	return &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}
}

// toolOrder is the order of tools/list (doc/design.md §10.3).
var toolOrder = []string{"flow_run", "flow_status", "flow_check"}

// toolDefs returns the three tools.
func (s *Server) toolDefs() []*toolDef {
	return []*toolDef{s.flowRunTool(), s.flowStatusTool(), s.flowCheckTool()}
}

// listTools is the result of tools/list: the tools' advertised definitions
// (mcp-go's Tool type encodes them), with their execution member only in a
// session that speaks tasks.
func (s *Server) listTools(tasks bool) listToolsResult {
	out := listToolsResult{Tools: make([]mcp.Tool, 0, len(toolOrder))}
	for _, name := range toolOrder {
		if tasks {
			out.Tools = append(out.Tools, s.tool[name].tool)
		} else {
			out.Tools = append(out.Tools, s.tool[name].plain)
		}
	}
	return out
}

// listToolsResult is the result of tools/list.
type listToolsResult struct {
	Tools []mcp.Tool `json:"tools"`
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
