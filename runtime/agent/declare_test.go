package agent

import (
	"strings"
	"testing"

	"flow/internal/test/ollamatest"
	"flow/runtime/config"
	"flow/runtime/report"
)

// TestToolDeclarations: where the tools are declared (doc/design.md §6.5).
// "auto" leaves a small model's requests without the tools field, and the
// system prompt's list is the declaration; a larger model, a server that
// gives no size, and "native" keep the field. Either way the coder's call
// written as text changes the file and the run verifies; the report says
// which form was used and why. On both APIs.
func TestToolDeclarations(t *testing.T) {
	tests := []struct {
		name, setting, size string
		caps                []string
		api                 string
		native              bool
		why                 string
	}{
		{"auto, a 1.5B model", config.ToolsAuto, "1.5B", []string{"completion", "tools"}, config.APINative, false, "(1.5B parameters) is a small model, under 4B parameters"},
		{"auto, a 7.6B model", config.ToolsAuto, "7.6B", []string{"completion", "tools"}, config.APINative, true, "(7.6B parameters) is not a small model"},
		{"auto, no tool calling", config.ToolsAuto, "7.6B", []string{"completion"}, config.APINative, false, "has no tool calling"},
		{"auto, no size", config.ToolsAuto, "", []string{"completion", "tools"}, config.APINative, true, "does not give the size"},
		{"native, a 1.5B model", config.ToolsNative, "1.5B", []string{"completion", "tools"}, config.APINative, true, `agent.tool_declarations = "native"`},
		{"text, native API", config.ToolsText, "7.6B", []string{"completion", "tools"}, config.APINative, false, `agent.tool_declarations = "text"`},
		{"text, OpenAI API", config.ToolsText, "", nil, config.APIOpenAI, false, `agent.tool_declarations = "text"`},
		{"auto, OpenAI API", config.ToolsAuto, "", nil, config.APIOpenAI, true, "auto: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := workspace(t, map[string]string{"a.go": "package a\n\nvar broken int\n"})
			cfg := testConfig(dir, goLint())
			cfg.Agent.Planner = config.PlannerAuto
			cfg.Agent.EditFormat = config.EditTools
			cfg.Agent.ToolDeclarations = tc.setting
			cfg.Ollama.API = tc.api
			srv := ollamatest.New(t,
				ollamatest.Turn{Content: "The variable is misnamed.\nfile_edit {\"path\": \"a.go\", \"old_string\": \"var broken int\", \"new_string\": \"var fixed int\"}"},
				ollamatest.Turn{Content: "I renamed the variable."},
				ollamatest.Turn{Content: verdict(true, "renamed")})
			describeModel(srv, cfg.Ollama.Model, tc.size, tc.caps)
			h := newHarness(t, cfg, ollamaBackend(t, srv, cfg))
			rep := h.run(t, "rename broken to fixed in a.go")

			want := config.ToolsText
			if tc.native {
				want = config.ToolsNative
			}
			if rep.EditFormat == nil || rep.EditFormat.Tools != want || !strings.Contains(rep.EditFormat.ToolsWhy, tc.why) {
				t.Errorf("edit_format = %+v, want tools %q because %q", rep.EditFormat, want, tc.why)
			}
			reqs := chatRequests(srv)
			if len(reqs) < 2 {
				t.Fatalf("%d chat requests, want the coder's and the reviewer's", len(reqs))
			}
			for i, r := range reqs {
				if _, has := r.Body["tools"]; has != tc.native {
					t.Errorf("request %d has a tools field = %t, want %t", i+1, has, tc.native)
				}
				system := firstMessage(r)
				if !strings.Contains(system, "file_edit {\"path\", \"old_string\", \"new_string\", \"replace_all\"?}") {
					t.Errorf("request %d: the system prompt does not list file_edit with its arguments:\n%s", i+1, system)
				}
			}
			if got := h.read(t, "a.go"); !strings.Contains(got, "var fixed int") {
				t.Errorf("a.go = %q, want the call written as text applied", got)
			}
			if rep.Status != report.StatusOK || !rep.Verified {
				t.Errorf("Run() = %s verified %t (%s), want ok and verified", rep.Status, rep.Verified, rep.Reason)
			}
		})
	}
}

// firstMessage returns the content of a recorded chat request's first
// message (the system prompt).
func firstMessage(r ollamatest.Recorded) string {
	msgs, _ := r.Body["messages"].([]any)
	if len(msgs) == 0 {
		return ""
	}
	m, _ := msgs[0].(map[string]any)
	s, _ := m["content"].(string)
	return s
}
