// Package ollamatest is a scripted fake Ollama server for tests and demos,
// in the spirit of net/http/httptest and tailscale's testcontrol. It speaks
// the real wire protocols, so tests exercise the HTTP, NDJSON and SSE code
// of the client rather than a mock:
//
//   - POST /api/chat: Ollama's native API, an NDJSON stream (application/
//     x-ndjson, a flush after each chunk) with tool calls whose arguments
//     are JSON objects, or one object when the request has "stream": false;
//   - POST /v1/chat/completions: the OpenAI-compatible API, server-sent
//     events when the request has "stream": true (tool-call arguments split
//     across chunks), else one chat.completion object;
//   - GET /api/tags, GET /api/version, POST /api/show (404 for unknown
//     models; model_info with a context length when one is set), GET
//     /api/ps (the models set as loaded), POST /api/generate with no
//     prompt (Ollama's "load the model": loaded with
//     [Server.SetLoadContext]'s window, done_reason "load") and GET
//     /v1/models (with vLLM's max_model_len after [Server.SetMaxModelLen]);
//   - with [Server.SetOpenAIOnly], a server that is not Ollama (such as
//     llama.cpp's llama-server): every /api/ path is 404, and GET /props
//     gives its per-slot window after [Server.SetSlotContext].
//
// Both chat endpoints answer from one first-in first-out queue of [Turn]s.
// A turn can also script failures: an error after the content with status
// 200, a 404 "model not found", another status, a delay before the first
// byte or between chunks, a redirect, or a body padded past a size limit.
// When the queue is empty a chat request gets HTTP 500
// {"error":"ollamatest: no scripted turn left"} (in OpenAI's error shape on
// /v1/chat/completions) and counts in [Server.Unexpected]. Every request is recorded ([Server.Requests]);
// [Recorded.Format] tells the structured output a chat request asked for.
// An empty turn (Turn{}, or {} in a script) is an empty reply, no content
// and no tool calls: what a real Ollama hands on when the model's tool call
// did not parse.
//
// In a test:
//
//	srv := ollamatest.New(t, ollamatest.Turn{
//		ToolCalls: []ollamatest.Call{{ID: "call_1", Name: "file_read", Arguments: `{"path":"main.go"}`}},
//	}, ollamatest.Turn{Content: "done"})
//	// ... point the client at srv.URL, run, then inspect srv.Requests()
//
// # Script files
//
// [Server.LoadScript] reads the same turns from JSON, for the
// flow-fake-ollama command and the demo. Field names are snake_case
// versions of the [Turn] fields; durations are milliseconds (delay_ms,
// chunk_delay_ms). A tool call's "arguments" is either a JSON string
// holding the raw text (which may be invalid JSON on purpose) or any other
// JSON value, which stands for its own text. All top-level members are
// optional; unknown members are errors.
//
//	{
//	  "version": "0.17.4",
//	  "models": ["qwen2.5-coder:7b"],
//	  "capabilities": {"qwen2.5-coder:7b": ["completion", "tools"]},
//	  "parameter_sizes": {"qwen2.5-coder:7b": "7.6B"},
//	  "turns": [
//	    {"content": "Plan: read main.go, then fix the typo."},
//	    {"tool_calls": [{"id": "call_1", "name": "file_read", "arguments": {"path": "main.go"}}],
//	     "prompt_tokens": 120, "completion_tokens": 14},
//	    {"tool_calls": [{"id": "call_2", "name": "file_write", "arguments": "{\"path\": broken"}]},
//	    {"content": "partial answer", "error": "model runner has unexpectedly stopped"},
//	    {"model": "qwen2.5-coder:7b", "content": "slow", "delay_ms": 250, "chunk_delay_ms": 20},
//	    {"status": 503, "error": "server busy"},
//	    {"model_not_found": true},
//	    {"redirect_to": "http://example.com/api/chat"},
//	    {"oversize": 3000000},
//	    {"content": "{\"approved\": true}", "done_reason": "stop"}
//	  ]
//	}
package ollamatest
