package ollama

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"flow/runtime/model"
)

// Chat sends one chat call and returns the assistant's answer. Streamed
// content is passed to req.OnDelta as it arrives. The call is bounded by
// [Options.Timeout] and ctx; cancelling ctx aborts it promptly.
func (c *Client) Chat(ctx context.Context, req model.Request) (model.Response, error) {
	if req.Model == "" {
		return model.Response{}, errors.New("ollama: chat: no model name")
	}
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	if c.opts.API == apiOpenAI {
		return c.chatOpenAI(ctx, req)
	}
	return c.chatNative(ctx, req)
}

// wireTool is a tool in the OpenAI function format, which both APIs accept.
type wireTool struct {
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters"`
}

func wireTools(tools []model.Tool) []wireTool {
	if len(tools) == 0 {
		return nil
	}
	out := make([]wireTool, len(tools))
	for i, t := range tools {
		params := t.Parameters
		if params == nil {
			params = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		out[i] = wireTool{Type: "function", Function: wireFunction{Name: t.Name, Description: t.Description, Parameters: params}}
	}
	return out
}

// lineReader reads the lines of a capped response body.
type lineReader struct {
	r *bufio.Reader
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next line without its line ending. At the end of the
// body it returns io.EOF; a last line without a newline is still returned.
func (l *lineReader) next() ([]byte, error) {
	line, err := l.r.ReadBytes('\n')
	if len(line) > 0 && (err == nil || err == io.EOF) {
		return bytes.TrimRight(line, "\r\n"), nil
	}
	return nil, err
}

// argumentsText turns a tool call's arguments as received (a JSON object,
// or a JSON string holding the text) into the raw text model.ToolCall keeps.
func argumentsText(raw json.RawMessage) string {
	if isAbsent(raw) {
		return ""
	}
	raw = bytes.TrimSpace(raw)
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil {
		return buf.String()
	}
	return string(raw)
}

// isAbsent reports whether a JSON member was missing or null.
func isAbsent(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}

// argumentsValue is the inverse of argumentsText for the native API: the
// text itself when it is a JSON object, else the text as a JSON string.
// Empty text means no arguments.
func argumentsValue(text string) json.RawMessage {
	t := bytes.TrimSpace([]byte(text))
	if len(t) == 0 {
		return json.RawMessage("{}")
	}
	if t[0] == '{' && json.Valid(t) {
		return json.RawMessage(t)
	}
	b, _ := json.Marshal(text) // a string always encodes
	return b
}

// readErr turns an error met while reading a streamed body into the call's
// error.
func readErr(ctx context.Context, op string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		if ctx.Err() == nil {
			return fmt.Errorf("ollama: %s: stream ended before the final chunk", op)
		}
	}
	return callError(ctx, op, err)
}
