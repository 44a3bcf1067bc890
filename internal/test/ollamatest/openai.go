package ollamatest

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// openaiChunk is one streamed chat.completion.chunk or, with Message set, a
// whole chat.completion.
type openaiChunk struct {
	ID      string         `json:"id"`
	Object  string         `json:"object"`
	Created int64          `json:"created"`
	Model   string         `json:"model"`
	Choices []openaiChoice `json:"choices"`
	Usage   *openaiUsage   `json:"usage,omitempty"`
}

type openaiChoice struct {
	Index        int            `json:"index"`
	Delta        *openaiMessage `json:"delta,omitempty"`
	Message      *openaiMessage `json:"message,omitempty"`
	FinishReason *string        `json:"finish_reason"`
}

type openaiMessage struct {
	Role      string       `json:"role,omitempty"`
	Content   *string      `json:"content,omitempty"`
	ToolCalls []openaiCall `json:"tool_calls,omitempty"`
}

type openaiCall struct {
	Index    *int           `json:"index,omitempty"`
	ID       string         `json:"id,omitempty"`
	Type     string         `json:"type,omitempty"`
	Function openaiFunction `json:"function"`
}

type openaiFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type openaiUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func (t Turn) finishReason() string {
	switch {
	case t.DoneReason != "":
		return t.DoneReason
	case len(t.ToolCalls) > 0:
		return "tool_calls"
	}
	return "stop"
}

func (t Turn) usage() *openaiUsage {
	return &openaiUsage{t.PromptTokens, t.CompletionTokens, t.PromptTokens + t.CompletionTokens}
}

// streamOpenAI answers /v1/chat/completions with server-sent events. Each
// call's arguments are split across three chunks, interleaved with the
// other calls' chunks, as llama.cpp and vLLM may send them.
func (s *Server) streamOpenAI(w http.ResponseWriter, r *http.Request, t Turn, modelName string, withUsage bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	st := &streamer{s: s, ctx: r.Context(), w: w, delay: t.ChunkDelay}
	created := time.Now().Unix()
	event := func(v any) bool {
		b, err := json.Marshal(v)
		if err != nil {
			return false
		}
		return st.send([]byte("data: " + string(b) + "\n\n"))
	}
	delta := func(m openaiMessage, finish *string) bool {
		return event(openaiChunk{
			ID: "chatcmpl-ollamatest", Object: "chat.completion.chunk", Created: created, Model: modelName,
			Choices: []openaiChoice{{Delta: &m, FinishReason: finish}},
		})
	}
	text := func(v string) *string { return &v }

	if !delta(openaiMessage{Role: "assistant", Content: text("")}, nil) {
		return
	}
	for _, p := range append(splitText(t.Content, 3), padding(t.Oversize)...) {
		if !delta(openaiMessage{Content: text(p)}, nil) {
			return
		}
	}
	pieces := make([][]string, len(t.ToolCalls))
	for i, c := range t.ToolCalls {
		pieces[i] = splitText(c.argumentsText(), 3)
		idx := i
		first := openaiCall{Index: &idx, ID: c.ID, Type: "function", Function: openaiFunction{Name: c.Name}}
		if !delta(openaiMessage{ToolCalls: []openaiCall{first}}, nil) {
			return
		}
	}
	for k := 0; k < 3; k++ {
		for i := range t.ToolCalls {
			if k >= len(pieces[i]) {
				continue
			}
			idx := i
			part := openaiCall{Index: &idx, Function: openaiFunction{Arguments: pieces[i][k]}}
			if !delta(openaiMessage{ToolCalls: []openaiCall{part}}, nil) {
				return
			}
		}
	}
	if t.Error != "" {
		event(openaiError(t.Error))
		return
	}
	if !delta(openaiMessage{}, text(t.finishReason())) {
		return
	}
	if withUsage {
		if !event(openaiChunk{
			ID: "chatcmpl-ollamatest", Object: "chat.completion.chunk", Created: created, Model: modelName,
			Choices: []openaiChoice{}, Usage: t.usage(),
		}) {
			return
		}
	}
	st.send([]byte("data: [DONE]\n\n"))
}

// completeOpenAI answers /v1/chat/completions without streaming.
func (s *Server) completeOpenAI(w http.ResponseWriter, t Turn, modelName string) {
	if t.Error != "" {
		writeJSON(w, http.StatusOK, openaiError(t.Error))
		return
	}
	var content strings.Builder
	content.WriteString(t.Content)
	for _, p := range padding(t.Oversize) {
		content.WriteString(p)
	}
	text := content.String()
	m := openaiMessage{Role: "assistant", Content: &text}
	for _, c := range t.ToolCalls {
		m.ToolCalls = append(m.ToolCalls, openaiCall{ID: c.ID, Type: "function",
			Function: openaiFunction{Name: c.Name, Arguments: c.argumentsText()}})
	}
	finish := t.finishReason()
	writeJSON(w, http.StatusOK, openaiChunk{
		ID: "chatcmpl-ollamatest", Object: "chat.completion", Created: time.Now().Unix(), Model: modelName,
		Choices: []openaiChoice{{Message: &m, FinishReason: &finish}},
		Usage:   t.usage(),
	})
}
