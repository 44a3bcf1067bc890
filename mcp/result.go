package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"flow/internal/text"
	"flow/runtime/job"
	"flow/runtime/report"
)

// maxReportBytes bounds the report in one tool result. The reply line holds
// it twice (structured and as escaped text), and Rose drops the connection
// on a line over 8 MiB; beyond this size the report is cut down by
// [shrinkReport].
const maxReportBytes = 2 << 20

// maxKeptMemberBytes is the largest top-level member a cut-down report keeps.
const maxKeptMemberBytes = 4096

// reportResult is the tool result of a report (doc/design.md §10): the report as
// structuredContent and as the one text content, isError unless status is
// "ok". A report that cannot be encoded is an internal error (-32603).
func reportResult(rep any, status string) (*mcp.CallToolResult, error) {
	b, err := report.Marshal(rep)
	if err != nil {
		return nil, fmt.Errorf("runtime returned non-JSON data: %w", err)
	}
	if len(b) > maxReportBytes {
		b = shrinkReport(b)
	}
	return structuredResult(b, status != report.StatusOK), nil
}

func structuredResult(b json.RawMessage, isError bool) *mcp.CallToolResult {
	content := []mcp.Content{mcp.NewTextContent(string(b))}
	if isError {
		// A client that shows the text to a person (or a model) leads with
		// the report's one sentence; the report stays the last text part,
		// whole, for clients that parse it (Rose reads structuredContent).
		if s := leadSentence(b); s != "" {
			content = append([]mcp.Content{mcp.NewTextContent(s)}, content...)
		}
	}
	return &mcp.CallToolResult{
		Content:              content,
		StructuredContent:    b,
		RawStructuredContent: b,
		IsError:              isError,
	}
}

// refusal is the report of a tool call that did not run: status "busy"
// (another job holds the workspace) or "error" (invalid arguments, a
// reused idempotency key, a task whose worker failed). Like every report
// that is not ok it says why in one sentence, as reason and error
// (doc/design.md §14.8).
type refusal struct {
	Status   string `json:"status"`
	Verified bool   `json:"verified"`
	Reason   string `json:"reason"`
	Error    string `json:"error"`
}

// refusedResult is the tool result of a job that could not start; err's
// text is the runtime's one sentence for it.
func refusedResult(err error) *mcp.CallToolResult {
	status := report.StatusError
	if errors.Is(err, job.ErrBusy) {
		status = report.StatusBusy
	}
	b, _ := report.Marshal(refusal{Status: status, Reason: err.Error(), Error: err.Error()})
	return structuredResult(b, true)
}

// errorResult is the tool result of a failure that has no report.
func errorResult(msg string) *mcp.CallToolResult {
	b, _ := report.Marshal(refusal{Status: report.StatusError, Reason: msg, Error: msg})
	return structuredResult(b, true)
}

// panicError is the error answered (-32603) and recorded for a tool whose
// handler or job panicked with p.
func panicError(tool string, p any) error {
	return fmt.Errorf("panic recovered in %s tool handler: %v", tool, p)
}

// resultMessage is a task's status message for its result: the report's
// status and its error, summary or reason.
func resultMessage(res *mcp.CallToolResult) string {
	var rep struct {
		Status  string `json:"status"`
		Error   string `json:"error"`
		Summary string `json:"summary"`
		Reason  string `json:"reason"`
	}
	_ = json.Unmarshal(res.RawStructuredContent, &rep)
	msg := rep.Status
	for _, s := range []string{rep.Error, rep.Summary, rep.Reason} {
		if s != "" && strings.HasPrefix(s, rep.Status+":") {
			msg = s // "busy: a run is already …" says its status itself
			break
		}
		if s != "" {
			msg += ": " + s
			break
		}
	}
	return text.ClipBytes(msg, maxProgressBytes)
}

// shrinkReport keeps the top-level members of an oversized report that are
// at most maxKeptMemberBytes long (status, verified, ids, counters, short
// texts) and says what happened in "report_truncated".
func shrinkReport(b json.RawMessage) json.RawMessage {
	var members map[string]json.RawMessage
	if json.Unmarshal(b, &members) != nil {
		members = map[string]json.RawMessage{}
	}
	kept := make(map[string]json.RawMessage, len(members)+1)
	var dropped []string
	for _, k := range slices.Sorted(maps.Keys(members)) {
		if len(members[k]) <= maxKeptMemberBytes {
			kept[k] = members[k]
		} else {
			dropped = append(dropped, k)
		}
	}
	note, _ := marshal(fmt.Sprintf("report of %d bytes exceeds the MCP limit of %d bytes; dropped %s", len(b), maxReportBytes, quoteList(dropped)))
	kept["report_truncated"] = note
	out, err := marshal(kept)
	if err != nil {
		return json.RawMessage(`{"status":"error","verified":false,"error":"report too large"}`)
	}
	return out
}

// wireText is a text content item.
type wireText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// wireToolResult is a tools/call result as flow writes it: isError is
// always present (mcp-go omits it when false) and nothing is HTML-escaped.
type wireToolResult struct {
	Content           []any           `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError"`
}

// toolResultJSON encodes mcp-go's CallToolResult for the wire.
func toolResultJSON(r *mcp.CallToolResult) (json.RawMessage, error) {
	out := wireToolResult{Content: []any{}, IsError: r.IsError}
	for _, c := range r.Content {
		if t, ok := c.(mcp.TextContent); ok && t.Annotations == nil && t.Meta == nil {
			out.Content = append(out.Content, wireText{Type: t.Type, Text: t.Text})
			continue
		}
		out.Content = append(out.Content, c)
	}
	switch {
	case len(r.RawStructuredContent) > 0:
		out.StructuredContent = r.RawStructuredContent
	case r.StructuredContent != nil:
		b, err := marshal(r.StructuredContent)
		if err != nil {
			return nil, err
		}
		out.StructuredContent = b
	}
	return marshal(out)
}

// leadSentence is the sentence an error result leads with: the report's
// reason, else its error ("" when it has neither).
func leadSentence(b json.RawMessage) string {
	var r struct {
		Reason string `json:"reason"`
		Error  string `json:"error"`
	}
	if json.Unmarshal(b, &r) != nil {
		return ""
	}
	if r.Reason != "" {
		return r.Reason
	}
	return r.Error
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
