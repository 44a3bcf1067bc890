package agent

import (
	"encoding/json"
	"testing"

	"flow/internal/test/ollamatest"
	"flow/runtime/config"
	"flow/runtime/report"
)

// replyBound returns the reply bound a chat request carried: options.num_predict
// on the native API, max_tokens on the OpenAI one (0 when absent).
func replyBound(t *testing.T, api string, raw []byte) int {
	t.Helper()
	var body struct {
		MaxTokens int `json:"max_tokens"`
		Options   struct {
			NumPredict int `json:"num_predict"`
		} `json:"options"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("request body: %v", err)
	}
	if api == config.APIOpenAI {
		return body.MaxTokens
	}
	return body.Options.NumPredict
}

// TestVerdictRequestBoundedAndCut: the verdict request bounds the reply
// (num_predict, max_tokens) at maxFormatTokens, since a model the server
// holds to the schema may otherwise write until the window is full, while
// the role's other calls keep the server's bound. When the reviewer's own
// answer was empty and the verdict request's reply was cut at that bound
// (unparsable), the reviewer's error still names the empty reply.
func TestVerdictRequestBoundedAndCut(t *testing.T) {
	for _, api := range apis {
		t.Run(api, func(t *testing.T) {
			cfg := testConfig(workspace(t, map[string]string{"a.go": "package a; var broken int\n"}), goLint())
			cfg.Ollama.API = api
			rep, srv, _ := fakeRun(t, cfg, "fix a.go",
				ollamatest.Turn{Content: "1. Edit a.go."},
				ollamatest.Turn{ToolCalls: []ollamatest.Call{{ID: "c1", Name: "file_edit", Arguments: args(map[string]any{"path": "a.go", "old_string": "broken", "new_string": "fixed"})}}},
				ollamatest.Turn{Content: "Edited."},
				ollamatest.Turn{}, ollamatest.Turn{}, // empty, and empty after the retry
				ollamatest.Turn{Content: `{"approved": true, "summary": "                    `, DoneReason: "length"},
			)
			rv := rep.Roles[2]
			if want := MsgReviewerVerdict + ": " + MsgEmptyReply; rv.Status != report.StatusUnverified || rv.Error != want {
				t.Errorf("reviewer = %s %q, want unverified %q", rv.Status, rv.Error, want)
			}
			chats := chatRequests(srv)
			if len(chats) != 6 {
				t.Fatalf("%d chat requests, want 6", len(chats))
			}
			for i, r := range chats[:5] {
				// The coder's calls (1 and 2) have the client's bound,
				// half the context window and at most 8192 tokens; the
				// planner's is bounded lower, and the reviewer's, each
				// held to the verdict's schema, lower still.
				want := maxReadOnlyReplyTokens
				switch i {
				case 1, 2:
					want = min(8192, cfg.Ollama.ContextLength/2)
				case 3, 4:
					want = maxFormatTokens
				}
				if got := replyBound(t, api, r.Raw); got != want {
					t.Errorf("request %d bounds the reply at %d, want %d", i, got, want)
				}
			}
			if got := replyBound(t, api, chats[5].Raw); got != maxFormatTokens {
				t.Errorf("verdict request bounds the reply at %d, want %d", got, maxFormatTokens)
			}
		})
	}
}
