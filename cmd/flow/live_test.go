package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"flow/internal/test/ollamatest/live"
)

// liveConfig writes a config for the real server with the given [ollama]
// lines and no checks.
func liveConfig(t *testing.T, ws string, srv *live.Server, ollamaLines string) string {
	t.Helper()
	return writeFile(t, t.TempDir(), "flow.toml", `workspace_dir = `+tomlString(ws)+`
[ollama]
base_url = `+tomlString(srv.URL)+`
timeout = 600
`+ollamaLines+`
`)
}

// TestLiveDoctor runs flow doctor against a real Ollama: think = true on a
// model without the thinking capability is not ok and names it; the
// model's own context length comes from /api/show; with api = "openai" the
// server is recognised as Ollama and, once the model is loaded, its real
// window (the server's default, not context_length) is reported with a
// warning.
func TestLiveDoctor(t *testing.T) {
	srv := live.Start(t)
	ws := workspace(t)
	text := live.ModelText.Name

	r := runFlow(t, ws, hermeticEnv(t), "doctor", "-c", liveConfig(t, ws, srv, "model = "+tomlString(text)))
	m := decode(t, r)
	dm := doctorModelEntry(t, m, text)
	if r.code != 0 || m["status"] != "ok" || dm["tools"] != true {
		t.Fatalf("doctor = %d %v, model %v; want ok with tools", r.code, m["status"], dm)
	}
	if b := m["backend"].(map[string]any); b["version"] != strings.TrimPrefix(live.Version, "v") || b["server"] != "ollama" {
		t.Errorf("backend = %v, want Ollama %s", b, live.Version)
	}
	if dm["context_length"] != float64(live.DefaultContextLength) || dm["context_window"] != 16384.0 {
		t.Errorf("model = %v, want its own length %d and the configured window 16384", dm, live.DefaultContextLength)
	}

	r = runFlow(t, ws, hermeticEnv(t), "doctor", "-c", liveConfig(t, ws, srv, "model = "+tomlString(text)+"\nthink = true"))
	m = decode(t, r)
	dm = doctorModelEntry(t, m, text)
	if r.code != 1 || dm["status"] != "failed" || !strings.Contains(dm["error"].(string), `"thinking" capability`) {
		t.Errorf("think = true: doctor = %d, model %v; want failed naming the thinking capability", r.code, dm)
	}

	small := live.ModelSmallContext.Name
	r = runFlow(t, ws, hermeticEnv(t), "doctor", "-c", liveConfig(t, ws, srv, "model = "+tomlString(small)))
	m = decode(t, r)
	if dm := doctorModelEntry(t, m, small); dm["context_length"] != float64(live.SmallContextLength) || dm["context_window"] != float64(live.SmallContextLength) {
		t.Errorf("small model = %v, want window %d", dm, live.SmallContextLength)
	}
	if w := strings.Join(asStrings(m["warnings"]), "\n"); !strings.Contains(w, "exceeds the context length of "+small) {
		t.Errorf("warnings = %q, want the context_length warning", w)
	}

	r = runFlow(t, ws, hermeticEnv(t), "doctor", "-c", liveConfig(t, ws, srv, "model = \"no-such-model\""))
	m = decode(t, r)
	if dm := doctorModelEntry(t, m, "no-such-model"); r.code != 1 || !strings.Contains(dm["error"].(string), "`ollama pull no-such-model`") {
		t.Errorf("missing model: doctor = %d, model %v; want the ollama pull hint", r.code, dm)
	}

	// api = "openai": Ollama ignores context_length there. Load the model
	// with an OpenAI-style call, as a run would, then ask doctor.
	openai := liveConfig(t, ws, srv, "api = \"openai\"\nmodel = "+tomlString(text))
	r = runFlow(t, ws, hermeticEnv(t), "doctor", "-c", openai)
	m = decode(t, r)
	if b := m["backend"].(map[string]any); r.code != 0 || b["server"] != "ollama" {
		t.Errorf("openai doctor = %d backend %v, want ok on Ollama", r.code, b)
	}
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":`+tomlString(text)+`,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("load the model: %v %v", resp, err)
	}
	resp.Body.Close()
	r = runFlow(t, ws, hermeticEnv(t), "doctor", "-c", openai)
	m = decode(t, r)
	dm = doctorModelEntry(t, m, text)
	window, _ := dm["context_window"].(float64)
	if window <= 0 || window >= 16384 || !strings.Contains(dm["context_note"].(string), "/api/ps") {
		t.Errorf("openai doctor after loading = %v, want the server's default window from /api/ps", dm)
	}
	if w := strings.Join(asStrings(m["warnings"]), "\n"); !strings.Contains(w, "OLLAMA_CONTEXT_LENGTH=16384") {
		t.Errorf("warnings = %q, want the truncation warning", w)
	}
}

// TestLiveRun runs a whole task through flow against a real Ollama on both
// APIs, with the default agent.planner = "auto": the workspace's one file
// is in the brief, so the planner is skipped; the coder's model writes
// calc.go with file_write until the repeat rule ends it, its one check
// shows the fix, and the reviewer answers with an approving verdict. It shows the chat
// template, the tool list, a tool call and the streamed replies survive a
// real server end to end.
func TestLiveRun(t *testing.T) {
	// The OpenAI-compatible API gets the server's window, which flow reads
	// before the first call: the coder's prompts need more than the
	// default 4096 tokens of the test models' byte-level tokenizer.
	srv := live.Start(t, live.WithEnv("OLLAMA_CONTEXT_LENGTH", "16384"))
	for _, api := range []string{"native", "openai"} {
		t.Run(api, func(t *testing.T) {
			ws := workspace(t)
			// Add is broken, and the one check fails until it adds: the
			// coder's file_write fixes it, so the check shows the change and
			// the reviewer is asked.
			writeFile(t, ws, "calc.go", "package calc\n\nfunc Add(a, b int) int { return a - b }\n")
			cfg := liveConfig(t, ws, srv, "api = "+tomlString(api)+"\nmodel = "+tomlString(live.ModelVerdict.Name)+
				"\n[models]\ncoder = "+tomlString(live.ModelWrite.Name)+"\n[agent]\nmax_cycles = 1"+
				"\n[checks.adds]\ncmd = [\"grep\", \"-q\", \"a + b\", \"calc.go\"]\nkind = \"lint\"\nfiletypes = [\"go\"]")
			r := runFlow(t, ws, hermeticEnv(t), "run", "--trusted", "-c", cfg, "Check that Add adds.")
			m := decode(t, r)
			if m["status"] != "ok" || m["verified"] != true {
				t.Fatalf("flow run = %d %v\n%s\nstderr: %s", r.code, m["status"], r.stdout, r.stderr)
			}
			if v := m["verification"].(map[string]any); v["evidence"] != "fixed" {
				t.Errorf("verification evidence = %v, want fixed", v["evidence"])
			}
			roles, _ := m["roles"].([]any)
			var reviewer map[string]any
			for _, x := range roles {
				if x.(map[string]any)["role"] == "reviewer" {
					reviewer = x.(map[string]any)
				}
			}
			if reviewer == nil || reviewer["approved"] != true {
				t.Errorf("reviewer = %v, want approved (roles %v)", reviewer, roles)
			}
			if p := roles[0].(map[string]any); p["role"] != "planner" || p["status"] != "skipped" {
				t.Errorf("first role = %v, want the planner skipped", p)
			}
			usage, _ := m["usage"].(map[string]any)
			if calls, _ := m["model_calls"].(float64); calls < 3 || usage["prompt_tokens"].(float64) <= calls || usage["completion_tokens"].(float64) < calls {
				t.Errorf("model_calls %v, usage %v: want the coder's and the reviewer's calls with the server's token counts", m["model_calls"], usage)
			}
			got, _ := os.ReadFile(filepath.Join(ws, "calc.go"))
			if !strings.Contains(string(got), "// Add returns the sum of a and b.\nfunc Add(a, b int) int { return a + b }") {
				t.Errorf("calc.go is not the coder's file_write:\n%s", got)
			}
			if changed := asStrings(m["changed_files"]); len(changed) != 1 || changed[0] != "calc.go" {
				t.Errorf("changed_files = %v, want [calc.go]", changed)
			}
		})
	}
}
