package ollama_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"flow/internal/test/ollamatest"
	"flow/runtime/model"
	"flow/runtime/model/ollama"
)

func TestChatOpenAI(t *testing.T) {
	t.Parallel()
	calls := []ollamatest.Call{
		{ID: "call_a", Name: "file_read", Arguments: `{"path": "internal/very/long/path/to/a.go"}`},
		{ID: "call_b", Name: "file_write", Arguments: `{"path": "b.go", "content": "package b\n"}`},
	}
	wantCalls := []model.ToolCall{
		{ID: "call_a", Name: "file_read", Arguments: `{"path": "internal/very/long/path/to/a.go"}`},
		{ID: "call_b", Name: "file_write", Arguments: `{"path": "b.go", "content": "package b\n"}`},
	}
	for _, stream := range []bool{true, false} {
		name := "stream"
		if !stream {
			name = "not streamed"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := ollamatest.New(t, ollamatest.Turn{
				Content: "Two calls.", ToolCalls: calls, NoStream: !stream,
				PromptTokens: 50, CompletionTokens: 7,
			})
			c := newClient(t, srv.URL, func(o *ollama.Options) { o.API = "openai"; o.Temperature = 0.3 })
			var deltas strings.Builder
			resp, err := c.Chat(t.Context(), model.Request{
				Model: "coder", Messages: history, Tools: []model.Tool{readTool},
				OnDelta: func(s string) { deltas.WriteString(s) },
			})
			if err != nil {
				t.Fatalf("Chat() = %v", err)
			}
			want := model.Response{
				Message:    model.Message{Role: model.RoleAssistant, Content: "Two calls.", ToolCalls: wantCalls},
				Usage:      model.Usage{PromptTokens: 50, CompletionTokens: 7},
				DoneReason: "tool_calls",
			}
			if !reflect.DeepEqual(resp, want) {
				t.Errorf("Chat() = %+v, want %+v", resp, want)
			}
			if deltas.String() != "Two calls." {
				t.Errorf("OnDelta got %q, want %q", deltas.String(), "Two calls.")
			}

			reqs := srv.Requests()
			if len(reqs) != 1 || reqs[0].Path != "/v1/chat/completions" {
				t.Fatalf("requests = %+v, want one POST /v1/chat/completions", reqs)
			}
			wantBody := jsonOf(t, `{
				"model": "coder",
				"temperature": 0.3,
				"max_tokens": 8192,
				"stream": true,
				"stream_options": {"include_usage": true},
				"tools": [{"type": "function", "function": {"name": "file_read", "description": "Read a file.",
					"parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}],
				"messages": [
					{"role": "system", "content": "You are the coder."},
					{"role": "user", "content": "Fix main.go."},
					{"role": "assistant", "content": "", "tool_calls": [
						{"id": "call_1", "type": "function", "function": {"name": "file_read", "arguments": "{\"path\": \"main.go\"}"}},
						{"id": "call_2", "type": "function", "function": {"name": "file_read", "arguments": "{\"path\": broken"}}
					]},
					{"role": "tool", "content": "package main", "tool_call_id": "call_1", "name": "file_read"},
					{"role": "tool", "content": "invalid arguments", "tool_call_id": "call_2", "name": "file_read"}
				]
			}`)
			if got := any(reqs[0].Body); !reflect.DeepEqual(got, wantBody) {
				t.Errorf("request body = %s\nwant %s", reqs[0].Raw, mustJSON(wantBody))
			}
		})
	}
}

func TestChatOpenAIMaxTokens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		contextLength int
		want          any // nil: omitted
	}{
		{4096, float64(2048)},
		{16384, float64(8192)},
		{100000, float64(8192)},
		{0, nil},
	}
	for _, tc := range tests {
		srv := ollamatest.New(t, ollamatest.Turn{Content: "x"})
		c := newClient(t, srv.URL, func(o *ollama.Options) { o.API = "openai"; o.ContextLength = tc.contextLength })
		if _, err := c.Chat(t.Context(), model.Request{Model: "m"}); err != nil {
			t.Fatalf("Chat() = %v", err)
		}
		if got := srv.Requests()[0].Body["max_tokens"]; got != tc.want {
			t.Errorf("ContextLength %d: max_tokens = %v, want %v", tc.contextLength, got, tc.want)
		}
	}
}

func TestChatOpenAIRawStreams(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, contentType, body string
		want                    model.Response
		wantErr                 string
	}{
		{
			name:        "calls without index, id repeated, comments and multi-line data",
			contentType: "text/event-stream",
			body: ": keep-alive\n\n" +
				"event: message\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\n" +
				"data: \"content\":\"hi\"}}]}\n\n" +
				`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"id":"x1","type":"function","function":{"name":"f","arguments":"{\"a\""}}]}}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"id":"x1","function":{"arguments":":1}"}}]}}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"id":"x2","function":{"name":"g","arguments":{"b":2}}}]}}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":6}}` + "\n\n" +
				"data: [DONE]\n\n",
			want: model.Response{
				Message: model.Message{Role: "assistant", Content: "hi", ToolCalls: []model.ToolCall{
					{ID: "x1", Name: "f", Arguments: `{"a":1}`}, {ID: "x2", Name: "g", Arguments: `{"b":2}`},
				}},
				Usage: model.Usage{PromptTokens: 5, CompletionTokens: 6}, DoneReason: "tool_calls",
			},
		},
		{
			name:        "finish reason without [DONE], CRLF lines",
			contentType: "text/event-stream",
			body:        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\r\n\r\n",
			want:        model.Response{Message: model.Message{Role: "assistant", Content: "ok"}, DoneReason: "stop"},
		},
		{
			name:        "ends without finish reason",
			contentType: "text/event-stream",
			body:        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"o\"}}]}\n\n",
			wantErr:     "stream ended before the final chunk",
		},
		{
			name:        "invalid chunk",
			contentType: "text/event-stream",
			body:        "data: {nope\n\n",
			wantErr:     "invalid response chunk",
		},
		{
			name:        "JSON without choices",
			contentType: "application/json",
			body:        `{"object":"chat.completion","choices":[]}`,
			wantErr:     "response has no choices",
		},
		{
			name:        "JSON error string",
			contentType: "application/json; charset=utf-8",
			body:        `{"error":"bad things"}`,
			wantErr:     "ollama: bad things",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newClient(t, rawServer(t, tc.contentType, tc.body), func(o *ollama.Options) { o.API = "openai" })
			resp, err := c.Chat(t.Context(), model.Request{Model: "m"})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("Chat() = %+v, %v, want error containing %q", resp, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Chat() = %v", err)
			}
			if !reflect.DeepEqual(resp, tc.want) {
				t.Errorf("Chat() = %+v, want %+v", resp, tc.want)
			}
		})
	}
}

// TestChatOpenAISchemaAsJSONObject: a server that refuses response_format
// json_schema (llama-cpp-python's) is asked once more with the schema as
// {"type": "json_object", "schema": …}, and the answer comes back; a server
// that takes json_schema is asked once.
func TestChatOpenAISchemaAsJSONObject(t *testing.T) {
	t.Parallel()
	// Keys in sorted order: Format() re-encodes the decoded body.
	schema := `{"properties":{"approved":{"type":"boolean"}},"required":["approved"],"title":"verdict","type":"object"}`
	for _, refuses := range []bool{true, false} {
		srv := ollamatest.New(t, ollamatest.Turn{Content: `{"approved": true}`})
		srv.SetNoJSONSchema(refuses)
		c := newClient(t, srv.URL, func(o *ollama.Options) { o.API = "openai" })
		resp, err := c.Chat(t.Context(), model.Request{Model: "reviewer", Format: []byte(schema),
			Messages: []model.Message{{Role: model.RoleUser, Content: "judge"}}})
		if err != nil || resp.Message.Content != `{"approved": true}` {
			t.Fatalf("refuses json_schema %t: Chat() = %+v, %v; want the verdict", refuses, resp, err)
		}
		chats := srv.Chats()
		types := make([]any, len(chats))
		for i, r := range chats {
			types[i] = r.Body["response_format"].(map[string]any)["type"]
			if got := string(r.Format()); got != schema {
				t.Errorf("refuses json_schema %t: request %d's schema = %s, want %s", refuses, i, got, schema)
			}
		}
		want := []any{"json_schema"}
		if refuses {
			want = []any{"json_schema", "json_object"}
		}
		if fmt.Sprint(types) != fmt.Sprint(want) {
			t.Errorf("refuses json_schema %t: response_format types %v, want %v", refuses, types, want)
		}
	}
}
