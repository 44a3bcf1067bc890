package agent

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"flow/internal/test/ollamatest"
	"flow/runtime/config"
	"flow/runtime/model"
	"flow/runtime/model/ollama"
	"flow/runtime/report"
)

// ollamaBackend returns the real client for srv, configured from cfg.
func ollamaBackend(t testing.TB, srv *ollamatest.Server, cfg *config.Config) model.Backend {
	t.Helper()
	c, err := ollama.New(ollama.Options{
		BaseURL:       srv.URL,
		API:           cfg.Ollama.API,
		Temperature:   cfg.Ollama.Temperature,
		ContextLength: cfg.Ollama.ContextLength,
		Timeout:       time.Duration(cfg.Ollama.Timeout * float64(time.Second)),
		Think:         cfg.Ollama.Think,
	})
	if err != nil {
		t.Fatalf("ollama.New() error = %v", err)
	}
	return c
}

func args(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestEndToEndOllama drives a whole run through the real Ollama client and
// the scripted fake server, the real registry on a Disk workspace and a real
// lint check process.
func TestEndToEndOllama(t *testing.T) {
	for _, api := range []string{config.APINative, config.APIOpenAI} {
		t.Run(api, func(t *testing.T) {
			dir := workspace(t, map[string]string{
				"main.go": "package main\n\nfunc main() { println(\"hello\") }\n",
			})
			lint := shCheck("golint", config.KindLint, []string{"go"}, `grep -q 'println("hello, flow")' main.go`)
			cfg := testConfig(dir, lint)
			cfg.Ollama.API = api
			cfg.Models = config.Models{Planner: "plan:1b", Coder: "code:7b", Reviewer: "review:3b"}
			srv := ollamatest.New(t,
				ollamatest.Turn{Model: "plan:1b", ToolCalls: []ollamatest.Call{{ID: "call_p1", Name: "file_search", Arguments: args(map[string]any{"pattern": "println"})}}, PromptTokens: 10, CompletionTokens: 2},
				ollamatest.Turn{Model: "plan:1b", Content: "1. Change the greeting in main.go.", PromptTokens: 20, CompletionTokens: 8, PromptEvalDuration: 250 * time.Millisecond},
				ollamatest.Turn{Model: "code:7b", ToolCalls: []ollamatest.Call{{ID: "call_c1", Name: "file_edit", Arguments: args(map[string]any{
					"path": "main.go", "old_string": `println("hello")`, "new_string": `println("hello, flow")`,
				})}}},
				ollamatest.Turn{Model: "code:7b", ToolCalls: []ollamatest.Call{{ID: "call_c2", Name: "flow_check", Arguments: "{}"}}},
				ollamatest.Turn{Model: "code:7b", Content: "Changed the greeting."},
				ollamatest.Turn{Model: "review:3b", ToolCalls: []ollamatest.Call{{ID: "call_r1", Name: "file_read", Arguments: args(map[string]any{"path": "main.go"})}}},
				ollamatest.Turn{Model: "review:3b", Content: "Read it.\n```json\n" + verdict(true, "greeting changed") + "\n```"},
			)
			h := newHarness(t, cfg, ollamaBackend(t, srv, cfg))
			rep := h.run(t, "greet flow")

			if rep.Status != report.StatusOK || !rep.Verified {
				t.Fatalf("Run() = %s verified=%v reason %q error %q roles %v", rep.Status, rep.Verified, rep.Reason, rep.Error, roleStatuses(rep))
			}
			if srv.Unexpected() != 0 || srv.Pending() != 0 {
				t.Errorf("fake server: %d unexpected requests, %d turns left", srv.Unexpected(), srv.Pending())
			}
			if got := h.read(t, "main.go"); got != "package main\n\nfunc main() { println(\"hello, flow\") }\n" {
				t.Errorf("main.go = %q", got)
			}
			if rep.ModelCalls != 7 || rep.ToolCalls != 4 || len(rep.ChangedFiles) != 1 {
				t.Errorf("model calls %d, tool calls %d, changed %v; want 7, 4, [main.go]", rep.ModelCalls, rep.ToolCalls, rep.ChangedFiles)
			}
			if rep.Usage.PromptTokens < 30 || rep.Usage.CompletionTokens < 10 {
				t.Errorf("Usage = %+v, want at least the scripted 30/10", rep.Usage)
			}
			// The native API says how long the prompt took; the OpenAI one
			// does not.
			var evalMS []int64
			for _, e := range rep.Events {
				if e.Kind == report.EventModelCall {
					evalMS = append(evalMS, e.PromptEvalMS)
				}
			}
			want := []int64{0, 0, 0, 0, 0, 0, 0}
			if api == config.APINative {
				want[1] = 250
			}
			if !slices.Equal(evalMS, want) {
				t.Errorf("model calls' prompt_eval_ms = %v, want %v", evalMS, want)
			}
			var chats []ollamatest.Recorded
			for _, r := range srv.Requests() {
				if r.Method == "POST" && (r.Path == "/api/chat" || r.Path == "/v1/chat/completions") {
					chats = append(chats, r)
				}
			}
			if len(chats) != 7 {
				t.Fatalf("got %d chat requests, want 7", len(chats))
			}
			if api == config.APINative {
				for i, r := range chats {
					opts, _ := r.Body["options"].(map[string]any)
					if opts["num_ctx"] != float64(cfg.Ollama.ContextLength) {
						t.Errorf("request %d options = %v, want num_ctx %d", i, opts, cfg.Ollama.ContextLength)
					}
				}
			}
			// The reviewer's second request answers call_r1 with the file.
			msgs, _ := chats[6].Body["messages"].([]any)
			last, _ := msgs[len(msgs)-1].(map[string]any)
			if last["role"] != "tool" || last["tool_call_id"] != "call_r1" {
				t.Errorf("last message of the reviewer's second request = %v, want the tool result for call_r1", last)
			}
			if ev := toolEvents(rep); len(ev) < 3 || ev[1].Tool != "file_edit" || ev[1].ToolCallID != "call_c1" || ev[2].Tool != "flow_check" {
				t.Errorf("tool events = %+v", ev)
			}
		})
	}
}

// TestMalformedCallsThroughOllama sends denied, unknown, malformed and
// id-less calls through the real client and checks that every one is
// answered by one tool message with its id.
func TestMalformedCallsThroughOllama(t *testing.T) {
	dir := workspace(t, map[string]string{"a.go": "package a\n"})
	cfg := testConfig(dir)
	cfg.Trusted = false
	srv := ollamatest.New(t,
		ollamatest.Turn{ToolCalls: []ollamatest.Call{
			{ID: "call_deny", Name: "file_write", Arguments: args(map[string]any{"path": "x.go", "content": "x"})},
			{ID: "call_unknown", Name: "run_shell", Arguments: args(map[string]any{"cmd": "id"})},
			{ID: "call_bad", Name: "file_read", Arguments: `{"path": "a.go"`},
			{Name: "file_list"},
		}},
		ollamatest.Turn{Content: "plan"},
	)
	h := newHarness(t, cfg, ollamaBackend(t, srv, cfg))
	rep := h.run(t, "probe")
	if rep.Roles[0].Status != "ok" || rep.ToolCalls != 4 {
		t.Fatalf("planner %s, tool calls %d; want ok, 4", rep.Roles[0].Status, rep.ToolCalls)
	}
	reqs := srv.Requests()
	msgs, _ := reqs[len(reqs)-1].Body["messages"].([]any)
	var ids []string
	var statuses []string
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		if mm["role"] != "tool" {
			continue
		}
		ids = append(ids, mm["tool_call_id"].(string))
		var res map[string]any
		if err := json.Unmarshal([]byte(mm["content"].(string)), &res); err != nil {
			t.Fatalf("tool content is not JSON: %v", err)
		}
		statuses = append(statuses, res["status"].(string))
	}
	wantIDs := []string{"call_deny", "call_unknown", "call_bad", "planner-1-1-3"}
	if len(ids) != 4 || ids[0] != wantIDs[0] || ids[1] != wantIDs[1] || ids[2] != wantIDs[2] || ids[3] == "" {
		t.Errorf("tool message ids = %v, want %v (the last synthesised or the server's)", ids, wantIDs)
	}
	if len(statuses) != 4 || statuses[0] != "error" || statuses[1] != "error" || statuses[2] != "error" || statuses[3] != "ok" {
		t.Errorf("tool statuses = %v, want error, error, error, ok", statuses)
	}
	if fileExists(dir, "x.go") {
		t.Errorf("denied write happened")
	}
}

func TestBackendErrorThroughOllama(t *testing.T) {
	dir := workspace(t, nil)
	cfg := testConfig(dir)
	srv := ollamatest.New(t, ollamatest.Turn{Error: "model runner crashed"})
	h := newHarness(t, cfg, ollamaBackend(t, srv, cfg))
	rep := h.run(t, "task")
	if rep.Status != report.StatusError || rep.ModelCalls != 1 ||
		rep.Error != "The model server failed while the planner was working: ollama: model runner crashed" {
		t.Errorf("Run() = %s %q after %d calls, want error with the server's message", rep.Status, rep.Error, rep.ModelCalls)
	}
}
