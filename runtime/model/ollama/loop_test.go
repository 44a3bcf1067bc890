package ollama_test

import (
	"strings"
	"testing"

	"flow/internal/test/ollamatest"
	"flow/runtime/model"
	"flow/runtime/model/ollama"
)

// TestChatEndsALoopingReply checks, on both APIs, that a reply whose
// content keeps repeating one piece is ended by the client while it
// streams: the content keeps the text before the loop and one copy, the
// done reason is "repetition", and the rest of the stream, which here ends
// in an error, is never read.
func TestChatEndsALoopingReply(t *testing.T) {
	t.Parallel()
	prefix := "I changed formatPrice: "
	unit := "```json\n{\"name\": \"file_edit\", \"arguments\": {\"path\": \"src/cart.js\", \"old_string\": \"formatPrice(cents)\", \"new_string\": \"formatPrice(cents, currency)\"}}\n```\nI also changed cartTotal.\n"
	for _, api := range []string{"native", "openai"} {
		srv := ollamatest.New(t, ollamatest.Turn{
			Content: prefix + strings.Repeat(unit, 300),
			Error:   "the client read past the loop",
		})
		c := newClient(t, srv.URL, func(o *ollama.Options) { o.API = api })
		var streamed strings.Builder
		req := model.Request{Model: "m", Messages: []model.Message{{Role: "user", Content: "hi"}}, OnDelta: func(s string) { streamed.WriteString(s) }}
		resp, err := c.Chat(t.Context(), req)
		if err != nil {
			t.Fatalf("%s: Chat() = %v, want the reply ended at the loop", api, err)
		}
		if resp.DoneReason != model.DoneRepetition {
			t.Errorf("%s: done reason %q, want %q", api, resp.DoneReason, model.DoneRepetition)
		}
		if want := prefix + unit; resp.Message.Content != want {
			t.Errorf("%s: content (%d bytes) = %q, want the text before the loop and one copy (%d bytes)", api, len(resp.Message.Content), resp.Message.Content, len(want))
		}
		if streamed.Len() >= len(prefix)+300*len(unit) {
			t.Errorf("%s: %d bytes streamed, want the stream left before its end", api, streamed.Len())
		}
	}
}

// TestChatKeepsAFinishedReply checks that a reply the server finished is
// returned whole even when it ends in repetition: there is no time to save.
func TestChatKeepsAFinishedReply(t *testing.T) {
	t.Parallel()
	content := "a" + strings.Repeat("b", 3000)
	for _, api := range []string{"native", "openai"} {
		srv := ollamatest.New(t, ollamatest.Turn{Content: content, NoStream: true, DoneReason: "length"})
		c := newClient(t, srv.URL, func(o *ollama.Options) { o.API = api })
		resp, err := c.Chat(t.Context(), model.Request{Model: "m", Messages: []model.Message{{Role: "user", Content: "hi"}}})
		if err != nil {
			t.Fatalf("%s: Chat() = %v", api, err)
		}
		if resp.Message.Content != content || resp.DoneReason != "length" {
			t.Errorf("%s: got %d bytes, done reason %q; want all %d bytes and \"length\"", api, len(resp.Message.Content), resp.DoneReason, len(content))
		}
	}
}
