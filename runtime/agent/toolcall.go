package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"flow/runtime/model"
	"flow/runtime/report"
)

// callBatch is one assistant message's tool calls after normalisation.
type callBatch struct {
	calls []model.ToolCall
	// duplicate maps the index of every call whose id was not unique in the
	// batch to the error it gets instead of being executed.
	duplicate map[int]string
}

// normaliseCalls gives every call of a batch a unique id, so that each can
// be answered by exactly one tool message with the same id. A missing id is
// synthesised as <role>-<k>-<turn>-<index>. Calls sharing an id are ambiguous:
// none of them is executed, each is renamed to a unique id (<id>#2, <id>#3,
// …) and answered with an error.
func normaliseCalls(in []model.ToolCall, role string, k, turn int) callBatch {
	b := callBatch{calls: make([]model.ToolCall, len(in))}
	count := map[string]int{}
	for _, c := range in {
		if c.ID != "" {
			count[c.ID]++
		}
	}
	used := map[string]bool{}
	for id := range count {
		used[id] = true
	}
	seen := map[string]int{}
	for i, c := range in {
		switch {
		case c.ID == "":
			c.ID = unique(used, fmt.Sprintf("%s-%d-%d-%d", role, k, turn, i))
		case count[c.ID] > 1:
			orig := c.ID
			seen[orig]++
			if seen[orig] > 1 {
				c.ID = unique(used, orig+"#"+strconv.Itoa(seen[orig]))
			}
			if b.duplicate == nil {
				b.duplicate = map[int]string{}
			}
			b.duplicate[i] = fmt.Sprintf("Duplicate tool call id %q: every call in one reply needs its own id. This call was not executed; call the tool again.", orig)
		}
		b.calls[i] = c
	}
	return b
}

// unique returns id, or id with a numeric suffix, that is not in used, and
// marks it used.
func unique(used map[string]bool, id string) string {
	cand := id
	for n := 2; used[cand]; n++ {
		cand = id + "~" + strconv.Itoa(n)
	}
	used[cand] = true
	return cand
}

// execute1 executes one tool call and returns its tool message, its status
// and whether it changed the workspace.
func (r *run) execute1(ctx context.Context, role string, turn int, st *report.Role, c model.ToolCall) (model.Message, string, bool) {
	r.rep.ToolCalls++
	detail := callDetail(c)
	r.emit(Event{Kind: EventToolStart, Role: role, Turn: turn, Tool: c.Name, ToolCallID: c.ID, Message: detail})
	t0 := r.a.deps.Now()
	r.edit.reset()
	res := r.tools.Call(ctx, role, c)
	ms := r.a.deps.Now().Sub(t0).Milliseconds()

	content, status, errMsg := res.Content, res.Status, res.Error
	if status == "" {
		status = report.StatusUnverified
	}
	switch {
	case content == "":
		content = resultJSON(status, errMsg)
	case utf8.RuneCountInString(content) > maxToolResultChars:
		// The registry bounds its results; this guards the bound anyway.
		status = report.StatusError
		errMsg = "The tool result exceeded the 40000-character limit; ask for less (a line range or a narrower search)."
		content = resultJSON(status, errMsg)
	}
	if status != report.StatusOK {
		st.ToolErrors++
	}
	if res.Changed != "" {
		r.changed[res.Changed] = true
		r.writes++
	}
	ev := report.Event{
		Role: role, Tool: c.Name, ToolCallID: c.ID, Status: status, Error: errMsg,
		DurationMS: ms, Bytes: len(content), Truncated: res.Truncated,
	}
	r.rep.Events = append(r.rep.Events, ev)
	var edit *report.FileDiff
	if status == report.StatusOK && res.Changed != "" {
		edit = r.edit.diffOf(res.Changed)
	}
	r.emit(Event{
		Kind: EventToolEnd, Role: role, Turn: turn, Tool: c.Name, ToolCallID: c.ID, Status: status,
		Error: errMsg, DurationMS: ms, Bytes: len(content), Truncated: res.Truncated, Message: detail,
		Diff: edit,
	})
	return model.Message{Role: model.RoleTool, ToolCallID: c.ID, Name: c.Name, Content: content}, status, res.Changed != ""
}

// refuse answers a call that is not executed with an error result, records
// it as an event, and returns its tool message. toolError says whether it
// counts as one of the role's tool errors.
func (r *run) refuse(role string, turn int, st *report.Role, c model.ToolCall, msg string, toolError bool) model.Message {
	content := resultJSON(report.StatusError, msg)
	if toolError {
		st.ToolErrors++
	}
	r.rep.Events = append(r.rep.Events, report.Event{
		Role: role, Tool: c.Name, ToolCallID: c.ID, Status: report.StatusError, Error: msg, Bytes: len(content),
	})
	r.emit(Event{
		Kind: EventToolEnd, Role: role, Turn: turn, Tool: c.Name, ToolCallID: c.ID,
		Status: report.StatusError, Error: msg, Bytes: len(content), Message: callDetail(c),
	})
	return model.Message{Role: model.RoleTool, ToolCallID: c.ID, Name: c.Name, Content: content}
}

// resultJSON is the JSON text of a tool result without payload.
func resultJSON(status, msg string) string {
	v := map[string]string{"status": status}
	if msg != "" {
		v["error"] = msg
	}
	b, err := report.Marshal(v)
	if err != nil {
		return `{"status":"error"}`
	}
	return string(b)
}

// callDetail extracts the main argument of a call (a path, a pattern or a
// check name) for progress events; "" when there is none or the arguments
// are not a JSON object.
func callDetail(c model.ToolCall) string {
	var args map[string]any
	if json.Unmarshal([]byte(c.Arguments), &args) != nil {
		return ""
	}
	for _, key := range []string{"path", "pattern", "name"} {
		if s, ok := args[key].(string); ok && s != "" {
			return oneLine(s, 80)
		}
	}
	return ""
}

// itoa formats n in decimal.
func itoa(n int) string { return strconv.Itoa(n) }
