package ollama_test

import (
	"testing"

	"flow/internal/test/ollamatest"
	"flow/runtime/model"
)

// BenchmarkChatNative measures one short native turn round trip against the
// fake server: request encoding, HTTP, NDJSON decoding.
func BenchmarkChatNative(b *testing.B) {
	srv := ollamatest.New(b)
	c := newClient(b, srv.URL, nil)
	req := model.Request{Model: "m", Messages: history, Tools: []model.Tool{readTool}}
	turn := ollamatest.Turn{Content: "A short answer.", ToolCalls: []ollamatest.Call{{ID: "c", Name: "file_read", Arguments: `{"path":"a.go"}`}}}
	b.ReportAllocs()
	for b.Loop() {
		srv.Enqueue(turn)
		if _, err := c.Chat(b.Context(), req); err != nil {
			b.Fatal(err)
		}
	}
}
