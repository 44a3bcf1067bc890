package main

import (
	"slices"
	"strings"
	"testing"

	"flow/internal/test/ollamatest"
)

func TestDoctor(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	srv := ollamatest.New(t)
	srv.SetModels("coder:7b", "plain:1b")
	srv.SetCapabilities("coder:7b", "completion", "tools")
	srv.SetCapabilities("plain:1b", "completion")
	config := func(reviewer, exe string) string {
		return writeFile(t, t.TempDir(), "ops.toml", `workspace_dir = `+tomlString(ws)+`
[ollama]
base_url = `+tomlString(srv.URL)+`
model = "coder:7b"
[models]
reviewer = `+tomlString(reviewer)+`
[checks.lint]
cmd = [`+tomlString(exe)+`, "x"]
`)
	}

	r := runFlow(t, ws, hermeticEnv(t), "doctor", "-c", config("coder:7b", "sh"))
	m := decode(t, r)
	if r.code != 0 || m["status"] != "ok" || m["backend"].(map[string]any)["status"] != "ok" {
		t.Fatalf("flow doctor = %d %v, want ok", r.code, m)
	}
	models := m["models"].([]any)
	if len(models) != 1 || models[0].(map[string]any)["tools"] != true || len(models[0].(map[string]any)["roles"].([]any)) != 3 {
		t.Errorf("models = %v, want one tool-capable model for three roles", models)
	}
	if c := m["checks"].([]any)[0].(map[string]any); c["status"] != "ok" || c["path"] == "" {
		t.Errorf("check = %v, want its executable found", c)
	}

	// A model without tool calling, and a check whose executable is missing.
	r = runFlow(t, ws, hermeticEnv(t), "doctor", "-c", config("plain:1b", "no-such-tool-anywhere"))
	m = decode(t, r)
	if r.code != 1 || m["status"] != "failed" {
		t.Errorf("flow doctor = %d %v, want 1 and failed", r.code, m["status"])
	}
	var plain map[string]any
	for _, x := range m["models"].([]any) {
		if x.(map[string]any)["model"] == "plain:1b" {
			plain = x.(map[string]any)
		}
	}
	if plain == nil || plain["status"] != "failed" || plain["tools"] != false {
		t.Errorf("plain:1b = %v, want failed without tools", plain)
	}
	if c := m["checks"].([]any)[0].(map[string]any); c["status"] != "unavailable" {
		t.Errorf("check = %v, want unavailable", c)
	}

	// An unreachable backend.
	dead := writeFile(t, t.TempDir(), "dead.toml", `workspace_dir = `+tomlString(ws)+`
[ollama]
base_url = "http://127.0.0.1:1"
`)
	r = runFlow(t, ws, hermeticEnv(t), "doctor", "-c", dead)
	if m := decode(t, r); r.code != 1 || m["backend"].(map[string]any)["status"] != "unavailable" {
		t.Errorf("flow doctor against a dead backend = %d %v", r.code, m["backend"])
	}
}

// doctorConfig writes a config for srvURL with the given [ollama] lines.
func doctorConfig(t *testing.T, ws, srvURL, ollamaLines string) string {
	t.Helper()
	return writeFile(t, t.TempDir(), "flow.toml", `workspace_dir = `+tomlString(ws)+`
[ollama]
base_url = `+tomlString(srvURL)+`
`+ollamaLines+`
`)
}

// doctorModelEntry returns the report's entry for name.
func doctorModelEntry(t *testing.T, m map[string]any, name string) map[string]any {
	t.Helper()
	for _, x := range m["models"].([]any) {
		if x.(map[string]any)["model"] == name {
			return x.(map[string]any)
		}
	}
	t.Fatalf("no model %s in %v", name, m["models"])
	return nil
}

func TestDoctorThink(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	srv := ollamatest.New(t)
	srv.SetModels("coder:7b", "thinker:8b")
	srv.SetCapabilities("coder:7b", "completion", "tools")
	srv.SetCapabilities("thinker:8b", "completion", "tools", "thinking")

	r := runFlow(t, ws, hermeticEnv(t), "doctor", "-c", doctorConfig(t, ws, srv.URL, "model = \"coder:7b\"\nthink = true"))
	m := decode(t, r)
	dm := doctorModelEntry(t, m, "coder:7b")
	if r.code != 1 || m["status"] != "failed" || dm["status"] != "failed" || !strings.Contains(dm["error"].(string), `"thinking" capability`) {
		t.Errorf("think = true on a model without thinking: doctor = %d %v, model %v; want failed naming the capability", r.code, m["status"], dm)
	}

	r = runFlow(t, ws, hermeticEnv(t), "doctor", "-c", doctorConfig(t, ws, srv.URL, "model = \"thinker:8b\"\nthink = true"))
	if m := decode(t, r); r.code != 0 || m["status"] != "ok" {
		t.Errorf("think = true on a thinking model: doctor = %d %v, want ok", r.code, m)
	}
	// think is not sent with the OpenAI-compatible API: nothing to check.
	r = runFlow(t, ws, hermeticEnv(t), "doctor", "-c", doctorConfig(t, ws, srv.URL, "model = \"coder:7b\"\nthink = true\napi = \"openai\""))
	if m := decode(t, r); r.code != 0 || m["status"] != "ok" {
		t.Errorf("think = true with api = openai: doctor = %d %v, want ok", r.code, m)
	}
}

func TestDoctorMissingModel(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	srv := ollamatest.New(t)
	srv.SetModels("other:1b")
	r := runFlow(t, ws, hermeticEnv(t), "doctor", "-c", doctorConfig(t, ws, srv.URL, `model = "qwen2.5-coder:7b"`))
	m := decode(t, r)
	dm := doctorModelEntry(t, m, "qwen2.5-coder:7b")
	if r.code != 1 || dm["status"] != "unavailable" || !strings.Contains(dm["error"].(string), "run `ollama pull qwen2.5-coder:7b`") {
		t.Errorf("missing model: doctor = %d, model %v; want unavailable suggesting ollama pull", r.code, dm)
	}
}

// TestDoctorOpenAICompatible: a server with the OpenAI-compatible API and
// no /api/* (llama-server, vLLM) is reachable, not "unavailable"; its
// models are checked against GET /v1/models.
func TestDoctorOpenAICompatible(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	srv := ollamatest.New(t)
	srv.SetModels("qwen2.5-coder-7b-instruct")
	srv.SetOpenAIOnly(true)

	r := runFlow(t, ws, hermeticEnv(t), "doctor", "-c", doctorConfig(t, ws, srv.URL, "api = \"openai\"\nmodel = \"qwen2.5-coder-7b-instruct\""))
	m := decode(t, r)
	b := m["backend"].(map[string]any)
	dm := doctorModelEntry(t, m, "qwen2.5-coder-7b-instruct")
	if r.code != 0 || m["status"] != "ok" || b["status"] != "ok" || b["server"] != "openai-compatible" || dm["status"] != "ok" {
		t.Errorf("doctor on an OpenAI-only server = %d %v backend %v model %v, want ok", r.code, m["status"], b, dm)
	}
	if note, _ := dm["context_note"].(string); !strings.Contains(note, "does not report its context window") {
		t.Errorf("context_note = %q, want it to say the window is not reported", note)
	}
	var paths []string
	for _, req := range srv.Requests() {
		paths = append(paths, req.Path)
	}
	if !slices.Contains(paths, "/v1/models") || slices.Contains(paths, "/api/show") {
		t.Errorf("requests = %v, want /v1/models and no /api/show", paths)
	}

	// A model the server does not serve.
	r = runFlow(t, ws, hermeticEnv(t), "doctor", "-c", doctorConfig(t, ws, srv.URL, "api = \"openai\"\nmodel = \"llama3\""))
	m = decode(t, r)
	if dm := doctorModelEntry(t, m, "llama3"); r.code != 1 || dm["status"] != "unavailable" || !strings.Contains(dm["error"].(string), "qwen2.5-coder-7b-instruct") {
		t.Errorf("unlisted model: doctor = %d, model %v; want unavailable naming what the server lists", r.code, dm)
	}

	// The native API against such a server: unavailable, saying what to do.
	r = runFlow(t, ws, hermeticEnv(t), "doctor", "-c", doctorConfig(t, ws, srv.URL, `model = "qwen2.5-coder-7b-instruct"`))
	m = decode(t, r)
	if b := m["backend"].(map[string]any); r.code != 1 || b["status"] != "unavailable" || !strings.Contains(b["error"].(string), `set api = "openai"`) {
		t.Errorf("native API on an OpenAI-only server: doctor = %d backend %v, want unavailable suggesting api = openai", r.code, b)
	}
}

func TestDoctorContextWindow(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	srv := ollamatest.New(t)
	srv.SetModels("big:7b", "small:1b")
	srv.SetContextLength("big:7b", 32768)
	srv.SetContextLength("small:1b", 2048)

	// Native: context_length is sent, capped at the model's own length.
	r := runFlow(t, ws, hermeticEnv(t), "doctor", "-c", doctorConfig(t, ws, srv.URL, "model = \"big:7b\"\ncontext_length = 16384"))
	m := decode(t, r)
	if dm := doctorModelEntry(t, m, "big:7b"); dm["context_length"] != 32768.0 || dm["context_window"] != 16384.0 {
		t.Errorf("native big model = %v, want context_length 32768, window 16384", dm)
	}
	r = runFlow(t, ws, hermeticEnv(t), "doctor", "-c", doctorConfig(t, ws, srv.URL, "model = \"small:1b\"\ncontext_length = 16384"))
	m = decode(t, r)
	if dm := doctorModelEntry(t, m, "small:1b"); dm["context_window"] != 2048.0 {
		t.Errorf("native small model = %v, want window 2048", dm)
	}
	if w := strings.Join(asStrings(m["warnings"]), "\n"); !strings.Contains(w, "context_length 16384 exceeds the context length of small:1b (2048 tokens)") {
		t.Errorf("warnings = %q, want the context_length warning", w)
	}

	// OpenAI against Ollama: the loaded window from /api/ps, or plainly unknown.
	openai := doctorConfig(t, ws, srv.URL, "api = \"openai\"\nmodel = \"big:7b\"\ncontext_length = 16384")
	m = decode(t, runFlow(t, ws, hermeticEnv(t), "doctor", "-c", openai))
	dm := doctorModelEntry(t, m, "big:7b")
	if _, set := dm["context_window"]; set || !strings.Contains(dm["context_note"].(string), "unknown until the model is loaded") {
		t.Errorf("openai, not loaded = %v, want no window and a note saying it is unknown", dm)
	}
	if b := m["backend"].(map[string]any); b["server"] != "ollama" {
		t.Errorf("backend = %v, want server ollama", b)
	}
	srv.SetLoaded("big:7b", 4096)
	r = runFlow(t, ws, hermeticEnv(t), "doctor", "-c", openai)
	m = decode(t, r)
	dm = doctorModelEntry(t, m, "big:7b")
	if dm["context_window"] != 4096.0 || !strings.Contains(dm["context_note"].(string), "/api/ps") {
		t.Errorf("openai, loaded = %v, want window 4096 from /api/ps", dm)
	}
	if w := strings.Join(asStrings(m["warnings"]), "\n"); !strings.Contains(w, "4096-token window, below context_length 16384") || !strings.Contains(w, "OLLAMA_CONTEXT_LENGTH=16384") {
		t.Errorf("warnings = %q, want the truncation warning naming OLLAMA_CONTEXT_LENGTH", w)
	}
	if r.code != 0 {
		t.Errorf("a small window is a warning, not a failure: doctor = %d", r.code)
	}
}

func asStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}
