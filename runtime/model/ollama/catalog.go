package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"flow/runtime/model"
)

// ErrNotOllama is returned by [Client.Version] when the server has no
// Ollama API (GET /api/version is 404): an OpenAI-compatible server such
// as llama.cpp's llama-server or vLLM.
var ErrNotOllama = errors.New("the server has no Ollama API (GET /api/version: 404); it is an OpenAI-compatible server other than Ollama")

// Version returns the server's version (GET /api/version). A server
// without Ollama's API gives an error matching [ErrNotOllama].
func (c *Client) Version(ctx context.Context) (string, error) {
	var v struct {
		Version *string `json:"version"`
	}
	if err := c.callJSON(ctx, "GET", "/api/version", nil, &v); err != nil {
		if se := (*statusError)(nil); errors.As(err, &se) && se.code == http.StatusNotFound {
			return "", fmt.Errorf("ollama: %w", ErrNotOllama)
		}
		return "", err
	}
	if v.Version == nil {
		return "", errors.New("ollama: GET /api/version: response has no version")
	}
	return *v.Version, nil
}

// ListModels returns the installed models: GET /api/tags with the native
// API, GET /v1/models with the OpenAI-compatible one (which llama-server
// and vLLM serve too). The list carries names only; use [Client.ShowModel]
// for capabilities.
func (c *Client) ListModels(ctx context.Context) ([]model.ModelInfo, error) {
	if c.opts.API == apiOpenAI {
		return c.listOpenAIModels(ctx)
	}
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

// listOpenAIModels reads GET /v1/models: {"object":"list","data":[{"id":…}]}.
func (c *Client) listOpenAIModels(ctx context.Context) ([]model.ModelInfo, error) {
	var v struct {
		Data *[]struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := c.callJSON(ctx, "GET", "/v1/models", nil, &v); err != nil {
		return nil, err
	}
	if v.Data == nil {
		return nil, errors.New("ollama: GET /v1/models: response has no data list")
	}
	out := make([]model.ModelInfo, 0, len(*v.Data))
	for _, m := range *v.Data {
		if m.ID != "" {
			out = append(out, model.ModelInfo{Name: m.ID})
		}
	}
	return out, nil
}

// ShowModel returns one model's capabilities, such as "completion",
// "tools" and "thinking", and its own context length (POST /api/show:
// capabilities, and model_info's "<architecture>.context_length"). An
// unknown model is an error that matches [model.ErrModelNotFound].
func (c *Client) ShowModel(ctx context.Context, name string) (model.ModelInfo, error) {
	if name == "" {
		return model.ModelInfo{}, errors.New("ollama: show: no model name")
	}
	var v struct {
		Capabilities []string                   `json:"capabilities"`
		ModelInfo    map[string]json.RawMessage `json:"model_info"`
		Details      struct {
			ParameterSize string `json:"parameter_size"`
		} `json:"details"`
	}
	if err := c.callJSON(ctx, "POST", "/api/show", map[string]string{"model": name}, &v); err != nil {
		return model.ModelInfo{}, err
	}
	return model.ModelInfo{Name: name, Capabilities: v.Capabilities, ContextLength: contextLength(v.ModelInfo),
		ParameterCount: parameterCount(v.ModelInfo, v.Details.ParameterSize)}, nil
}

// parameterCount is the model's size: model_info's general.parameter_count,
// else details' parameter_size as Ollama writes it ("1.5B", "494.03M");
// 0 when neither says.
func parameterCount(info map[string]json.RawMessage, size string) int64 {
	var n float64
	if json.Unmarshal(info["general.parameter_count"], &n) == nil && n >= 1 {
		return int64(n)
	}
	unit := map[string]float64{"K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}
	size = strings.TrimSpace(size)
	if len(size) < 2 || unit[strings.ToUpper(size[len(size)-1:])] == 0 {
		return 0
	}
	v, err := strconv.ParseFloat(size[:len(size)-1], 64)
	if err != nil || v <= 0 {
		return 0
	}
	return int64(v * unit[strings.ToUpper(size[len(size)-1:])])
}

// contextLength finds the model's context length in /api/show's
// model_info: the key "<general.architecture>.context_length", else the
// only key ending in ".context_length". 0 when there is none or it is not
// a positive integer.
func contextLength(info map[string]json.RawMessage) int {
	key := ""
	var arch string
	if json.Unmarshal(info["general.architecture"], &arch) == nil && arch != "" {
		if _, ok := info[arch+".context_length"]; ok {
			key = arch + ".context_length"
		}
	}
	if key == "" {
		for k := range info {
			if strings.HasSuffix(k, ".context_length") {
				if key != "" {
					return 0 // ambiguous
				}
				key = k
			}
		}
	}
	var n float64
	if key == "" || json.Unmarshal(info[key], &n) != nil || n < 1 || n != float64(int(n)) {
		return 0
	}
	return int(n)
}

// LoadedModels returns the models the server holds in memory and the
// context window each was loaded with (GET /api/ps): the window the server
// truncates prompts to, which with the OpenAI-compatible API is the
// server's default rather than context_length.
func (c *Client) LoadedModels(ctx context.Context) ([]model.LoadedModel, error) {
	var v struct {
		Models *[]struct {
			Name          string `json:"name"`
			Model         string `json:"model"`
			ContextLength int    `json:"context_length"`
		} `json:"models"`
	}
	if err := c.callJSON(ctx, "GET", "/api/ps", nil, &v); err != nil {
		return nil, err
	}
	if v.Models == nil {
		return nil, errors.New("ollama: GET /api/ps: response has no models list")
	}
	out := make([]model.LoadedModel, 0, len(*v.Models))
	for _, m := range *v.Models {
		name := m.Name
		if name == "" {
			name = m.Model
		}
		out = append(out, model.LoadedModel{Name: name, ContextLength: max(m.ContextLength, 0)})
	}
	return out, nil
}
