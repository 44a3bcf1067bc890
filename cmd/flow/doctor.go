package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"flow/runtime/agent"
	"flow/runtime/config"
	"flow/runtime/measure"
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
	// Reviewer is what is known of the reviewer's judgement; with
	// --reviewer, the measurement just taken and its cases.
	Reviewer *doctorReviewer `json:"reviewer,omitempty"`
}

// doctorReviewer is the reviewer's standing, and with --reviewer each
// case's result (doc/design.md §8.10).
type doctorReviewer struct {
	report.ReviewerStanding
	Results []measure.Result `json:"results,omitempty"`
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
	if e.opts.measureReviewer {
		if err := measureReviewer(ctx, e, rt, &rep); err != nil {
			return nil, "", err
		}
	} else if rt.measures.Path != "" {
		rep.Reviewer = &doctorReviewer{ReviewerStanding: rt.measures.Standing(cfg)}
	}
	return rep, rep.Status, nil
}

// measureReviewer is doctor --reviewer: the embedded cases against the
// configured reviewer, one progress line a case on stderr, the figures
// kept in flow's state. A reviewer whose server doctor found failing is
// not measured; a reviewer that does not discriminate is a warning.
func measureReviewer(ctx context.Context, e *env, rt *workspaceRuntime, rep *doctorReport) error {
	cfg := rt.cfg
	name, srv, _ := cfg.ServerFor(config.RoleReviewer)
	for _, s := range rep.Servers {
		if s.Name == name && s.Status != report.StatusOK {
			rep.Status = report.StatusFailed
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("The reviewer was not measured: its server %s does not answer (%s); start it and run flow doctor --reviewer again.", name, s.Error))
			return nil
		}
	}
	cases, err := measure.Cases()
	if err != nil {
		return err
	}
	model := cfg.ModelFor(config.RoleReviewer)
	fmt.Fprintf(e.stderr, "flow: measuring the reviewer %s on %s with %d labelled changes\n", model, name, len(cases))
	m, results, err := measure.Run(ctx, measure.Options{
		Config: cfg, Reviewer: rt.client(config.RoleReviewer), Cases: cases,
		Progress: func(i, n int, c measure.Case, r *measure.Result) {
			if r == nil {
				return
			}
			mark := "✓"
			switch {
			case !r.Judged:
				mark = "not judged: " + r.NotJudged
			case !r.Right():
				mark = "✗"
			}
			fmt.Fprintf(e.stderr, "flow: reviewer case %d/%d %s (%s): %s %s %.0fs\n", i+1, n, c.ID(), c.Label, r.Verdict, mark, float64(r.WallMS)/1000)
		},
	})
	if err != nil {
		return fmt.Errorf("the reviewer's measurement stopped after %d cases: %w", len(results), err)
	}
	st := report.ReviewerStanding{Server: name, Model: model, Prompt: agent.ReviewerPromptVersion(), Measured: &m, Note: m.Sentence}
	rep.Reviewer = &doctorReviewer{ReviewerStanding: st, Results: results}
	if rt.measures.Path == "" {
		rep.Warnings = append(rep.Warnings, "The measurement is not kept: flow has no state directory (set XDG_STATE_HOME).")
	} else if err := rt.measures.Save(measure.Record{BaseURL: srv.BaseURL, Model: model, Prompt: st.Prompt, Temperature: &srv.Temperature, Server: name, Measured: m, Results: results}); err != nil {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("The measurement is not kept: %v.", err))
	}
	if !m.Discriminates {
		rep.Warnings = append(rep.Warnings, m.Sentence)
	}
	return nil
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
