package ollama_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"flow/internal/test/ollamatest"
	"flow/runtime/model"
	"flow/runtime/model/ollama"
)

// verdictSchema is a small JSON Schema with a title, as the reviewer's.
const verdictSchema = `{"title":"verdict","type":"object","properties":{"approved":{"type":"boolean"}},"required":["approved"]}`

// TestChatSendsFormat checks that a request's Format reaches the server in
// each API's own member: "format" (native) and "response_format" (OpenAI),
// and that a request without one sends neither.
func TestChatSendsFormat(t *testing.T) {
	t.Parallel()
	for _, api := range []string{"native", "openai"} {
		t.Run(api, func(t *testing.T) {
			t.Parallel()
			srv := ollamatest.New(t, ollamatest.Turn{Content: `{"approved":true}`}, ollamatest.Turn{Content: "plain"})
			c := newClient(t, srv.URL, func(o *ollama.Options) { o.API = api })
			msgs := []model.Message{{Role: "user", Content: "verdict?"}}
			resp, err := c.Chat(t.Context(), model.Request{Model: "m", Messages: msgs, Format: json.RawMessage(verdictSchema)})
			if err != nil || resp.Message.Content != `{"approved":true}` {
				t.Fatalf("Chat(format) = %q, %v; want the scripted JSON", resp.Message.Content, err)
			}
			if _, err := c.Chat(t.Context(), model.Request{Model: "m", Messages: msgs}); err != nil {
				t.Fatalf("Chat() = %v", err)
			}
			reqs := srv.Requests()
			var want, got any
			_ = json.Unmarshal([]byte(verdictSchema), &want)
			if err := json.Unmarshal(reqs[0].Format(), &got); err != nil {
				t.Fatalf("recorded format %s: %v (body %s)", reqs[0].Format(), err, reqs[0].Raw)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("format sent (-want +got):\n%s", diff)
			}
			if f := reqs[1].Format(); f != nil {
				t.Errorf("request without Format sent format %s, want none", f)
			}
			if api == "openai" {
				rf, _ := reqs[0].Body["response_format"].(map[string]any)
				js, _ := rf["json_schema"].(map[string]any)
				if rf["type"] != "json_schema" || js["name"] != "verdict" || js["strict"] != true {
					t.Errorf("response_format = %v, want type json_schema, name verdict, strict", rf)
				}
			}
		})
	}
}

func TestChatOpenAIJSONObjectFormat(t *testing.T) {
	t.Parallel()
	srv := ollamatest.New(t, ollamatest.Turn{Content: `{}`})
	c := newClient(t, srv.URL, func(o *ollama.Options) { o.API = "openai" })
	if _, err := c.Chat(t.Context(), model.Request{Model: "m", Format: json.RawMessage(`"json"`)}); err != nil {
		t.Fatalf("Chat() = %v", err)
	}
	rf, _ := srv.Requests()[0].Body["response_format"].(map[string]any)
	if rf["type"] != "json_object" {
		t.Errorf("response_format = %v, want {type: json_object} for Format \"json\"", rf)
	}
}
