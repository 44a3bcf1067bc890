package agent

import (
	"strings"
	"testing"

	"flow/internal/test/ollamatest"
	"flow/runtime/progress"
	"flow/runtime/report"
)

// The model's reply text reaches the event sink as it streams, as
// model_delta events between the turn's model_turn and model_reply, and
// never becomes a progress line of its own.
func TestModelDeltaEventsStreamTheReply(t *testing.T) {
	for _, api := range apis {
		t.Run(api, func(t *testing.T) {
			cfg := testConfig(workspace(t, map[string]string{"a.go": "package a; var broken int\n"}), goLint())
			cfg.Ollama.API = api
			plan := "1. Edit a.go so that the lint check passes."
			rep, _, h := fakeRun(t, cfg, "fix a.go",
				ollamatest.Turn{Content: plan},
				ollamatest.Turn{ToolCalls: []ollamatest.Call{{ID: "c1", Name: "file_edit", Arguments: args(map[string]any{"path": "a.go", "old_string": "broken", "new_string": "fixed"})}}},
				ollamatest.Turn{Content: "Edited."},
				ollamatest.Turn{Content: verdict(true, "ok")},
			)
			if rep.Status != report.StatusOK {
				t.Fatalf("Run() = %s %q, want ok", rep.Status, rep.Error)
			}
			var planner strings.Builder
			chunks, open := 0, false
			for _, e := range h.events {
				switch e.Kind {
				case progress.ModelTurn:
					open = true
				case progress.ModelReply:
					open = false
				case progress.ModelDelta:
					if !open {
						t.Errorf("model_delta %+v outside a model turn", e)
					}
					if s := progress.Column(e); s != "" {
						t.Errorf("model_delta line = %q, want empty", s)
					}
					if e.Role == "planner" && e.Turn == 1 {
						planner.WriteString(e.Message)
						chunks++
					}
				}
			}
			if planner.String() != plan || chunks < 2 {
				t.Errorf("planner deltas = %q in %d chunks, want %q in several", planner.String(), chunks, plan)
			}
		})
	}
}
