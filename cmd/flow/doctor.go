package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"flow/runtime/config"
	"flow/runtime/report"
)

// doctorReport is the output of `flow doctor`.
type doctorReport struct {
	Status     string  `json:"status"`
	Version    string  `json:"version"`
	Workspace  string  `json:"workspace"`
	ConfigPath *string `json:"config_path"`
	// UserConfig is the user file, read when --config is not given (and it
	// exists), so that a health check can say where to create one.
	UserConfig string `json:"user_config"`
	// Backend is the first of Servers (the planner's server), as before
	// there were several.
	Backend doctorBackend `json:"backend"`
	// Servers are the servers the roles use, in role order, each with
	// its roles (doc/design.md §7.9).
	Servers  []doctorBackend `json:"servers"`
	Models   []doctorModel   `json:"models"`
	Checks   []doctorCheck   `json:"checks"`
	Warnings []string        `json:"warnings"`
	LogFile  string          `json:"log_file"`
}

type doctorBackend struct {
	// Name is "ollama" for the [ollama] table, else a [servers.NAME]
	// table's name; Roles are the roles sent to it.
	Name    string   `json:"name"`
	Roles   []string `json:"roles"`
	Status  string   `json:"status"`
	API     string   `json:"api"`
	BaseURL string   `json:"base_url"`
	// Server is "ollama", or "openai-compatible" for a server without
	// Ollama's API (llama-server, vLLM); "" when unreachable.
	Server  string `json:"server,omitempty"`
	Version string `json:"version,omitempty"`
	Error   string `json:"error,omitempty"`
}

type doctorModel struct {
	Roles        []string `json:"roles"`
	Model        string   `json:"model"`
	Server       string   `json:"server"`
	Status       string   `json:"status"`
	Tools        bool     `json:"tools"`
	Capabilities []string `json:"capabilities"`
	// ContextLength is the model's own context length, as the server
	// reports it (0: not reported).
	ContextLength int `json:"context_length,omitempty"`
	// ContextWindow is the window the server runs the model with, in
	// tokens, where it can be known (0: unknown; ContextNote says why).
	ContextWindow int    `json:"context_window,omitempty"`
	ContextNote   string `json:"context_note,omitempty"`
	Error         string `json:"error,omitempty"`
}

type doctorCheck struct {
	Name       string `json:"name"`
	Executable string `json:"executable"`
	Path       string `json:"path,omitempty"`
	Status     string `json:"status"`
	Error      string `json:"error,omitempty"`
}

// cmdDoctor implements `flow doctor`: contact the backend (what server it
// is, each role's model present, able to call tools and to think when
// think = true, and its context window) and look up each check's
// executable. It runs no check.
func cmdDoctor(ctx context.Context, e *env) (any, string, error) {
	rt, err := openRuntime(e, false)
	if err != nil {
		return nil, "", err
	}
	defer rt.Close()
	cfg := rt.cfg
	rep := doctorReport{
		Status: report.StatusOK, Version: flowVersion(), Workspace: cfg.Workspace,
		Servers:    []doctorBackend{},
		Models:     []doctorModel{},
		Checks:     []doctorCheck{},
		Warnings:   append([]string{}, cfg.Warnings...),
		LogFile:    e.getenv("FLOW_LOG_FILE"),
		UserConfig: config.UserFile(e.getenv),
	}
	if cfg.ConfigPath != "" {
		p := cfg.ConfigPath
		rep.ConfigPath = &p
	}
	fail := func() { rep.Status = report.StatusFailed }

	for _, g := range serverGroups(cfg) {
		db := doctorBackend{Name: g.name, Roles: g.roles, API: g.o.API, BaseURL: g.o.BaseURL}
		models, warnings := probeBackend(ctx, rt.client(g.roles[0]), g, &db)
		rep.Servers = append(rep.Servers, db)
		rep.Models = append(rep.Models, models...)
		rep.Warnings = append(rep.Warnings, warnings...)
		if db.Status != report.StatusOK {
			fail()
		}
	}
	rep.Backend = rep.Servers[0]
	for _, dm := range rep.Models {
		if dm.Status != report.StatusOK {
			fail()
		}
	}
	for _, c := range cfg.Checks {
		dc := doctorCheck{Name: c.Name, Executable: c.Cmd[0]}
		if p, err := lookCheckPath(cfg.Workspace, c.Cmd[0]); err != nil {
			dc.Status, dc.Error = report.StatusUnavailable, err.Error()
			fail()
		} else {
			dc.Status, dc.Path = report.StatusOK, p
		}
		rep.Checks = append(rep.Checks, dc)
	}
	return rep, rep.Status, nil
}

// serverGroup is one server the roles use: its name, its values (table
// names it in messages) and its roles with their models.
type serverGroup struct {
	name, table string
	o           config.Ollama
	roles       []string
	models      []doctorModel // grouped by model, in role order
}

// serverGroups groups the roles by server, and each server's roles by
// model, in role order: doctor checks every server a role uses, and no
// other.
func serverGroups(cfg *config.Config) []serverGroup {
	var out []serverGroup
	for _, role := range config.Roles {
		name, o, _ := cfg.ServerFor(role)
		i := slices.IndexFunc(out, func(g serverGroup) bool { return g.name == name })
		if i < 0 {
			table := config.DefaultServer
			if name != config.DefaultServer {
				table = "servers." + name
			}
			out = append(out, serverGroup{name: name, table: table, o: o})
			i = len(out) - 1
		}
		g := &out[i]
		g.roles = append(g.roles, role)
		m := cfg.ModelFor(role)
		if j := slices.IndexFunc(g.models, func(dm doctorModel) bool { return dm.Model == m }); j >= 0 {
			g.models[j].Roles = append(g.models[j].Roles, role)
		} else {
			g.models = append(g.models, doctorModel{Roles: []string{role}, Model: m, Server: name})
		}
	}
	return out
}

// lookCheckPath resolves a check's executable the way the check runner does:
// a name with a slash is relative to the workspace, anything else is looked
// up on PATH.
func lookCheckPath(root, exe string) (string, error) {
	if strings.Contains(exe, "/") {
		p := exe
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		st, err := os.Stat(p)
		if err != nil {
			return "", err
		}
		if st.IsDir() || st.Mode()&0o111 == 0 {
			return "", &exec.Error{Name: exe, Err: exec.ErrNotFound}
		}
		return p, nil
	}
	return exec.LookPath(exe)
}
