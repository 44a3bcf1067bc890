package agent

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"flow/runtime/model"
	"flow/runtime/report"
)

// Small local models often repeat the call they just made, turn after turn,
// until the iteration budget is gone. A call identical to one of the
// previous turn's (same tool, same arguments up to JSON formatting and key
// order) is therefore not run again: it is answered with the earlier result
// and a note saying so. It still counts as a tool call for max_tool_calls,
// as every answered call does, and as a tool error when the result it
// repeats was one. A call that changes the workspace forgets every earlier
// result, since they may be stale.

// maxRepeatedChars bounds the earlier result quoted in the answer to a
// repeated call; a longer one is referred to rather than sent twice.
const maxRepeatedChars = 4000

// MsgRepeated is the note of an answer to a repeated call.
const MsgRepeated = "You made this exact call in your previous turn, so it was not run again; its result is repeated here. Use it, or make a different call."

// answer is an executed call's result as the model saw it.
type answer struct {
	id      string
	status  string
	content string
}

// repeats remembers the answers of the previous and the current turn.
type repeats struct {
	prev, cur map[string]answer
}

// callKey is a call's identity: its name and canonical arguments.
func callKey(c model.ToolCall) string {
	return c.Name + "\x00" + canonicalArgs(c.Arguments)
}

// canonicalArgs returns the arguments re-encoded with sorted keys and no
// insignificant space, or the trimmed text when it is not JSON.
func canonicalArgs(args string) string {
	t := strings.TrimSpace(args)
	if t == "" {
		return "{}"
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(t))
	dec.UseNumber()
	if dec.Decode(&v) != nil || dec.More() {
		return t
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return t
	}
	return strings.TrimSpace(buf.String())
}

// previous returns the previous turn's answer to a call identical to c.
func (r *repeats) previous(c model.ToolCall) (answer, bool) {
	a, ok := r.prev[callKey(c)]
	return a, ok
}

// keep records the current turn's answer to c.
func (r *repeats) keep(c model.ToolCall, a answer) {
	if r.cur == nil {
		r.cur = map[string]answer{}
	}
	r.cur[callKey(c)] = a
}

// forget drops every answer (the workspace changed).
func (r *repeats) forget() {
	r.prev, r.cur = nil, nil
}

// nextTurn makes the current turn's answers the previous turn's.
func (r *repeats) nextTurn() {
	r.prev, r.cur = r.cur, nil
}

// repeatedJSON is the tool message answering a repeated call.
func repeatedJSON(prev answer) string {
	v := map[string]any{"status": prev.status, "repeated": true, "note": MsgRepeated, "previous_call_id": prev.id}
	switch {
	case utf8.RuneCountInString(prev.content) > maxRepeatedChars:
		v["previous_result"] = "omitted: it is the result of call " + prev.id + " in your previous turn"
	case json.Valid([]byte(prev.content)):
		v["previous_result"] = json.RawMessage(prev.content)
	default:
		v["previous_result"] = prev.content
	}
	b, err := report.Marshal(v)
	if err != nil {
		return resultJSON(prev.status, MsgRepeated)
	}
	return string(b)
}
