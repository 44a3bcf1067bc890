package ollama

import (
	"context"
	"errors"

	"flow/runtime/model"
)

// Version returns the server's version (GET /api/version).
func (c *Client) Version(ctx context.Context) (string, error) {
	var v struct {
		Version *string `json:"version"`
	}
	if err := c.callJSON(ctx, "GET", "/api/version", nil, &v); err != nil {
		return "", err
	}
	if v.Version == nil {
		return "", errors.New("ollama: GET /api/version: response has no version")
	}
	return *v.Version, nil
}

// ListModels returns the installed models (GET /api/tags). The list carries
// names only; use [Client.ShowModel] for capabilities.
func (c *Client) ListModels(ctx context.Context) ([]model.ModelInfo, error) {
	var v struct {
		Models *[]struct {
			Name  string `json:"name"`
			Model string `json:"model"`
		} `json:"models"`
	}
	if err := c.callJSON(ctx, "GET", "/api/tags", nil, &v); err != nil {
		return nil, err
	}
	if v.Models == nil {
		return nil, errors.New("ollama: GET /api/tags: response has no models list")
	}
	out := make([]model.ModelInfo, 0, len(*v.Models))
	for _, m := range *v.Models {
		name := m.Name
		if name == "" {
			name = m.Model
		}
		out = append(out, model.ModelInfo{Name: name})
	}
	return out, nil
}

// ShowModel returns one model's capabilities (POST /api/show), such as
// "completion", "tools" and "thinking". An unknown model is an error that
// matches [model.ErrModelNotFound].
func (c *Client) ShowModel(ctx context.Context, name string) (model.ModelInfo, error) {
	if name == "" {
		return model.ModelInfo{}, errors.New("ollama: show: no model name")
	}
	var v struct {
		Capabilities []string `json:"capabilities"`
	}
	if err := c.callJSON(ctx, "POST", "/api/show", map[string]string{"model": name}, &v); err != nil {
		return model.ModelInfo{}, err
	}
	return model.ModelInfo{Name: name, Capabilities: v.Capabilities}, nil
}
