package ollama_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"flow/internal/test/ollamatest"
	"flow/runtime/model"
	"flow/runtime/model/ollama"
)

func TestCatalog(t *testing.T) {
	t.Parallel()
	srv := ollamatest.New(t)
	srv.SetVersion("0.17.4")
	srv.SetModels("qwen2.5-coder:7b", "llama3.2:latest")
	srv.SetCapabilities("llama3.2:latest", "completion")
	c := newClient(t, srv.URL, nil)

	if v, err := c.Version(t.Context()); err != nil || v != "0.17.4" {
		t.Errorf("Version() = %q, %v, want 0.17.4", v, err)
	}
	models, err := c.ListModels(t.Context())
	want := []model.ModelInfo{{Name: "qwen2.5-coder:7b"}, {Name: "llama3.2:latest"}}
	if err != nil || !reflect.DeepEqual(models, want) {
		t.Errorf("ListModels() = %+v, %v, want %+v", models, err, want)
	}
	tests := []struct {
		name string
		want model.ModelInfo
	}{
		{"qwen2.5-coder:7b", model.ModelInfo{Name: "qwen2.5-coder:7b", Capabilities: []string{"completion", "tools"}}},
		{"llama3.2:latest", model.ModelInfo{Name: "llama3.2:latest", Capabilities: []string{"completion"}}},
	}
	for _, tc := range tests {
		got, err := c.ShowModel(t.Context(), tc.name)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ShowModel(%q) = %+v, %v, want %+v", tc.name, got, err, tc.want)
		}
	}
	if got := srv.Requests()[2].Body["model"]; got != "qwen2.5-coder:7b" {
		t.Errorf("/api/show request model = %v, want qwen2.5-coder:7b", got)
	}
	_, err = c.ShowModel(t.Context(), "missing")
	if !errors.Is(err, model.ErrModelNotFound) {
		t.Errorf("ShowModel(missing) = %v, want ErrModelNotFound", err)
	}
}

func TestCatalogErrors(t *testing.T) {
	t.Parallel()
	t.Run("503 on tags", func(t *testing.T) {
		t.Parallel()
		srv := ollamatest.New(t)
		srv.SetModels("m")
		srv.SetFailure("/api/tags", 503, "server busy")
		_, err := newClient(t, srv.URL, nil).ListModels(t.Context())
		if err == nil || !strings.Contains(err.Error(), "server busy (HTTP 503 from GET /api/tags)") {
			t.Errorf("ListModels() = %v, want the 503 error", err)
		}
	})
	t.Run("500 on version", func(t *testing.T) {
		t.Parallel()
		srv := ollamatest.New(t)
		srv.SetFailure("/api/version", 500, "")
		_, err := newClient(t, srv.URL, nil).Version(t.Context())
		if err == nil || !strings.Contains(err.Error(), "HTTP 500") {
			t.Errorf("Version() = %v, want an HTTP 500 error", err)
		}
	})
	for _, tc := range []struct{ name, body, want string }{
		{"tags without models", `{"other":[]}`, "response has no models list"},
		{"tags not JSON", `<html>`, "decode response"},
		{"tags with error", `{"error":"disk full"}`, "ollama: disk full"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := newClient(t, rawServer(t, "application/json", tc.body), nil).ListModels(t.Context())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ListModels() = %v, want error containing %q", err, tc.want)
			}
		})
	}
	t.Run("version missing", func(t *testing.T) {
		t.Parallel()
		_, err := newClient(t, rawServer(t, "application/json", `{}`), nil).Version(t.Context())
		if err == nil || !strings.Contains(err.Error(), "no version") {
			t.Errorf("Version() = %v, want a missing version error", err)
		}
	})
}

func TestShowModelContextLength(t *testing.T) {
	t.Parallel()
	srv := ollamatest.New(t)
	srv.SetModels("qwen2.5-coder:7b", "plain:1b")
	srv.SetContextLength("qwen2.5-coder:7b", 32768)
	c := newClient(t, srv.URL, nil)
	got, err := c.ShowModel(t.Context(), "qwen2.5-coder:7b")
	if err != nil || got.ContextLength != 32768 {
		t.Errorf("ShowModel = %+v, %v, want context length 32768", got, err)
	}
	// A server that does not say: 0, not a guess.
	if got, err := c.ShowModel(t.Context(), "plain:1b"); err != nil || got.ContextLength != 0 {
		t.Errorf("ShowModel(plain) = %+v, %v, want context length 0", got, err)
	}
}

func TestContextLengthKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body string
		want       int
	}{
		{"architecture key", `{"model_info":{"general.architecture":"qwen2","qwen2.context_length":32768,"qwen2.embedding_length":896}}`, 32768},
		{"architecture key wins", `{"model_info":{"general.architecture":"qwen2","qwen2.context_length":4096,"clip.context_length":77}}`, 4096},
		{"single key without architecture", `{"model_info":{"llama.context_length":131072}}`, 131072},
		{"ambiguous keys", `{"model_info":{"a.context_length":1,"b.context_length":2}}`, 0},
		{"not a number", `{"model_info":{"general.architecture":"x","x.context_length":"big"}}`, 0},
		{"negative", `{"model_info":{"general.architecture":"x","x.context_length":-5}}`, 0},
		{"fraction", `{"model_info":{"general.architecture":"x","x.context_length":1.5}}`, 0},
		{"no model_info", `{"capabilities":["completion"]}`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := newClient(t, rawServer(t, "application/json", tc.body), nil).ShowModel(t.Context(), "m")
			if err != nil || got.ContextLength != tc.want {
				t.Errorf("ShowModel = %+v, %v, want context length %d", got, err, tc.want)
			}
		})
	}
}

func TestLoadedModels(t *testing.T) {
	t.Parallel()
	srv := ollamatest.New(t)
	c := newClient(t, srv.URL, nil)
	if got, err := c.LoadedModels(t.Context()); err != nil || len(got) != 0 {
		t.Errorf("LoadedModels() = %+v, %v, want none", got, err)
	}
	srv.SetLoaded("qwen2.5-coder:7b", 4096)
	want := []model.LoadedModel{{Name: "qwen2.5-coder:7b", ContextLength: 4096}}
	if got, err := c.LoadedModels(t.Context()); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("LoadedModels() = %+v, %v, want %+v", got, err, want)
	}
	if got := srv.Requests()[0].Path; got != "/api/ps" {
		t.Errorf("request path = %s, want /api/ps", got)
	}
	_, err := newClient(t, rawServer(t, "application/json", `{}`), nil).LoadedModels(t.Context())
	if err == nil || !strings.Contains(err.Error(), "no models list") {
		t.Errorf("LoadedModels() on {} = %v, want a missing list error", err)
	}
}

func TestOpenAICatalog(t *testing.T) {
	t.Parallel()
	srv := ollamatest.New(t)
	srv.SetModels("qwen2.5-coder:7b", "llama3.2:latest")
	srv.SetOpenAIOnly(true)
	c := newClient(t, srv.URL, func(o *ollama.Options) { o.API = "openai" })
	models, err := c.ListModels(t.Context())
	want := []model.ModelInfo{{Name: "qwen2.5-coder:7b"}, {Name: "llama3.2:latest"}}
	if err != nil || !reflect.DeepEqual(models, want) {
		t.Errorf("ListModels() = %+v, %v, want %+v", models, err, want)
	}
	if got := srv.Requests()[0].Path; got != "/v1/models" {
		t.Errorf("openai ListModels asked %s, want /v1/models", got)
	}
	// No Ollama API: a distinct error, not "model not found".
	_, err = c.Version(t.Context())
	if !errors.Is(err, ollama.ErrNotOllama) || errors.Is(err, model.ErrModelNotFound) {
		t.Errorf("Version() on an OpenAI-only server = %v, want ErrNotOllama", err)
	}
	_, err = newClient(t, rawServer(t, "application/json", `{"object":"list"}`), func(o *ollama.Options) { o.API = "openai" }).ListModels(t.Context())
	if err == nil || !strings.Contains(err.Error(), "no data list") {
		t.Errorf("ListModels() without data = %v, want a missing list error", err)
	}
}

// TestShowModelParameterCount: /api/show's model size, from model_info's
// general.parameter_count (the scripted server gives it with details'
// parameter_size, as Ollama does).
func TestShowModelParameterCount(t *testing.T) {
	t.Parallel()
	srv := ollamatest.New(t)
	srv.SetModels("small", "tiny", "unsized")
	srv.SetParameterSize("small", "1.5B")
	srv.SetParameterSize("tiny", "494.03M")
	c := newClient(t, srv.URL, nil)
	for name, want := range map[string]int64{"small": 1_500_000_000, "tiny": 494_030_000, "unsized": 0} {
		info, err := c.ShowModel(t.Context(), name)
		if err != nil || info.ParameterCount != want {
			t.Errorf("ShowModel(%s) = %+v, %v; want %d parameters", name, info, err, want)
		}
	}
}
