package ollamatest

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// nativeChunk is one /api/chat NDJSON line.
type nativeChunk struct {
	Model           string         `json:"model"`
	CreatedAt       string         `json:"created_at"`
	Message         *nativeMessage `json:"message,omitempty"`
	Done            bool           `json:"done"`
	DoneReason      string         `json:"done_reason,omitempty"`
	TotalDuration   int64          `json:"total_duration,omitempty"`
	PromptEvalCount int            `json:"prompt_eval_count,omitempty"`
	EvalCount       int            `json:"eval_count,omitempty"`
	// PromptEvalDuration is in nanoseconds, as Ollama sends it.
	PromptEvalDuration int64 `json:"prompt_eval_duration,omitempty"`
}

type nativeMessage struct {
	Role      string       `json:"role"`
	Content   string       `json:"content"`
	Thinking  string       `json:"thinking,omitempty"`
	ToolCalls []nativeCall `json:"tool_calls,omitempty"`
}

type nativeCall struct {
	ID       string         `json:"id,omitempty"`
	Function nativeFunction `json:"function"`
}

type nativeFunction struct {
	Index     int             `json:"index"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// streamer writes chunks with a flush after each and a delay between them.
type streamer struct {
	s     *Server
	ctx   context.Context
	w     http.ResponseWriter
	delay time.Duration
	n     int
}

// send writes one chunk; false means the stream must stop.
func (st *streamer) send(b []byte) bool {
	if st.n > 0 && st.s.sleep(st.ctx, st.delay) != nil {
		return false
	}
	st.n++
	if _, err := st.w.Write(b); err != nil {
		return false
	}
	if f, ok := st.w.(http.Flusher); ok {
		f.Flush()
	}
	return true
}

// nativeChunks returns the turn's answer as NDJSON chunks, ending with an
// error line or the done chunk.
func nativeChunks(t Turn, modelName string) []any {
	now := time.Now().UTC().Format(time.RFC3339Nano)
	msg := func(m nativeMessage) any {
		m.Role = "assistant"
		return nativeChunk{Model: modelName, CreatedAt: now, Message: &m}
	}
	var out []any
	for _, p := range splitText(t.Thinking, 2) {
		out = append(out, msg(nativeMessage{Thinking: p}))
	}
	for _, p := range splitText(t.Content, 3) {
		out = append(out, msg(nativeMessage{Content: p}))
	}
	for _, p := range padding(t.Oversize) {
		out = append(out, msg(nativeMessage{Content: p}))
	}
	if len(t.ToolCalls) > 0 {
		calls := make([]nativeCall, len(t.ToolCalls))
		for i, c := range t.ToolCalls {
			calls[i] = nativeCall{ID: c.ID, Function: nativeFunction{Index: i, Name: c.Name, Arguments: c.argumentsJSON()}}
		}
		out = append(out, msg(nativeMessage{ToolCalls: calls}))
	}
	if t.Error != "" {
		return append(out, map[string]string{"error": t.Error})
	}
	reason := t.DoneReason
	if reason == "" {
		reason = "stop"
	}
	return append(out, nativeChunk{
		Model: modelName, CreatedAt: now,
		Message:            &nativeMessage{Role: "assistant"},
		Done:               true,
		DoneReason:         reason,
		TotalDuration:      1,
		PromptEvalCount:    t.PromptTokens,
		EvalCount:          t.CompletionTokens,
		PromptEvalDuration: t.PromptEvalDuration.Nanoseconds(),
	})
}

// streamNative answers /api/chat with an NDJSON stream.
func (s *Server) streamNative(w http.ResponseWriter, r *http.Request, t Turn, modelName string) {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	st := &streamer{s: s, ctx: r.Context(), w: w, delay: t.ChunkDelay}
	for _, ch := range nativeChunks(t, modelName) {
		b, err := json.Marshal(ch)
		if err != nil || !st.send(append(b, '\n')) {
			return
		}
	}
}

// completeNative answers /api/chat with "stream": false: one object.
func (s *Server) completeNative(w http.ResponseWriter, t Turn, modelName string) {
	if t.Error != "" {
		writeJSON(w, http.StatusOK, map[string]string{"error": t.Error})
		return
	}
	chunks := nativeChunks(t, modelName)
	final := chunks[len(chunks)-1].(nativeChunk)
	whole := nativeMessage{Role: "assistant"}
	var content, thinking strings.Builder
	for _, ch := range chunks[:len(chunks)-1] {
		m := ch.(nativeChunk).Message
		content.WriteString(m.Content)
		thinking.WriteString(m.Thinking)
		whole.ToolCalls = append(whole.ToolCalls, m.ToolCalls...)
	}
	whole.Content, whole.Thinking = content.String(), thinking.String()
	final.Message = &whole
	writeJSON(w, http.StatusOK, final)
}
