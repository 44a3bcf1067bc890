package agent

import (
	"encoding/json"
	"fmt"
	"strconv"

	"flow/internal/text"
	"flow/runtime/model"
)

// callBatch is one assistant message's tool calls after normalisation.
type callBatch struct {
	calls []model.ToolCall
	// duplicate maps the index of every call whose id was not unique in the
	// batch to the error it gets instead of being executed.
	duplicate map[int]string
	// refused maps the index of every call the extraction refused to the
	// error it gets instead of being executed.
	refused map[int]string
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
			return text.OneLine(s, 80)
		}
	}
	return ""
}
