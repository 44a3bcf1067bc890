package ollama

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"flow/internal/text"
	"flow/runtime/model"
)

const pathNativeChat = "/api/chat"

// nativeRequest is the body of POST /api/chat.
type nativeRequest struct {
	Model    string          `json:"model"`
	Messages []nativeMessage `json:"messages"`
	Tools    []wireTool      `json:"tools,omitempty"`
	Format   json.RawMessage `json:"format,omitempty"`
	Stream   bool            `json:"stream"`
	Think    bool            `json:"think"`
	Options  nativeOptions   `json:"options"`
}

type nativeOptions struct {
	NumCtx      int     `json:"num_ctx,omitempty"`
	NumPredict  int     `json:"num_predict,omitempty"`
	Temperature float64 `json:"temperature"`
}

type nativeMessage struct {
	Role       string           `json:"role"`
	Content    string           `json:"content"`
	Thinking   string           `json:"thinking,omitempty"`
	ToolCalls  []nativeToolCall `json:"tool_calls,omitempty"`
	ToolName   string           `json:"tool_name,omitempty"`
	ToolCallID string           `json:"tool_call_id,omitempty"`
}

type nativeToolCall struct {
	ID       string         `json:"id,omitempty"`
	Function nativeFunction `json:"function"`
}

type nativeFunction struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// nativeChunk is one NDJSON line of a streamed /api/chat answer.
type nativeChunk struct {
	Message         *nativeMessage `json:"message"`
	Done            bool           `json:"done"`
	DoneReason      string         `json:"done_reason"`
	PromptEvalCount int            `json:"prompt_eval_count"`
	EvalCount       int            `json:"eval_count"`
	// PromptEvalDuration is in nanoseconds.
	PromptEvalDuration int64           `json:"prompt_eval_duration"`
	Error              json.RawMessage `json:"error"`
}

func (c *Client) nativeBody(req model.Request) nativeRequest {
	msgs := make([]nativeMessage, len(req.Messages))
	for i, m := range req.Messages {
		nm := nativeMessage{Role: m.Role, Content: m.Content}
		if m.Role == model.RoleTool {
			nm.ToolName = m.Name
			nm.ToolCallID = m.ToolCallID
		}
		for _, tc := range m.ToolCalls {
			nm.ToolCalls = append(nm.ToolCalls, nativeToolCall{
				ID:       tc.ID,
				Function: nativeFunction{Name: tc.Name, Arguments: argumentsValue(tc.Arguments)},
			})
		}
		msgs[i] = nm
	}
	return nativeRequest{
		Model:    req.Model,
		Messages: msgs,
		Tools:    wireTools(req.Tools),
		Format:   req.Format,
		Stream:   true,
		Think:    c.opts.Think,
		Options:  nativeOptions{NumCtx: c.opts.ContextLength, NumPredict: c.completionBound(req), Temperature: c.temperature(req)},
	}
}

// chatNative streams POST /api/chat. Every line is checked for an error
// member, because Ollama reports failures after the 200 status is sent.
func (c *Client) chatNative(ctx context.Context, req model.Request) (model.Response, error) {
	const op = "POST " + pathNativeChat
	resp, err := c.do(ctx, "POST", pathNativeChat, c.nativeBody(req))
	if err != nil {
		return model.Response{}, err
	}
	defer resp.Body.Close()

	out := model.Response{Message: model.Message{Role: model.RoleAssistant}}
	var content strings.Builder
	var guard loopGuard
	lines := newLineReader(resp.Body)
	for {
		line, err := lines.next()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return model.Response{}, readErr(ctx, op, err)
		}
		if len(line) == 0 {
			continue
		}
		var ch nativeChunk
		if err := json.Unmarshal(line, &ch); err != nil {
			return model.Response{}, fmt.Errorf("ollama: %s: invalid stream line %q: %w", op, text.Clip(string(line), 200), err)
		}
		if msg := rawErrorText(ch.Error); msg != "" {
			return model.Response{}, fmt.Errorf("ollama: %s", msg)
		}
		if m := ch.Message; m != nil {
			// m.Thinking is the model's reasoning; it is not part of the answer.
			if m.Content != "" {
				content.WriteString(m.Content)
				if req.OnDelta != nil {
					req.OnDelta(m.Content)
				}
			}
			for _, tc := range m.ToolCalls {
				args := argumentsText(tc.Function.Arguments)
				if isAbsent(tc.Function.Arguments) {
					args = "{}" // a call without arguments
				}
				out.Message.ToolCalls = append(out.Message.ToolCalls, model.ToolCall{
					ID:        tc.ID,
					Name:      tc.Function.Name,
					Arguments: args,
				})
			}
		}
		if keep, ok := guard.looping(content.String()); ok && !ch.Done {
			// Returning closes the connection, which stops the server.
			out.Message.Content = content.String()
			return cutLoop(out, keep), nil
		}
		if ch.Done {
			out.Message.Content = content.String()
			out.DoneReason = ch.DoneReason
			out.Usage = model.Usage{PromptTokens: ch.PromptEvalCount, CompletionTokens: ch.EvalCount}
			if ch.PromptEvalDuration > 0 {
				out.PromptEval = time.Duration(ch.PromptEvalDuration)
			}
			return out, nil
		}
	}
}
