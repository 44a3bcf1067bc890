package ollama_test

import (
	"testing"

	"flow/internal/test/ollamatest"
	"flow/runtime/model"
	"flow/runtime/model/ollama"
)

var _ model.WindowProber = (*ollama.Client)(nil)

// TestServerWindow asks the scripted server, dressed as each of the three
// servers flow understands, for the window it runs a model with.
func TestServerWindow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		setup      func(*ollamatest.Server)
		model      string
		want       int
		wantSource string
		wantLoad   bool
	}{
		{"ollama loads the model with its defaults, then lists it", func(s *ollamatest.Server) {
			s.SetModels("qwen:1.5b")
			s.SetLoadContext(8192)
		}, "qwen:1.5b", 8192, "GET /api/ps", true},
		{"ollama, loaded earlier with another window: reloaded as /v1 would", func(s *ollamatest.Server) {
			s.SetModels("qwen:1.5b")
			s.SetLoaded("qwen:1.5b", 32768)
			s.SetLoadContext(4096)
		}, "qwen:1.5b", 4096, "GET /api/ps", true},
		{"ollama, a name without its :latest tag", func(s *ollamatest.Server) {
			s.SetModels("qwen:latest")
			s.SetLoadContext(2048)
		}, "qwen", 2048, "GET /api/ps", true},
		{"ollama, a model it does not have", func(s *ollamatest.Server) {
			s.SetModels("other:1b")
		}, "qwen:1.5b", 0, "", true},
		{"llama-server: one window per slot", func(s *ollamatest.Server) {
			s.SetOpenAIOnly(true)
			s.SetSlotContext(4096)
		}, "qwen", 4096, "GET /props", false},
		{"vLLM: max_model_len with the model", func(s *ollamatest.Server) {
			s.SetOpenAIOnly(true)
			s.SetModels("qwen")
			s.SetMaxModelLen("qwen", 12288)
		}, "qwen", 12288, "GET /v1/models (max_model_len)", false},
		{"a server that says nothing", func(s *ollamatest.Server) {
			s.SetOpenAIOnly(true)
			s.SetModels("qwen")
		}, "qwen", 0, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := ollamatest.New(t)
			tc.setup(srv)
			c := newClient(t, srv.URL, func(o *ollama.Options) { o.API = "openai" })
			got, src := c.ServerWindow(t.Context(), tc.model)
			if got != tc.want || src != tc.wantSource {
				t.Errorf("ServerWindow(%q) = %d, %q; want %d, %q", tc.model, got, src, tc.want, tc.wantSource)
			}
			var loads int
			for _, r := range srv.Requests() {
				if r.Path == "/api/generate" {
					loads++
					if r.Body["model"] != tc.model || r.Body["prompt"] != nil || r.Body["options"] != nil {
						t.Errorf("load request %v, want only the model (the server's default options)", r.Body)
					}
				}
			}
			if (loads == 1) != tc.wantLoad || loads > 1 {
				t.Errorf("%d load requests, want load %t", loads, tc.wantLoad)
			}
		})
	}
}
