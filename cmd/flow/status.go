package main

import (
	"context"

	"flow/runtime/config"
	"flow/runtime/report"
)

// cmdStatus implements `flow status`: the effective configuration and the
// workspace's state. It never contacts the model.
func cmdStatus(ctx context.Context, e *env) (any, string, error) {
	cfg, err := loadConfig(e)
	if err != nil {
		return nil, "", err
	}
	st := buildStatus(cfg)
	disk, err := openWorkspace(cfg)
	if err != nil {
		return nil, "", err
	}
	defer disk.Close()
	st.Capabilities.FileIO = disk.Mode()
	if err := disk.CheckRoot(ctx); err != nil {
		st.Status = report.StatusStale
		st.Error = err.Error()
	}
	return st, st.Status, nil
}

// buildStatus renders the configuration part of a status report.
func buildStatus(cfg *config.Config) *report.Status {
	noEditor := "No editor bridge configured"
	st := &report.Status{
		Status:    report.StatusOK,
		Version:   flowVersion(),
		Workspace: cfg.Workspace,
		Trusted:   cfg.Trusted,
		Backend: report.Backend{
			Type:         "ollama",
			API:          cfg.Ollama.API,
			BaseURL:      cfg.Ollama.BaseURL,
			Connectivity: "unverified",
			Note:         "status does not contact the model",
		},
		Models: report.Models{
			Planner:  cfg.ModelFor(config.RolePlanner),
			Coder:    cfg.ModelFor(config.RoleCoder),
			Reviewer: cfg.ModelFor(config.RoleReviewer),
		},
		Checks:   []report.CheckSummary{},
		Editor:   report.Editor{Status: report.StatusUnavailable, Tools: []string{}, Error: &noEditor},
		Warnings: append([]string{}, cfg.Warnings...),
		Capabilities: report.Capabilities{
			SingleWriter:        true,
			ReadOnlyConcurrency: 1,
		},
	}
	if cfg.ConfigPath != "" {
		p := cfg.ConfigPath
		st.ConfigPath = &p
	}
	for _, c := range cfg.Checks {
		ft := c.Filetypes
		if ft == nil {
			ft = []string{}
		}
		st.Checks = append(st.Checks, report.CheckSummary{Name: c.Name, Required: c.Required, Kind: c.Kind, Filetypes: ft})
	}
	return st
}
