package mcp

import (
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"flow/internal/text"
)

// newToolTable returns the server's tools in tools/list order
// (doc/design.md §10.4). Each tool is one file declaring its argument
// struct, its definition and its handler as a [toolSpec] (flow_check.go is
// the smallest); adding a tool is that file and one entry here. What every
// call goes through whatever the tool — validation, idempotency, task
// records and task workers — is the shared steps of [session.callTool].
func newToolTable(env toolEnv) *toolTable {
	return indexTools(
		flowRunTool(env),
		flowStatusTool(env),
		flowCheckTool(env),
		flowReviewTool(env),
	)
}

// toolTable is a server's tools, in order and by name.
type toolTable struct {
	list   []*toolDef
	byName map[string]*toolDef
}

func indexTools(defs ...*toolDef) *toolTable {
	t := &toolTable{list: defs, byName: make(map[string]*toolDef, len(defs))}
	for _, def := range defs {
		t.byName[def.name] = def
	}
	return t
}

// listTools is the result of tools/list: the tools' advertised definitions
// (mcp-go's Tool type encodes them), with their execution member only in a
// session that speaks tasks.
func (t *toolTable) listTools(tasks bool) listToolsResult {
	out := listToolsResult{Tools: make([]mcp.Tool, 0, len(t.list))}
	for _, def := range t.list {
		if tasks {
			out.Tools = append(out.Tools, def.tool)
		} else {
			out.Tools = append(out.Tools, def.plain)
		}
	}
	return out
}

// listToolsResult is the result of tools/list.
type listToolsResult struct {
	Tools []mcp.Tool `json:"tools"`
}

// unknown is the -32602 error of a tools/call whose name is not one of
// the tools; it names what was asked for ("" when params.name was missing
// or not a string) and the tools there are.
func (t *toolTable) unknown(name string) *rpcError {
	if name == "" {
		return &rpcError{code: codeInvalidParams, message: "tools/call needs params.name, the name of a tool: " + t.names("or")}
	}
	return &rpcError{code: codeInvalidParams, message: "Unknown tool " + strconv.Quote(text.ClipBytes(name, 64)) + "; the tools are " + t.names("and")}
}

// names lists the tools' names in order, the last two joined by conj:
// "flow_run, flow_status and flow_check".
func (t *toolTable) names(conj string) string {
	var b strings.Builder
	for i, def := range t.list {
		switch {
		case i == 0:
		case i == len(t.list)-1:
			b.WriteString(" " + conj + " ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(def.name)
	}
	return b.String()
}
