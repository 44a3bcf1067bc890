package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"flow/runtime/config"
	"flow/runtime/model"
	"flow/runtime/model/ollama"
	"flow/runtime/report"
)

const (
	serverOllama = "ollama"
	serverOpenAI = "openai-compatible"
)

// probeBackend checks one server the roles use and returns its models,
// each checked, and the warnings found: whether the server answers,
// whether it is Ollama, and for each of its roles' models whether the
// server has it, whether it can call tools (and think, if think = true),
// and the context window it runs with.
//
// With api = "native" the server must be Ollama. With api = "openai" the
// server is asked for GET /v1/models, which every OpenAI-compatible server
// serves; Ollama's own checks (capabilities, context windows) run only
// when the server also answers GET /api/version.
func probeBackend(ctx context.Context, c *ollama.Client, g serverGroup, db *doctorBackend) (models []doctorModel, warnings []string) {
	models = slices.Clone(g.models)
	unreachable := func(err error) {
		db.Status, db.Error = report.StatusUnavailable, err.Error()
		for i := range models {
			models[i].Status, models[i].Error = report.StatusUnavailable, "backend unreachable"
		}
	}
	defer func() {
		for i := range models {
			if models[i].Capabilities == nil {
				models[i].Capabilities = []string{}
			}
		}
	}()

	var listed []model.ModelInfo
	if g.o.API == config.APIOpenAI {
		var err error
		if listed, err = c.ListModels(ctx); err != nil {
			unreachable(err)
			return models, nil
		}
	}
	version, err := c.Version(ctx)
	switch {
	case err == nil:
		db.Status, db.Server, db.Version = report.StatusOK, serverOllama, version
	case g.o.API == config.APIOpenAI:
		// /v1/models answered: an OpenAI-compatible server that is not
		// Ollama (or whose /api/version failed: treated the same).
		db.Status, db.Server = report.StatusOK, serverOpenAI
	case errors.Is(err, ollama.ErrNotOllama):
		unreachable(fmt.Errorf("%v; set api = \"openai\" in [%s] to use it", err, g.table))
		return models, nil
	default:
		unreachable(err)
		return models, nil
	}

	if db.Server != serverOllama {
		for i := range models {
			checkListedModel(&models[i], listed)
		}
		return models, nil
	}
	var loaded []model.LoadedModel
	if g.o.API == config.APIOpenAI {
		loaded, _ = c.LoadedModels(ctx) // an old server without /api/ps: the window stays unknown
	}
	for i := range models {
		for _, w := range checkOllamaModel(ctx, c, g, &models[i], loaded) {
			if g.name != config.DefaultServer {
				// Which server, and whose: [ollama]'s keep their old wording.
				w = fmt.Sprintf("[%s] (%s): %s", g.table, strings.Join(models[i].Roles, ", "), w)
			}
			warnings = append(warnings, w)
		}
	}
	return models, warnings
}

// checkListedModel checks a model against an OpenAI-compatible server's
// model list; such a server reports neither capabilities nor windows.
func checkListedModel(dm *doctorModel, listed []model.ModelInfo) {
	names := make([]string, len(listed))
	for i, m := range listed {
		names[i] = m.Name
	}
	if !slices.Contains(names, dm.Model) {
		dm.Status = report.StatusUnavailable
		dm.Error = fmt.Sprintf("the server does not list the model %q (GET /v1/models lists %s); set the model to one it serves", dm.Model, listing(names))
		return
	}
	dm.Status = report.StatusOK
	dm.ContextNote = "the server does not report its context window (not Ollama); make sure it is at least context_length"
}

// checkOllamaModel checks one model on an Ollama server and returns the
// warnings it found.
func checkOllamaModel(ctx context.Context, c *ollama.Client, g serverGroup, dm *doctorModel, loaded []model.LoadedModel) []string {
	info, err := c.ShowModel(ctx, dm.Model)
	if errors.Is(err, model.ErrModelNotFound) {
		dm.Status = report.StatusUnavailable
		dm.Error = fmt.Sprintf("the server does not have the model %q; run `ollama pull %s`, or set the model to an installed one (`ollama list`)", dm.Model, dm.Model)
		return nil
	}
	if err != nil {
		dm.Status, dm.Error = report.StatusUnavailable, err.Error()
		return nil
	}
	dm.Capabilities = info.Capabilities
	dm.Tools = slices.Contains(info.Capabilities, "tools")
	dm.ContextLength = info.ContextLength
	dm.Status = report.StatusOK
	var problems []string
	if !dm.Tools {
		problems = append(problems, "the model does not report tool-calling support; pick a tool-capable model")
	}
	// think is sent only with the native API; the server refuses it (HTTP
	// 400 "does not support thinking") for a model without the capability.
	if g.o.API != config.APIOpenAI && g.o.Think && !slices.Contains(info.Capabilities, "thinking") {
		problems = append(problems, fmt.Sprintf(`think = true but the model does not report the "thinking" capability, so the server would refuse every call; set think = false in [%s] or pick a thinking model`, g.table))
	}
	if len(problems) > 0 {
		dm.Status, dm.Error = report.StatusFailed, strings.Join(problems, "; ")
	}
	return contextWindow(g.o, dm, loaded)
}

// contextWindow sets the model's effective context window and says how it
// was found, or why it cannot be known; it returns a warning when prompts
// up to context_length would be cut by the server.
func contextWindow(o config.Ollama, dm *doctorModel, loaded []model.LoadedModel) []string {
	want := o.ContextLength
	if o.API != config.APIOpenAI {
		dm.ContextWindow = want
		dm.ContextNote = "context_length, sent as num_ctx with every call"
		if dm.ContextLength > 0 && want > dm.ContextLength {
			dm.ContextWindow = dm.ContextLength
			dm.ContextNote = "the model's own context length: the server caps num_ctx to it"
			return []string{fmt.Sprintf("context_length %d exceeds the context length of %s (%d tokens); the server runs it with %d, so lower context_length to %d or pick a model with a longer context",
				want, dm.Model, dm.ContextLength, dm.ContextLength, dm.ContextLength)}
		}
		return nil
	}
	i := slices.IndexFunc(loaded, func(m model.LoadedModel) bool { return sameModel(m.Name, dm.Model) })
	if i < 0 || loaded[i].ContextLength == 0 {
		dm.ContextNote = `unknown until the model is loaded: with api = "openai" Ollama ignores context_length and uses its own default (OLLAMA_CONTEXT_LENGTH, often 4096); run a task and rerun flow doctor to see it`
		return nil
	}
	dm.ContextWindow = loaded[i].ContextLength
	dm.ContextNote = "the window the server loaded the model with (GET /api/ps)"
	if dm.ContextWindow < want {
		return []string{fmt.Sprintf(`the server runs %s with a %d-token window, below context_length %d, and silently truncates longer prompts; start the server with OLLAMA_CONTEXT_LENGTH=%d, or use api = "native"`,
			dm.Model, dm.ContextWindow, want, want)}
	}
	return nil
}

// sameModel reports whether two Ollama model names are the same model
// ("m" is "m:latest").
func sameModel(a, b string) bool {
	norm := func(s string) string {
		if !strings.Contains(s, ":") {
			return s + ":latest"
		}
		return s
	}
	return norm(a) == norm(b)
}

// listing names up to 10 models, for a message.
func listing(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	if len(names) > 10 {
		return strings.Join(names[:10], ", ") + fmt.Sprintf(" and %d more", len(names)-10)
	}
	return strings.Join(names, ", ")
}
