package ollama_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"flow/runtime/model"
	"flow/runtime/model/ollamatest"
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
