package main

import (
	"testing"

	"flow/runtime/model/ollamatest"
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
