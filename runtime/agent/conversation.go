package agent

import (
	"unicode/utf8"

	"flow/runtime/model"
	"flow/runtime/report"
)

// conversation is one role invocation's message list and its size, kept
// as it grows (doc/design.md §6.6). The one account has two readings,
// because two bounds measure a prompt differently:
//
//   - size: the character count of the JSON text of the message list plus
//     that of the offered tool schemas, which agent.max_context_chars
//     bounds. JSON is produced without HTML or non-ASCII escaping, and
//     characters are Unicode code points, so non-ASCII text is not
//     inflated.
//   - promptSize: the text the model's chat template sees (every message's
//     content, tool names and arguments, plus the schemas' JSON), from which
//     the context window estimates prompt tokens (window.go). It leaves out
//     the JSON escaping, which the template does not add: a tool result of
//     quoted code is escaped twice in JSON, and counting that would stop a
//     run whose prompt fits the window.
type conversation struct {
	msgs    []model.Message
	offered []model.Tool
	// declared: the offered schemas go in each request's tools field
	// (agent.tool_declarations, doc/design.md §6.5); otherwise the system
	// prompt's list alone declares them, and the calls come as text.
	declared bool
	limit    int // agent.max_context_chars
	tools    int // characters of the declared schemas' JSON, 0 when not declared
	chars    int // JSON characters of the messages, without brackets and commas
	text     int // characters of the messages as the template sees them
}

// newConversation returns an empty conversation offering tools, declared
// in each request when declare, bounded by limit characters.
func newConversation(limit int, offered []model.Tool, declare bool) *conversation {
	c := &conversation{msgs: make([]model.Message, 0, 8), offered: offered, declared: declare, limit: limit}
	if declare && len(offered) > 0 {
		c.tools = jsonChars(offered)
	}
	return c
}

// declaredTools are the schemas for a request's tools field: the offered
// tools when they are declared natively, else none (the system prompt
// lists them, and the calls are read from the reply's text).
func (c *conversation) declaredTools() []model.Tool {
	if !c.declared {
		return nil
	}
	return c.offered
}

// push appends m.
func (c *conversation) push(m model.Message) {
	c.msgs = append(c.msgs, m)
	c.chars += jsonChars(m)
	c.text += textChars(m)
}

// replaceLast replaces the last message with m.
func (c *conversation) replaceLast(m model.Message) {
	last := len(c.msgs) - 1
	c.chars += jsonChars(m) - jsonChars(c.msgs[last])
	c.text += textChars(m) - textChars(c.msgs[last])
	c.msgs[last] = m
}

// promptSize is the prompt's size as the model's template sees it, with
// the schemas when withTools.
func (c *conversation) promptSize(withTools bool) int {
	if withTools {
		return c.text + c.tools
	}
	return c.text
}

// textChars is one message's characters as the chat template sees them:
// its content, its role and its calls' names and arguments, with a little
// for the template's separators.
func textChars(m model.Message) int {
	n := utf8.RuneCountInString(m.Content) + len(m.Role) + 2
	for _, tc := range m.ToolCalls {
		n += utf8.RuneCountInString(tc.Name) + utf8.RuneCountInString(tc.Arguments) + 2
	}
	return n
}

// size is the JSON character count of `[msg,msg,...]` plus the schemas.
func (c *conversation) size() int {
	n := 2 + c.chars + c.tools
	if len(c.msgs) > 1 {
		n += len(c.msgs) - 1
	}
	return n
}

// exceeded reports whether the conversation is over
// agent.max_context_chars.
func (c *conversation) exceeded() bool { return c.size() > c.limit }

// jsonChars returns the number of characters of v's JSON text.
func jsonChars(v any) int {
	b, err := report.Marshal(v)
	if err != nil {
		return 0
	}
	return utf8.RuneCount(b)
}

// toolMessage is the tool message answering c with content.
func toolMessage(c model.ToolCall, content string) model.Message {
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
