package ollama

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"strings"

	"flow/internal/text"
	"flow/runtime/model"
)

const pathOpenAIChat = "/v1/chat/completions"

// openaiRequest is the body of POST /v1/chat/completions.
type openaiRequest struct {
	Model          string              `json:"model"`
	Messages       []openaiMessage     `json:"messages"`
	Temperature    float64             `json:"temperature"`
	MaxTokens      int                 `json:"max_tokens,omitempty"`
	Stream         bool                `json:"stream"`
	StreamOptions  openaiStreamOptions `json:"stream_options"`
	Tools          []wireTool          `json:"tools,omitempty"`
	ResponseFormat *openaiFormat       `json:"response_format,omitempty"`
}

// openaiFormat is the response_format member: {"type":"json_object"}, or
// {"type":"json_schema","json_schema":{"name","schema","strict"}}.
type openaiFormat struct {
	Type       string            `json:"type"`
	JSONSchema *openaiJSONSchema `json:"json_schema,omitempty"`
	// Schema is llama-cpp-python's form of a schema: {"type":
	// "json_object", "schema": …}, sent after its server refused
	// json_schema.
	Schema json.RawMessage `json:"schema,omitempty"`
}

type openaiJSONSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict"`
}

// responseFormat translates a request's Format (a JSON Schema, or the
// string "json") into response_format; nil when there is none.
func responseFormat(format json.RawMessage) *openaiFormat {
	f := bytes.TrimSpace(format)
	if len(f) == 0 || bytes.Equal(f, []byte("null")) {
		return nil
	}
	if f[0] != '{' {
		return &openaiFormat{Type: "json_object"}
	}
	// OpenAI requires a name; the schema's title is the natural one.
	var head struct {
		Title string `json:"title"`
	}
	_ = json.Unmarshal(f, &head)
	name := schemaName(head.Title)
	return &openaiFormat{Type: "json_schema", JSONSchema: &openaiJSONSchema{Name: name, Schema: json.RawMessage(f), Strict: true}}
}

// schemaName makes title a valid response_format name (letters, digits,
// '_' and '-', at most 64), "response" when nothing is left.
func schemaName(title string) string {
	var b strings.Builder
	for _, r := range title {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('_')
		}
		if b.Len() == 64 {
			break
		}
	}
	if b.Len() == 0 {
		return "response"
	}
	return b.String()
}

type openaiStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type openaiMessage struct {
	Role       string           `json:"role"`
	Content    string           `json:"content"`
	ToolCalls  []openaiToolCall `json:"tool_calls,omitempty"`
	ToolCallID string           `json:"tool_call_id,omitempty"`
	Name       string           `json:"name,omitempty"`
}

type openaiToolCall struct {
	Index    *int           `json:"index,omitempty"`
	ID       string         `json:"id,omitempty"`
	Type     string         `json:"type,omitempty"`
	Function openaiFunction `json:"function"`
}

type openaiFunction struct {
	Name string `json:"name,omitempty"`
	// Arguments is a JSON string holding the arguments' text; some servers
	// send an object instead, which is accepted too.
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// openaiChunk is a streamed chunk or a whole non-streamed completion.
type openaiChunk struct {
	Choices []struct {
		Index        int                  `json:"index"`
		Delta        *openaiChoiceMessage `json:"delta"`
		Message      *openaiChoiceMessage `json:"message"`
		FinishReason *string              `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

type openaiChoiceMessage struct {
	Content   *string          `json:"content"`
	ToolCalls []openaiToolCall `json:"tool_calls"`
}

func (c *Client) openaiBody(req model.Request) openaiRequest {
	msgs := make([]openaiMessage, len(req.Messages))
	for i, m := range req.Messages {
		om := openaiMessage{Role: m.Role, Content: m.Content}
		if m.Role == model.RoleTool {
			om.ToolCallID = m.ToolCallID
			om.Name = m.Name
		}
		for _, tc := range m.ToolCalls {
			args := tc.Arguments
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			b, _ := json.Marshal(args) // a string always encodes
			om.ToolCalls = append(om.ToolCalls, openaiToolCall{
				ID:       tc.ID,
				Type:     "function",
				Function: openaiFunction{Name: tc.Name, Arguments: b},
			})
		}
		msgs[i] = om
	}
	maxTokens := c.completionBound(req)
	return openaiRequest{
		Model:          req.Model,
		Messages:       msgs,
		Temperature:    c.temperature(req),
		MaxTokens:      maxTokens,
		Stream:         true,
		StreamOptions:  openaiStreamOptions{IncludeUsage: true},
		Tools:          wireTools(req.Tools),
		ResponseFormat: responseFormat(req.Format),
	}
}

// chatOpenAI posts to the OpenAI-compatible endpoint and reads either an SSE
// stream or, from servers that ignore stream, one JSON completion.
func (c *Client) chatOpenAI(ctx context.Context, req model.Request) (model.Response, error) {
	const op = "POST " + pathOpenAIChat
	body := c.openaiBody(req)
	resp, err := c.do(ctx, "POST", pathOpenAIChat, body)
	if rf := body.ResponseFormat; err != nil && refusedJSONSchema(err, rf) {
		// llama-cpp-python's server takes a schema only as json_object
		// with a schema member (doc/design.md §7.5): ask once more so.
		body.ResponseFormat = &openaiFormat{Type: "json_object", Schema: rf.JSONSchema.Schema}
		resp, err = c.do(ctx, "POST", pathOpenAIChat, body)
	}
	if err != nil {
		return model.Response{}, err
	}
	defer resp.Body.Close()
	acc := &openaiAccumulator{onDelta: req.OnDelta}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/json" {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return model.Response{}, callError(ctx, op, err)
		}
		if err := acc.add(op, b, false); err != nil && err != errLooping {
			return model.Response{}, err
		}
		if !acc.sawChoice {
			return model.Response{}, fmt.Errorf("ollama: %s: response has no choices", op)
		}
		return acc.response(), nil
	}
	if err := readSSE(ctx, op, resp.Body, acc); err != nil {
		return model.Response{}, err
	}
	return acc.response(), nil
}

// readSSE reads server-sent events until "data: [DONE]", feeding each event's
// data to acc. A stream that ends without [DONE] is accepted only when a
// finish reason was seen.
func readSSE(ctx context.Context, op string, body io.Reader, acc *openaiAccumulator) error {
	lines := newLineReader(body)
	var data []byte
	dispatch := func() (done bool, err error) {
		if len(data) == 0 {
			return false, nil
		}
		ev := bytes.TrimSpace(data)
		data = data[:0]
		if string(ev) == "[DONE]" {
			return true, nil
		}
		if err := acc.add(op, ev, true); err != nil {
			// A loop ends the reply; returning closes the connection.
			return err == errLooping, err
		}
		return false, nil
	}
	for {
		line, err := lines.next()
		if err == io.EOF {
			done, derr := dispatch()
			if derr != nil && derr != errLooping {
				return derr
			}
			if done || acc.finishReason != "" {
				return nil
			}
			return readErr(ctx, op, io.ErrUnexpectedEOF)
		}
		if err != nil {
			return readErr(ctx, op, err)
		}
		if len(line) == 0 { // end of an event
			done, err := dispatch()
			if done || err != nil {
				if err == errLooping {
					err = nil
				}
				return err
			}
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		if string(field) != "data" {
			continue // comments, event:, id:, retry:
		}
		value = bytes.TrimPrefix(value, []byte(" "))
		if len(data) > 0 {
			data = append(data, '\n')
		}
		data = append(data, value...)
	}
}

// openaiAccumulator builds one response from chunks.
type openaiAccumulator struct {
	onDelta      func(string)
	content      strings.Builder
	calls        []*callBuilder
	byIndex      map[int]*callBuilder
	finishReason string
	usage        model.Usage
	sawChoice    bool
	guard        loopGuard
	keep         int // when a loop ended the reply: the content to keep
}

// errLooping ends reading a reply whose content repeats itself (see
// [loopGuard]); it is not a failure.
var errLooping = errors.New("the reply repeats itself")

// add decodes one chunk (streamed) or one whole completion (not streamed).
func (a *openaiAccumulator) add(op string, data []byte, streamed bool) error {
	var ch openaiChunk
	if err := json.Unmarshal(data, &ch); err != nil {
		return fmt.Errorf("ollama: %s: invalid response chunk %q: %w", op, text.Clip(string(data), 200), err)
	}
	if msg := rawErrorText(ch.Error); msg != "" {
		return fmt.Errorf("ollama: %s", msg)
	}
	if ch.Usage != nil {
		a.usage = model.Usage{PromptTokens: ch.Usage.PromptTokens, CompletionTokens: ch.Usage.CompletionTokens}
	}
	for _, choice := range ch.Choices {
		if choice.Index != 0 {
			continue
		}
		a.sawChoice = true
		if choice.FinishReason != nil && *choice.FinishReason != "" {
			a.finishReason = *choice.FinishReason
		}
		m := choice.Delta
		if !streamed {
			m = choice.Message
		}
		if m == nil {
			continue
		}
		if m.Content != nil && *m.Content != "" {
			a.content.WriteString(*m.Content)
			if a.onDelta != nil {
				a.onDelta(*m.Content)
			}
		}
		for _, tc := range m.ToolCalls {
			a.addCall(tc)
		}
	}
	if keep, ok := a.guard.looping(a.content.String()); ok && a.finishReason == "" {
		a.keep = keep
		return errLooping
	}
	return nil
}

// addCall merges a tool-call delta: calls are keyed by index; id and name
// come from the first delta of a call, the arguments text is concatenated.
func (a *openaiAccumulator) addCall(tc openaiToolCall) {
	var call *callBuilder
	switch {
	case tc.Index != nil:
		call = a.byIndex[*tc.Index]
		if call == nil {
			call = a.newCall()
			if a.byIndex == nil {
				a.byIndex = map[int]*callBuilder{}
			}
			a.byIndex[*tc.Index] = call
		}
	case tc.ID != "":
		for _, c := range a.calls {
			if c.id == tc.ID {
				call = c
			}
		}
		if call == nil {
			call = a.newCall()
		}
	case len(a.calls) > 0:
		call = a.calls[len(a.calls)-1]
	default:
		call = a.newCall()
	}
	if call.id == "" {
		call.id = tc.ID
	}
	if call.name == "" {
		call.name = tc.Function.Name
	}
	call.args.WriteString(argumentsText(tc.Function.Arguments))
}

// callBuilder is a tool call being assembled from deltas.
type callBuilder struct {
	id, name string
	args     strings.Builder
}

func (a *openaiAccumulator) newCall() *callBuilder {
	c := &callBuilder{}
	a.calls = append(a.calls, c)
	return c
}

func (a *openaiAccumulator) response() model.Response {
	out := model.Response{
		Message:    model.Message{Role: model.RoleAssistant, Content: a.content.String()},
		Usage:      a.usage,
		DoneReason: a.finishReason,
	}
	for _, c := range a.calls {
		out.Message.ToolCalls = append(out.Message.ToolCalls, model.ToolCall{ID: c.id, Name: c.name, Arguments: c.args.String()})
	}
	if a.keep > 0 {
		out.Usage = model.Usage{}
		return cutLoop(out, a.keep)
	}
	return out
}

// refusedJSONSchema reports whether err is the server refusing a
// response_format of type json_schema that the request had: an HTTP error
// whose message names json_schema.
func refusedJSONSchema(err error, rf *openaiFormat) bool {
	var se *statusError
	return rf != nil && rf.JSONSchema != nil && errors.As(err, &se) &&
		se.code >= 400 && strings.Contains(se.message, "json_schema")
}
