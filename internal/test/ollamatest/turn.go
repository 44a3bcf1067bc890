package ollamatest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// Turn is one scripted answer to a chat request, on either API. Without
// Status, RedirectTo or ModelNotFound, it is a 200 answer: Thinking (native
// API only), then Content in a few chunks, then Oversize bytes of padding
// content, then ToolCalls, then either Error or the final chunk.
type Turn struct {
	// Model, when set, restricts the turn to requests for that model; a
	// request for another model is answered 500 and counted as unexpected,
	// and the turn stays queued.
	Model string
	// ModelNotFound answers 404 with Ollama's "model not found" message.
	ModelNotFound bool
	// Content is the assistant text, streamed in up to three chunks.
	Content string
	// Thinking is streamed as message.thinking before the content (native).
	Thinking string
	// ToolCalls are the function calls the assistant makes.
	ToolCalls []Call
	// Error, with a 200 status, is sent after the content instead of the
	// final chunk: a {"error": ...} line (native), an error event (OpenAI
	// stream) or an error object as the whole body (OpenAI, not streamed).
	// With Status, it is the error message.
	Error string
	// Status, when not 0 or 200, answers with this status and an error body.
	Status int
	// Delay is waited before the first byte. The wait ends early, with no
	// answer, when the client goes away or the server closes.
	Delay time.Duration
	// ChunkDelay is waited between streamed chunks.
	ChunkDelay time.Duration
	// RedirectTo answers 302 with this Location.
	RedirectTo string
	// Oversize pads the answer with this many bytes of content (counting
	// numbers, which never repeat).
	Oversize int
	// PromptTokens and CompletionTokens are the usage counts reported.
	PromptTokens, CompletionTokens int
	// PromptEvalDuration is the prompt_eval_duration reported (native).
	PromptEvalDuration time.Duration
	// NoStream answers with one JSON object even when the request asks for
	// a stream, as some OpenAI-compatible servers do.
	NoStream bool
	// DoneReason is the native done_reason or OpenAI finish_reason; ""
	// means "stop" (or "tool_calls" on the OpenAI API when there are calls).
	DoneReason string
}

// Call is one scripted tool call.
type Call struct {
	// ID is the call id; "" sends none.
	ID   string
	Name string
	// Arguments is the raw JSON text of the arguments; "" means "{}". It may
	// be invalid on purpose: the native API then sends it as a JSON string
	// instead of an object, the OpenAI API sends it as is (a string).
	Arguments string
}

// chat answers /api/chat (openai false) or /v1/chat/completions from the
// head of the queue.
func (s *Server) chat(w http.ResponseWriter, r *http.Request, rec Recorded, openai bool) {
	modelName, _ := rec.Body["model"].(string)
	s.mu.Lock()
	if len(s.models) > 0 && !s.known(modelName) {
		s.mu.Unlock()
		s.writeError(w, openai, http.StatusNotFound, notFoundMessage(modelName))
		return
	}
	if rf, _ := rec.Body["response_format"].(map[string]any); openai && s.noJSONSchema && rf["type"] == "json_schema" {
		s.mu.Unlock()
		s.writeError(w, openai, http.StatusInternalServerError,
			`1 validation error: {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': "Input should be 'text' or 'json_object'", 'input': 'json_schema'}`)
		return
	}
	if len(s.turns) == 0 {
		s.unexpected++
		s.mu.Unlock()
		s.writeError(w, openai, http.StatusInternalServerError, "ollamatest: no scripted turn left")
		return
	}
	t := s.turns[0]
	if t.Model != "" && t.Model != modelName {
		s.unexpected++
		s.mu.Unlock()
		s.writeError(w, openai, http.StatusInternalServerError,
			fmt.Sprintf("ollamatest: next turn is for model %q, request is for %q", t.Model, modelName))
		return
	}
	s.turns = s.turns[1:]
	s.inflight++
	s.mu.Unlock()
	defer s.turnDone()

	if s.sleep(r.Context(), t.Delay) != nil {
		return
	}
	stream, _ := rec.Body["stream"].(bool)
	if !openai {
		if v, ok := rec.Body["stream"]; !ok || v == nil {
			stream = true // Ollama streams unless told not to
		}
	}
	if t.NoStream {
		stream = false
	}
	switch {
	case t.RedirectTo != "":
		w.Header().Set("Location", t.RedirectTo)
		w.WriteHeader(http.StatusFound)
	case t.ModelNotFound:
		s.writeError(w, openai, http.StatusNotFound, notFoundMessage(modelName))
	case t.Status != 0 && t.Status != http.StatusOK:
		msg := t.Error
		if msg == "" {
			msg = http.StatusText(t.Status)
		}
		s.writeError(w, openai, t.Status, msg)
	case openai && stream:
		s.streamOpenAI(w, r, t, modelName, includeUsage(rec))
	case openai:
		s.completeOpenAI(w, t, modelName)
	case stream:
		s.streamNative(w, r, t, modelName)
	default:
		s.completeNative(w, t, modelName)
	}
}

// turnDone marks a turn answered and closes Drained when none is left.
func (s *Server) turnDone() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inflight--
	if s.inflight == 0 && len(s.turns) == 0 && !s.isDrained {
		s.isDrained = true
		close(s.drained)
	}
}

func notFoundMessage(name string) string {
	return fmt.Sprintf("model %q not found, try pulling it first", name)
}

// writeError sends an error body in the API's shape.
func (s *Server) writeError(w http.ResponseWriter, openai bool, status int, msg string) {
	if openai {
		writeJSON(w, status, openaiError(msg))
		return
	}
	writeJSON(w, status, map[string]string{"error": msg})
}

func openaiError(msg string) map[string]any {
	return map[string]any{"error": map[string]any{"message": msg, "type": "api_error", "param": nil, "code": nil}}
}

func includeUsage(rec Recorded) bool {
	opts, _ := rec.Body["stream_options"].(map[string]any)
	v, _ := opts["include_usage"].(bool)
	return v
}

// splitText cuts s into at most n non-empty pieces on rune boundaries.
func splitText(s string, n int) []string {
	if s == "" {
		return nil
	}
	var out []string
	size := (len(s) + n - 1) / n
	for len(s) > 0 {
		cut := min(size, len(s))
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return out
}

// padding returns the Oversize padding in pieces of at most 32 KiB.
func padding(n int) []string {
	const piece = 32 << 10
	// Counting numbers never repeat, so a client that ends looping replies
	// reads all of them.
	var text strings.Builder
	for i := 0; text.Len() < n; i++ {
		fmt.Fprintf(&text, "%d ", i)
	}
	all := text.String()[:n]
	var out []string
	for len(all) > 0 {
		k := min(len(all), piece)
		out = append(out, all[:k])
		all = all[k:]
	}
	return out
}

// argumentsJSON is a call's arguments as the native API sends them: the
// object itself when Arguments is a JSON object, else a JSON string.
func (c Call) argumentsJSON() json.RawMessage {
	if c.Arguments == "" {
		return json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(c.Arguments), &obj) == nil && obj != nil {
		return json.RawMessage(c.Arguments)
	}
	b, _ := json.Marshal(c.Arguments)
	return b
}

// argumentsText is a call's arguments as the OpenAI API sends them.
func (c Call) argumentsText() string {
	if c.Arguments == "" {
		return "{}"
	}
	return c.Arguments
}
