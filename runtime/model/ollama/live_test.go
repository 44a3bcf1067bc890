package ollama_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"flow/internal/test/ollamatest/live"
	"flow/runtime/model"
	"flow/runtime/model/ollama"
)

// liveClient returns a client of the real server for api.
func liveClient(t *testing.T, srv *live.Server, api string, edit func(*ollama.Options)) *ollama.Client {
	t.Helper()
	return newClient(t, srv.URL, func(o *ollama.Options) {
		o.API = api
		o.Timeout = 5 * time.Minute // a loaded CI machine; the bound only stops a hang
		if edit != nil {
			edit(o)
		}
	})
}

var liveTools = []model.Tool{readTool, {
	Name:        "file_write",
	Description: "Write a file.",
	Parameters: map[string]any{"type": "object", "required": []any{"path", "content"}, "properties": map[string]any{
		"path": map[string]any{"type": "string"}, "content": map[string]any{"type": "string"},
	}},
}}

// wantCall is a tool call as the client hands it on: name and arguments
// (compared as JSON values; the server makes up the ids).
type wantCall struct {
	name string
	args string
}

// TestLiveReplyShapes runs each reply shape of the stand-in models through
// a real Ollama, on both APIs, and checks what the client receives: the
// <tool_call> blocks as native calls (arguments given as a JSON string
// repaired into an object), and — what the agent has to cope with — an
// empty reply with no calls for a malformed block or a tool that was not
// offered, and plain text for a call written outside the tags.
func TestLiveReplyShapes(t *testing.T) {
	srv := live.Start(t)
	read := func(path string) wantCall { return wantCall{"file_read", `{"path":"` + path + `"}`} }
	tests := []struct {
		model       live.Model
		wantContent string
		wantCalls   []wantCall
		// wantText is what model.TextToolCalls recovers from the content.
		wantText []wantCall
	}{
		{live.ModelText, live.ModelText.Reply, nil, nil},
		{live.ModelCall, "", []wantCall{read("calc.go")}, nil},
		{live.ModelTwoCalls, "", []wantCall{read("calc.go"), read("calc_test.go")}, nil},
		{live.ModelStringArgs, "", []wantCall{read("calc.go")}, nil},
		{live.ModelMalformed, "", nil, nil},
		{live.ModelUnoffered, "", nil, nil},
		{live.ModelFenced, live.ModelFenced.Reply, nil, []wantCall{read("calc.go")}},
		{live.ModelBare, live.ModelBare.Reply, nil, []wantCall{read("calc.go")}},
	}
	var offered []string
	for _, tool := range liveTools {
		offered = append(offered, tool.Name)
	}
	for _, api := range []string{"native", "openai"} {
		c := liveClient(t, srv, api, nil)
		for _, tc := range tests {
			t.Run(api+"/"+tc.model.Name, func(t *testing.T) {
				var streamed strings.Builder
				resp, err := c.Chat(t.Context(), model.Request{
					Model: tc.model.Name,
					Messages: []model.Message{
						{Role: model.RoleSystem, Content: "You are the coder. Use the tools."},
						{Role: model.RoleUser, Content: "Fix the bug in calc.go."},
					},
					Tools:   liveTools,
					OnDelta: func(s string) { streamed.WriteString(s) },
				})
				if err != nil {
					t.Fatalf("Chat: %v", err)
				}
				m := resp.Message
				if m.Role != model.RoleAssistant || m.Content != tc.wantContent {
					t.Errorf("reply = %s %q, want assistant %q", m.Role, m.Content, tc.wantContent)
				}
				if streamed.String() != m.Content {
					t.Errorf("streamed %q, want the content %q", streamed.String(), m.Content)
				}
				if len(m.ToolCalls) != len(tc.wantCalls) {
					t.Fatalf("tool calls = %+v, want %d", m.ToolCalls, len(tc.wantCalls))
				}
				for i, w := range tc.wantCalls {
					got := m.ToolCalls[i]
					if got.Name != w.name || !sameJSON(got.Arguments, w.args) || got.ID == "" {
						t.Errorf("call %d = %+v, want %s %s with an id", i, got, w.name, w.args)
					}
				}
				text := model.TextToolCalls(m.Content, offered)
				if len(text) != len(tc.wantText) {
					t.Fatalf("calls in the text = %+v, want %d", text, len(tc.wantText))
				}
				for i, w := range tc.wantText {
					if text[i].Name != w.name || !sameJSON(text[i].Arguments, w.args) {
						t.Errorf("text call %d = %+v, want %s %s", i, text[i], w.name, w.args)
					}
				}
				if resp.Usage.PromptTokens <= 0 || resp.Usage.CompletionTokens <= 0 {
					t.Errorf("usage = %+v, want the server's token counts", resp.Usage)
				}
				if (resp.PromptEval > 0) != (api == "native") {
					t.Errorf("prompt eval time = %v on the %s API, want the server's figure on native only", resp.PromptEval, api)
				}
			})
		}
	}
}

// TestLiveConversation sends the tool call's result back in a second turn
// on both APIs: the server accepts the history the client writes (the
// assistant's call with its id, then the tool message) and renders it.
func TestLiveConversation(t *testing.T) {
	srv := live.Start(t)
	for _, api := range []string{"native", "openai"} {
		t.Run(api, func(t *testing.T) {
			c := liveClient(t, srv, api, nil)
			msgs := []model.Message{{Role: model.RoleUser, Content: "Read calc.go."}}
			first, err := c.Chat(t.Context(), model.Request{Model: live.ModelCall.Name, Messages: msgs, Tools: liveTools})
			if err != nil || len(first.Message.ToolCalls) != 1 {
				t.Fatalf("first turn = %+v, %v, want one call", first.Message, err)
			}
			call := first.Message.ToolCalls[0]
			msgs = append(msgs, first.Message, model.Message{
				Role: model.RoleTool, ToolCallID: call.ID, Name: call.Name, Content: "package calc\n",
			})
			second, err := c.Chat(t.Context(), model.Request{Model: live.ModelText.Name, Messages: msgs, Tools: liveTools})
			if err != nil || second.Message.Content != live.ModelText.Reply {
				t.Fatalf("second turn = %+v, %v, want %q", second.Message, err, live.ModelText.Reply)
			}
			if second.Usage.PromptTokens <= first.Usage.PromptTokens {
				t.Errorf("prompt tokens %d then %d: the second prompt should hold the first turn and the result",
					first.Usage.PromptTokens, second.Usage.PromptTokens)
			}
		})
	}
}

// TestLiveContextWindow records what a real Ollama does with a prompt
// longer than the window it runs the model with — it truncates it
// silently and reports the truncated prompt_tokens — and that the client
// can learn the windows: the model's own length from /api/show and the
// loaded one from /api/ps.
func TestLiveContextWindow(t *testing.T) {
	srv := live.Start(t)
	// About 6000 tokens: " the" is one token of the test models.
	long := []model.Message{{Role: model.RoleUser, Content: strings.Repeat(" the", 6000)}}
	chat := func(t *testing.T, c *ollama.Client, m live.Model) model.Response {
		t.Helper()
		resp, err := c.Chat(t.Context(), model.Request{Model: m.Name, Messages: long})
		if err != nil || resp.Message.Content != m.Reply {
			t.Fatalf("Chat(%s) = %+v, %v", m.Name, resp.Message, err)
		}
		return resp
	}
	loadedWindow := func(t *testing.T, c *ollama.Client, name string) int {
		t.Helper()
		loaded, err := c.LoadedModels(t.Context())
		if err != nil {
			t.Fatalf("LoadedModels: %v", err)
		}
		for _, l := range loaded {
			if l.Name == name || l.Name == name+":latest" {
				return l.ContextLength
			}
		}
		t.Fatalf("LoadedModels = %+v, want %s loaded", loaded, name)
		return 0
	}

	native := liveClient(t, srv, "native", func(o *ollama.Options) { o.ContextLength = 16384 })
	info, err := native.ShowModel(t.Context(), live.ModelText.Name)
	if err != nil || info.ContextLength != live.DefaultContextLength || !slices.Contains(info.Capabilities, "tools") {
		t.Fatalf("ShowModel = %+v, %v, want tools and context length %d", info, err, live.DefaultContextLength)
	}
	whole := chat(t, native, live.ModelText).Usage.PromptTokens
	if whole < 6000 {
		t.Fatalf("native with num_ctx 16384: prompt_tokens = %d, want the whole prompt (6000 or more)", whole)
	}
	if got := loadedWindow(t, native, live.ModelText.Name); got != 16384 {
		t.Errorf("native: loaded window = %d, want num_ctx 16384", got)
	}

	t.Run("openai ignores context_length", func(t *testing.T) {
		c := liveClient(t, srv, "openai", func(o *ollama.Options) { o.ContextLength = 16384 })
		// Asked before the first /v1 call, while the native client's
		// 16384 is loaded, the server tells the window that call will get.
		probed, src := c.ServerWindow(t.Context(), live.ModelText.Name)
		got := chat(t, c, live.ModelText).Usage.PromptTokens
		window := loadedWindow(t, c, live.ModelText.Name)
		if probed != window || src != "GET /api/ps" {
			t.Errorf("ServerWindow before the call = %d (%s), want the window of %d the call ran with, from GET /api/ps", probed, src, window)
		}
		if window >= 6000 || got > window || got >= whole {
			t.Errorf("openai: prompt_tokens %d in a loaded window of %d, want the prompt of %d cut to the server's default window", got, window, whole)
		}
		if !strings.Contains(srv.Log(), "truncating input prompt") {
			t.Error("the server log does not mention the truncation")
		}
	})
	t.Run("num_ctx above the model's own length", func(t *testing.T) {
		info, err := native.ShowModel(t.Context(), live.ModelSmallContext.Name)
		if err != nil || info.ContextLength != live.SmallContextLength {
			t.Fatalf("ShowModel(small) = %+v, %v, want %d", info, err, live.SmallContextLength)
		}
		got := chat(t, native, live.ModelSmallContext).Usage.PromptTokens
		if window := loadedWindow(t, native, live.ModelSmallContext.Name); window != live.SmallContextLength || got > window {
			t.Errorf("small model: prompt_tokens %d, loaded window %d, want both capped at %d", got, window, live.SmallContextLength)
		}
	})
}

// sameJSON reports whether two texts hold equal JSON values.
func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
