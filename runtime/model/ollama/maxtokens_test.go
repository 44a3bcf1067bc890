package ollama_test

import (
	"testing"

	"flow/internal/test/ollamatest"
	"flow/runtime/model"
	"flow/runtime/model/ollama"
)

// TestChatSendsMaxTokens checks that every reply is bounded in each API's
// own member, options.num_predict (native) and max_tokens (OpenAI): by
// the request's MaxTokens when it is lower than the bound derived from the
// context length (half of it, at most 8192), and by MaxTokens alone when
// there is no context length. A model in a repetition loop then stops
// instead of writing until the call times out.
func TestChatSendsMaxTokens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		api           string
		contextLength int
		maxTokens     int
		want          float64 // the bound sent; 0 for none
	}{
		{"native", 8192, 300, 300},
		{"native", 8192, 0, 4096},
		{"native", 32768, 0, 8192},
		{"native", 0, 0, 0},
		{"openai", 8192, 300, 300},
		{"openai", 8192, 0, 4096},
		{"openai", 8192, 9000, 4096},
		{"openai", 0, 300, 300},
	}
	for _, tc := range tests {
		srv := ollamatest.New(t, ollamatest.Turn{Content: "ok"})
		c := newClient(t, srv.URL, func(o *ollama.Options) { o.API = tc.api; o.ContextLength = tc.contextLength })
		req := model.Request{Model: "m", Messages: []model.Message{{Role: "user", Content: "hi"}}, MaxTokens: tc.maxTokens}
		if _, err := c.Chat(t.Context(), req); err != nil {
			t.Fatalf("%+v: Chat() = %v", tc, err)
		}
		body := srv.Requests()[0].Body
		var got float64
		if tc.api == "native" {
			opts, _ := body["options"].(map[string]any)
			got, _ = opts["num_predict"].(float64)
		} else {
			got, _ = body["max_tokens"].(float64)
		}
		if got != tc.want {
			t.Errorf("%+v: bound sent = %v, want %v (body %s)", tc, got, tc.want, srv.Requests()[0].Raw)
		}
	}
}
