package ollama

import (
	"context"
	"strings"
	"time"
)

// probeTimeout bounds each request of ServerWindow but the model load: a
// server that does not answer quickly is asked nothing more, and the window
// stays unknown.
const probeTimeout = 5 * time.Second

// ServerWindow returns the context window in tokens the server runs name
// with when the client does not choose it — the window a request on the
// OpenAI-compatible API gets, and what the server truncates its prompt to —
// and the endpoint that said so; 0 and "" when no endpoint does
// (doc/design.md §7.7). Three servers are understood:
//
//   - Ollama (GET /api/version answers): the model is loaded with the
//     server's default options, as a /v1 request would load it (an empty
//     POST /api/generate, which is instant when it already is), and GET
//     /api/ps lists the window it was loaded with. A model a native client
//     loaded with another num_ctx is reloaded, as the first /v1 call would.
//   - llama.cpp's llama-server: one window per slot (GET /props,
//     default_generation_settings.n_ctx).
//   - vLLM: max_model_len with its models (GET /v1/models).
func (c *Client) ServerWindow(ctx context.Context, name string) (int, string) {
	if c.probe(ctx, "GET", "/api/version", nil, &struct{}{}) == nil {
		return c.ollamaWindow(ctx, name)
	}
	var props struct {
		NCtx    int `json:"n_ctx"`
		Default struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	if err := c.probe(ctx, "GET", "/props", nil, &props); err == nil {
		if n := max(props.Default.NCtx, props.NCtx); n > 0 {
			return n, "GET /props"
		}
	}
	var models struct {
		Data []struct {
			ID          string `json:"id"`
			MaxModelLen int    `json:"max_model_len"`
		} `json:"data"`
	}
	if err := c.probe(ctx, "GET", "/v1/models", nil, &models); err == nil {
		for _, m := range models.Data {
			if sameModel(m.ID, name) && m.MaxModelLen > 0 {
				return m.MaxModelLen, "GET /v1/models (max_model_len)"
			}
		}
	}
	return 0, ""
}

// ollamaWindow loads name with Ollama's defaults and reads its window from
// GET /api/ps. Loading takes as long as the first call would have (the
// client's timeout bounds it); a model the server cannot load leaves the
// window unknown, and the first call reports why.
func (c *Client) ollamaWindow(ctx context.Context, name string) (int, string) {
	var loaded struct {
		Done bool `json:"done"`
	}
	if err := c.callJSON(ctx, "POST", "/api/generate", map[string]any{"model": name}, &loaded); err != nil || !loaded.Done {
		return 0, ""
	}
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	models, err := c.LoadedModels(pctx)
	if err != nil {
		return 0, ""
	}
	for _, m := range models {
		if sameModel(m.Name, name) && m.ContextLength > 0 {
			return m.ContextLength, "GET /api/ps"
		}
	}
	return 0, ""
}

// probe makes one quick probe request (callJSON within probeTimeout).
func (c *Client) probe(ctx context.Context, method, path string, body, out any) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	return c.callJSON(ctx, method, path, body, out)
}

// sameModel reports whether two model names are the same model: Ollama
// adds ":latest" to a name without a tag.
func sameModel(a, b string) bool {
	trim := func(s string) string { return strings.TrimSuffix(s, ":latest") }
	return a == b || trim(a) == trim(b)
}
