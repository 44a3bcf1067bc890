package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"flow/runtime/job"
)

// toolDef is one of the three tools: its advertised definition, the schema
// its arguments are checked against before dispatch, and what it does:
// answer, for a tool answered inline (flow_status), or start, for a tool
// that is a runtime job (flow_run, flow_check).
type toolDef struct {
	name   string
	input  objectSchema
	tool   mcp.Tool
	answer func(ctx context.Context, args map[string]string) (*mcp.CallToolResult, error)
	start  func(ctx context.Context, args map[string]string, progress func(runID, message string)) (*job.Job, error)
}

// execution is the execution of flow_run and flow_check: with a task store
// a client may call them as MCP tasks or plainly; without one, plainly.
func (s *Server) execution() *mcp.ToolExecution {
	if s.tasks == nil {
		return nil
	}
	return &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}
}

// toolOrder is the order of tools/list (reference §11.3).
var toolOrder = []string{"flow_run", "flow_status", "flow_check"}

// toolDefs returns the three tools.
func (s *Server) toolDefs() []*toolDef {
	return []*toolDef{s.flowRunTool(), s.flowStatusTool(), s.flowCheckTool()}
}

// listTools is the result of tools/list: the tools' advertised definitions
// (mcp-go's Tool type encodes them).
func (s *Server) listTools() listToolsResult {
	out := listToolsResult{Tools: make([]mcp.Tool, 0, len(toolOrder))}
	for _, name := range toolOrder {
		out.Tools = append(out.Tools, s.tool[name].tool)
	}
	return out
}

// listToolsResult is the result of tools/list.
type listToolsResult struct {
	Tools []mcp.Tool `json:"tools"`
}

// objectSchema is the JSON Schema of an object, the only kind flow's tools
// take or return. Properties is always written, also when empty.
type objectSchema struct {
	Type                 string                 `json:"type"`
	Description          string                 `json:"description,omitempty"`
	Properties           map[string]fieldSchema `json:"properties"`
	Required             []string               `json:"required,omitempty"`
	AdditionalProperties *bool                  `json:"additionalProperties,omitempty"`
}

// fieldSchema is the schema of one scalar property.
type fieldSchema struct {
	Type        string `json:"type"`
	Description string `json:"description,omitempty"`
	MinLength   int    `json:"minLength,omitempty"`
}

// closedObject returns the schema of an input object that accepts exactly
// props.
func closedObject(props map[string]fieldSchema, required ...string) objectSchema {
	closed := false
	if props == nil {
		props = map[string]fieldSchema{}
	}
	return objectSchema{Type: "object", Properties: props, Required: required, AdditionalProperties: &closed}
}

// raw encodes the schema for mcp.Tool.
func (sc objectSchema) raw() json.RawMessage {
	b, err := marshal(sc)
	if err != nil {
		panic(fmt.Sprintf("encode tool schema: %v", err)) // static data
	}
	return b
}

// validate checks tool arguments against a closed input schema whose
// properties are strings or whole numbers (reference §11.4: any failure is -32602). Absent
// arguments are an empty object. It returns the decoded arguments: the
// frame's arguments are parsed here, once.
func (sc objectSchema) validate(tool string, raw json.RawMessage) (map[string]string, *rpcError) {
	invalid := func(format string, a ...any) *rpcError {
		return &rpcError{code: codeInvalidParams, message: fmt.Sprintf("Invalid arguments for %s: ", tool) + fmt.Sprintf(format, a...)}
	}
	if raw == nil {
		raw = json.RawMessage(`{}`)
	}
	if !isObject(raw) {
		return nil, invalid("expected an object")
	}
	var args map[string]json.RawMessage
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, invalid("expected an object")
	}
	var missing, unknown []string
	for _, name := range sc.Required {
		if _, ok := args[name]; !ok {
			missing = append(missing, name)
		}
	}
	for name := range args {
		if _, ok := sc.Properties[name]; !ok {
			unknown = append(unknown, name)
		}
	}
	if len(missing) > 0 || len(unknown) > 0 {
		var parts []string
		if len(missing) > 0 {
			parts = append(parts, "missing "+quoteList(missing))
		}
		if len(unknown) > 0 {
			parts = append(parts, "unknown "+quoteList(unknown))
		}
		return nil, invalid("%s", strings.Join(parts, "; "))
	}
	out := make(map[string]string, len(args))
	for _, name := range slices.Sorted(maps.Keys(args)) {
		field := sc.Properties[name]
		s, ok := jsonString(args[name])
		switch field.Type {
		case "string":
			if !ok {
				return nil, invalid("%s must be a string", strconv.Quote(name))
			}
		case "integer":
			n, err := strconv.ParseUint(string(args[name]), 10, 31)
			if err != nil {
				return nil, invalid("%s must be a whole number of at least 0", strconv.Quote(name))
			}
			s = strconv.FormatUint(n, 10)
		}
		if utf8.RuneCountInString(s) < field.MinLength {
			return nil, invalid("%s must not be empty", strconv.Quote(name))
		}
		out[name] = s
	}
	return out, nil
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
