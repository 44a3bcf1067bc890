package model

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// Limits that keep [TextToolCalls] linear enough on hostile replies.
const (
	// maxTrailingScan is how much of a reply's end is searched for a
	// trailing JSON call.
	maxTrailingScan = 64 << 10
	// maxTrailingStarts bounds the candidate openings tried there.
	maxTrailingStarts = 256
	// maxNamedStarts bounds the lines tried as a tool's name and arguments.
	maxNamedStarts = 64
)

// TextToolCalls returns the tool calls a model wrote as text instead of
// sending them as native calls, as small local models often do. offered
// names the tools the model was given; a call naming another tool is not
// a call. It looks, in this order, and returns what the first place that
// has calls holds:
//
//  1. <tool_call>…</tool_call> blocks that leaked through as text (the
//     last one may lack its closing tag);
//  2. fenced code blocks (```json or a bare ```);
//  3. lines that are an offered tool's name followed by its arguments
//     object, `file_edit {"path": …}` (the form flow's own instructions
//     show a call in), outside or inside any fenced block;
//  4. a JSON value that is the whole reply or ends it.
//
// A call is a JSON object with a "name" and "arguments" (or "parameters"),
// optionally wrapped as {"function": {…}}; the arguments are an object or a
// JSON string holding one. A list of such objects is a list of calls; a
// list with anything else in it is none. Text that only mentions a tool, a
// JSON object elsewhere in the prose, or arguments that are not an object
// give no call. The calls have no ID (the caller assigns them); Arguments
// is the compact JSON text of the object.
func TextToolCalls(content string, offered []string) []ToolCall {
	if len(offered) == 0 || !strings.Contains(content, "{") {
		return nil
	}
	if calls := taggedCalls(content, offered); len(calls) > 0 {
		return calls
	}
	if calls := fencedCalls(content, offered); len(calls) > 0 {
		return calls
	}
	if calls := namedCalls(content, offered); len(calls) > 0 {
		return calls
	}
	return trailingCalls(content, offered)
}

// namedCalls reads the lines of content that start with an offered tool's
// name (after indentation, a list marker or a backquote) followed by its
// arguments, one JSON object, possibly in parentheses, with nothing after
// it on its last line but a closing backquote. A name in prose ("I ran
// flow_check {} and it passed") does not start its line, and a line
// commented out (# or //) is not a call.
func namedCalls(content string, offered []string) []ToolCall {
	var out []ToolCall
	tried := 0
	for at := 0; at < len(content); {
		line := content[at:]
		if nl := strings.IndexByte(line, '\n'); nl >= 0 {
			line = line[:nl]
		}
		start := at
		at += len(line) + 1
		t := strings.TrimLeft(line, " \t")
		t = strings.TrimPrefix(t, "- ")
		t = strings.TrimPrefix(t, "* ")
		t = strings.TrimPrefix(t, "`")
		name := ""
		for _, n := range offered {
			if strings.HasPrefix(t, n) && len(t) > len(n) && (t[len(n)] == ' ' || t[len(n)] == '{' || t[len(n)] == '(') {
				name = n
				break
			}
		}
		if name == "" {
			continue
		}
		rest := strings.TrimLeft(t[len(name):], " ")
		paren := strings.HasPrefix(rest, "(")
		if paren {
			rest = strings.TrimLeft(rest[1:], " ")
		}
		if !strings.HasPrefix(rest, "{") {
			continue
		}
		if tried++; tried > maxNamedStarts {
			break
		}
		// The object may span lines: decode from its brace in content,
		// at most maxTrailingScan bytes of it.
		from := start + len(line) - len(rest)
		dec := json.NewDecoder(strings.NewReader(content[from:min(len(content), from+maxTrailingScan)]))
		var args json.RawMessage
		if dec.Decode(&args) != nil {
			continue
		}
		end := from + int(dec.InputOffset())
		tail := content[end:]
		if nl := strings.IndexByte(tail, '\n'); nl >= 0 {
			tail = tail[:nl]
		}
		tail = strings.TrimSpace(tail)
		if paren {
			tail = strings.TrimSpace(strings.TrimPrefix(tail, ")"))
		}
		tail = strings.TrimSuffix(strings.TrimSuffix(tail, ";"), "`")
		if tail != "" {
			continue
		}
		text, ok := argumentsObject(args)
		if !ok {
			continue
		}
		out = append(out, ToolCall{Name: name, Arguments: text})
		if end > at {
			at = end
		}
	}
	return out
}

const (
	toolCallOpen  = "<tool_call>"
	toolCallClose = "</tool_call>"
)

// taggedCalls reads the <tool_call> blocks of content.
func taggedCalls(content string, offered []string) []ToolCall {
	var out []ToolCall
	rest := content
	for {
		i := strings.Index(rest, toolCallOpen)
		if i < 0 {
			return out
		}
		rest = rest[i+len(toolCallOpen):]
		body := rest
		if j := strings.Index(rest, toolCallClose); j >= 0 {
			body, rest = rest[:j], rest[j+len(toolCallClose):]
		} else {
			rest = ""
		}
		out = append(out, jsonCalls(unfence(body), offered)...)
	}
}

// unfence returns the body of s when s, trimmed, is one fenced block.
func unfence(s string) string {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "```") || !strings.HasSuffix(t, "```") || len(t) < 6 {
		return s
	}
	t = t[3 : len(t)-3]
	if nl := strings.IndexByte(t, '\n'); nl >= 0 && !strings.ContainsAny(t[:nl], "{[") {
		t = t[nl+1:] // the info string, such as "json"
	}
	return t
}

// fencedCalls reads the fenced code blocks of content.
func fencedCalls(content string, offered []string) []ToolCall {
	var out []ToolCall
	rest := content
	for {
		i := strings.Index(rest, "```")
		if i < 0 {
			return out
		}
		rest = rest[i+3:]
		nl := strings.IndexByte(rest, '\n')
		if nl < 0 {
			return out
		}
		info := strings.TrimSpace(rest[:nl])
		end := strings.Index(rest[nl+1:], "```")
		if end < 0 {
			return out
		}
		body := rest[nl+1 : nl+1+end]
		rest = rest[nl+1+end+3:]
		if info == "" || strings.EqualFold(info, "json") || strings.EqualFold(info, "tool_call") {
			out = append(out, jsonCalls(body, offered)...)
		}
	}
}

// trailingCalls reads the JSON value that is the whole of content or ends
// it: the earliest opening brace or bracket from which the rest of the
// content is exactly one JSON value.
func trailingCalls(content string, offered []string) []ToolCall {
	t := strings.TrimRight(content, " \t\r\n")
	if t == "" || (t[len(t)-1] != '}' && t[len(t)-1] != ']') {
		return nil
	}
	base := 0
	if len(t) > maxTrailingScan {
		base = len(t) - maxTrailingScan
	}
	tried := 0
	for i := base; i < len(t) && tried < maxTrailingStarts; i++ {
		if t[i] != '{' && t[i] != '[' {
			continue
		}
		tried++
		if json.Valid([]byte(t[i:])) {
			return jsonCalls(t[i:], offered)
		}
	}
	return nil
}

// jsonCalls decodes text as one call object or a list of them.
func jsonCalls(text string, offered []string) []ToolCall {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil
	}
	var raw json.RawMessage
	if json.Unmarshal([]byte(text), &raw) != nil {
		return nil
	}
	var items []json.RawMessage
	if text[0] == '[' {
		if json.Unmarshal(raw, &items) != nil || len(items) == 0 {
			return nil
		}
	} else {
		items = []json.RawMessage{raw}
	}
	out := make([]ToolCall, 0, len(items))
	for _, it := range items {
		c, ok := callObject(it)
		if !ok {
			return nil // a list of calls holds only calls
		}
		if slices.Contains(offered, c.Name) {
			out = append(out, c)
		}
	}
	return out
}

// callObject decodes {"name":…, "arguments"|"parameters":…}, possibly
// wrapped in {"function": …}.
func callObject(raw json.RawMessage) (ToolCall, bool) {
	var o struct {
		Name       *string         `json:"name"`
		Arguments  json.RawMessage `json:"arguments"`
		Parameters json.RawMessage `json:"parameters"`
		Function   json.RawMessage `json:"function"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return ToolCall{}, false
	}
	if o.Name == nil && len(o.Function) > 0 {
		return callObject(o.Function)
	}
	if o.Name == nil || strings.TrimSpace(*o.Name) == "" {
		return ToolCall{}, false
	}
	args := o.Arguments
	if len(args) == 0 {
		args = o.Parameters
	}
	text, ok := argumentsObject(args)
	if !ok {
		return ToolCall{}, false
	}
	return ToolCall{Name: strings.TrimSpace(*o.Name), Arguments: text}, true
}

// argumentsObject returns the compact text of a JSON object given as is or
// as a JSON string holding it.
func argumentsObject(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", false
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		raw = bytes.TrimSpace([]byte(s))
	}
	if len(raw) == 0 || raw[0] != '{' {
		return "", false
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return "", false
	}
	return buf.String(), true
}
