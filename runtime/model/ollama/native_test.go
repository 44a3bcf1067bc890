package ollama_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"flow/internal/test/ollamatest"
	"flow/runtime/model"
	"flow/runtime/model/ollama"
)

// newClient returns a client for srvURL with test defaults, changed by edit.
func newClient(t testing.TB, srvURL string, edit func(*ollama.Options)) *ollama.Client {
	t.Helper()
	opts := ollama.Options{
		BaseURL:       srvURL,
		API:           "native",
		Temperature:   0.2,
		ContextLength: 16384,
		Timeout:       20 * time.Second,
	}
	if edit != nil {
		edit(&opts)
	}
	c, err := ollama.New(opts)
	if err != nil {
		t.Fatalf("ollama.New(%+v) = %v", opts, err)
	}
	return c
}

var readTool = model.Tool{
	Name:        "file_read",
	Description: "Read a file.",
	Parameters: map[string]any{
		"type":       "object",
		"properties": map[string]any{"path": map[string]any{"type": "string"}},
		"required":   []any{"path"},
	},
}

// history is a conversation with a tool round trip, sent on every API.
var history = []model.Message{
	{Role: model.RoleSystem, Content: "You are the coder."},
	{Role: model.RoleUser, Content: "Fix main.go."},
	{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
		{ID: "call_1", Name: "file_read", Arguments: `{"path": "main.go"}`},
		{ID: "call_2", Name: "file_read", Arguments: `{"path": broken`},
	}},
	{Role: model.RoleTool, Name: "file_read", ToolCallID: "call_1", Content: "package main"},
	{Role: model.RoleTool, Name: "file_read", ToolCallID: "call_2", Content: "invalid arguments"},
}

// jsonOf decodes s, failing the test when it is not JSON.
func jsonOf(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("json.Unmarshal(%q) = %v", s, err)
	}
	return v
}

func TestChatNative(t *testing.T) {
	t.Parallel()
	srv := ollamatest.New(t, ollamatest.Turn{
		Thinking:           "secret reasoning",
		Content:            "Reading the file now.",
		ToolCalls:          []ollamatest.Call{{ID: "call_9", Name: "file_read", Arguments: `{"path":"a.go"}`}, {Name: "file_list", Arguments: `{"dir": "."}`}},
		PromptTokens:       120,
		CompletionTokens:   14,
		PromptEvalDuration: 1500 * time.Millisecond,
	})
	c := newClient(t, srv.URL, func(o *ollama.Options) { o.Think = true; o.Temperature = 0.5; o.ContextLength = 32768 })

	var deltas []string
	resp, err := c.Chat(t.Context(), model.Request{
		Model:    "qwen2.5-coder:7b",
		Messages: history,
		Tools:    []model.Tool{readTool},
		OnDelta:  func(s string) { deltas = append(deltas, s) },
	})
	if err != nil {
		t.Fatalf("Chat() = %v", err)
	}
	want := model.Response{
		Message: model.Message{
			Role:    model.RoleAssistant,
			Content: "Reading the file now.",
			ToolCalls: []model.ToolCall{
				{ID: "call_9", Name: "file_read", Arguments: `{"path":"a.go"}`},
				{ID: "", Name: "file_list", Arguments: `{"dir":"."}`},
			},
		},
		Usage:      model.Usage{PromptTokens: 120, CompletionTokens: 14},
		DoneReason: "stop",
		PromptEval: 1500 * time.Millisecond,
	}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("Chat() = %+v, want %+v", resp, want)
	}
	if got := strings.Join(deltas, ""); got != want.Message.Content || len(deltas) < 2 {
		t.Errorf("OnDelta got %q, want the content %q in several deltas", deltas, want.Message.Content)
	}

	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Method != "POST" || reqs[0].Path != "/api/chat" {
		t.Fatalf("requests = %+v, want one POST /api/chat", reqs)
	}
	if h := reqs[0].Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization header = %q, want none", h)
	}
	wantBody := jsonOf(t, `{
		"model": "qwen2.5-coder:7b",
		"stream": true,
		"think": true,
		"options": {"num_ctx": 32768, "num_predict": 8192, "temperature": 0.5},
		"tools": [{"type": "function", "function": {"name": "file_read", "description": "Read a file.",
			"parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}],
		"messages": [
			{"role": "system", "content": "You are the coder."},
			{"role": "user", "content": "Fix main.go."},
			{"role": "assistant", "content": "", "tool_calls": [
				{"id": "call_1", "function": {"name": "file_read", "arguments": {"path": "main.go"}}},
				{"id": "call_2", "function": {"name": "file_read", "arguments": "{\"path\": broken"}}
			]},
			{"role": "tool", "content": "package main", "tool_name": "file_read", "tool_call_id": "call_1"},
			{"role": "tool", "content": "invalid arguments", "tool_name": "file_read", "tool_call_id": "call_2"}
		]
	}`)
	if got := any(reqs[0].Body); !reflect.DeepEqual(got, wantBody) {
		t.Errorf("request body = %s\nwant %s", reqs[0].Raw, mustJSON(wantBody))
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestChatNativeOmitsEmptyToolsAndSendsThinkFalse(t *testing.T) {
	t.Parallel()
	srv := ollamatest.New(t, ollamatest.Turn{Content: "hi"})
	c := newClient(t, srv.URL, func(o *ollama.Options) { o.ContextLength = 0 })
	if _, err := c.Chat(t.Context(), model.Request{Model: "m", Messages: []model.Message{{Role: "user", Content: "hi"}}}); err != nil {
		t.Fatalf("Chat() = %v", err)
	}
	body := srv.Requests()[0].Body
	if _, ok := body["tools"]; ok {
		t.Errorf("request has tools %v, want none when no tools are offered", body["tools"])
	}
	if think, ok := body["think"]; !ok || think != false {
		t.Errorf("request think = %v (present %v), want false sent explicitly", think, ok)
	}
	if opts, _ := body["options"].(map[string]any); opts["num_ctx"] != nil {
		t.Errorf("options.num_ctx = %v, want omitted when ContextLength is 0", opts["num_ctx"])
	}
}

func TestChatNativeArguments(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, sent, want string
	}{
		{"object", `{"path": "a.go", "n": [1, 2]}`, `{"path":"a.go","n":[1,2]}`},
		{"invalid JSON arrives as a string", `{"path": broken`, `{"path": broken`},
		{"non-object JSON arrives as a string", `[1,2]`, `[1,2]`},
		{"empty means no arguments", ``, `{}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := ollamatest.New(t, ollamatest.Turn{ToolCalls: []ollamatest.Call{{ID: "c1", Name: "f", Arguments: tc.sent}}})
			resp, err := newClient(t, srv.URL, nil).Chat(t.Context(), model.Request{Model: "m"})
			if err != nil {
				t.Fatalf("Chat() = %v", err)
			}
			if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Arguments != tc.want {
				t.Errorf("Chat() tool calls = %+v, want one with arguments %q", resp.Message.ToolCalls, tc.want)
			}
		})
	}
}

func TestChatNativeNotStreamed(t *testing.T) {
	t.Parallel()
	srv := ollamatest.New(t, ollamatest.Turn{
		Content: "whole", NoStream: true, ToolCalls: []ollamatest.Call{{ID: "c", Name: "f", Arguments: `{"a":1}`}},
		PromptTokens: 3, CompletionTokens: 4,
	})
	resp, err := newClient(t, srv.URL, nil).Chat(t.Context(), model.Request{Model: "m"})
	if err != nil {
		t.Fatalf("Chat() = %v", err)
	}
	if resp.Message.Content != "whole" || len(resp.Message.ToolCalls) != 1 || resp.Usage != (model.Usage{PromptTokens: 3, CompletionTokens: 4}) {
		t.Errorf("Chat() = %+v, want content, one call and usage 3/4", resp)
	}
}

func TestChatErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		api      string
		models   []string
		turn     ollamatest.Turn
		want     string // in the error text
		notFound bool
	}{
		{name: "native mid-stream error", api: "native", turn: ollamatest.Turn{Content: "partial answer", Error: "model runner has unexpectedly stopped"},
			want: "ollama: model runner has unexpectedly stopped"},
		{name: "native mid-stream error after tool calls", api: "native", turn: ollamatest.Turn{ToolCalls: []ollamatest.Call{{Name: "f"}}, Error: "boom"},
			want: "ollama: boom"},
		{name: "openai stream error event", api: "openai", turn: ollamatest.Turn{Content: "partial", Error: "slot unavailable"},
			want: "ollama: slot unavailable"},
		{name: "openai error body with 200", api: "openai", turn: ollamatest.Turn{NoStream: true, Error: "context overflow"},
			want: "ollama: context overflow"},
		{name: "native 404 turn", api: "native", turn: ollamatest.Turn{ModelNotFound: true},
			want: `model "m" not found, try pulling it first (HTTP 404 from POST /api/chat)`, notFound: true},
		{name: "openai 404 turn", api: "openai", turn: ollamatest.Turn{ModelNotFound: true},
			want: `model "m" not found, try pulling it first (HTTP 404 from POST /v1/chat/completions)`, notFound: true},
		{name: "native model not installed", api: "native", models: []string{"other"}, turn: ollamatest.Turn{Content: "x"},
			want: "HTTP 404", notFound: true},
		{name: "native 500", api: "native", turn: ollamatest.Turn{Status: 500, Error: "llama runner crashed"},
			want: "ollama: llama runner crashed (HTTP 500 from POST /api/chat)"},
		{name: "openai 400", api: "openai", turn: ollamatest.Turn{Status: 400, Error: "m does not support tools"},
			want: "m does not support tools (HTTP 400"},
		{name: "native 503 without message", api: "native", turn: ollamatest.Turn{Status: 503},
			want: "Service Unavailable (HTTP 503"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := ollamatest.New(t, tc.turn)
			if tc.models != nil {
				srv.SetModels(tc.models...)
			}
			c := newClient(t, srv.URL, func(o *ollama.Options) { o.API = tc.api })
			_, err := c.Chat(t.Context(), model.Request{Model: "m"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Chat() = %v, want error containing %q", err, tc.want)
			}
			if got := errors.Is(err, model.ErrModelNotFound); got != tc.notFound {
				t.Errorf("errors.Is(%v, ErrModelNotFound) = %v, want %v", err, got, tc.notFound)
			}
		})
	}
}

// rawServer serves body with contentType on every request; it stands in for
// servers that misbehave in ways the fake does not script.
func rawServer(t *testing.T, contentType, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestChatNativeMalformedStreams(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, want string
	}{
		{"ends without done", `{"message":{"role":"assistant","content":"par"},"done":false}` + "\n", "stream ended before the final chunk"},
		{"empty body", ``, "stream ended before the final chunk"},
		{"not JSON", "garbage\n", "invalid stream line"},
		{"error object", `{"error":{"message":"nested"}}` + "\n", "ollama: nested"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newClient(t, rawServer(t, "application/x-ndjson", tc.body), nil)
			_, err := c.Chat(t.Context(), model.Request{Model: "m"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Chat() = %v, want error containing %q", err, tc.want)
			}
		})
	}
}

func TestChatNativeLastLineWithoutNewline(t *testing.T) {
	t.Parallel()
	body := `{"message":{"role":"assistant","content":"ok"},"done":false}` + "\n\n" +
		`{"message":{"role":"assistant","content":"!"},"done":true,"done_reason":"length","eval_count":2}`
	resp, err := newClient(t, rawServer(t, "application/x-ndjson", body), nil).Chat(t.Context(), model.Request{Model: "m"})
	if err != nil {
		t.Fatalf("Chat() = %v", err)
	}
	if resp.Message.Content != "ok!" || resp.DoneReason != "length" || resp.Usage.CompletionTokens != 2 {
		t.Errorf("Chat() = %+v, want content \"ok!\", done reason length, 2 completion tokens", resp)
	}
}

func TestChatRequiresModel(t *testing.T) {
	t.Parallel()
	srv := ollamatest.New(t)
	_, err := newClient(t, srv.URL, nil).Chat(context.Background(), model.Request{})
	if err == nil || len(srv.Requests()) != 0 {
		t.Errorf("Chat(no model) = %v with %d requests, want an error and no request", err, len(srv.Requests()))
	}
}

// A request's own temperature is sent instead of the client's, on both
// APIs; a negative or missing one leaves the client's.
func TestRequestTemperature(t *testing.T) {
	t.Parallel()
	hot, bad := 0.8, -1.0
	for _, api := range []string{"native", "openai"} {
		for _, tc := range []struct {
			name string
			temp *float64
			want float64
		}{{"own", &hot, 0.8}, {"none", nil, 0.2}, {"invalid", &bad, 0.2}} {
			t.Run(api+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				srv := ollamatest.New(t, ollamatest.Turn{Content: "ok"})
				c := newClient(t, srv.URL, func(o *ollama.Options) { o.API = api; o.Temperature = 0.2 })
				if _, err := c.Chat(t.Context(), model.Request{Model: "coder", Messages: history, Temperature: tc.temp}); err != nil {
					t.Fatalf("Chat() = %v", err)
				}
				body := srv.Requests()[0].Body
				got := body["temperature"]
				if api == "native" {
					got = body["options"].(map[string]any)["temperature"]
				}
				if got != tc.want {
					t.Errorf("temperature sent = %v, want %v (body %s)", got, tc.want, srv.Requests()[0].Raw)
				}
			})
		}
	}
}
