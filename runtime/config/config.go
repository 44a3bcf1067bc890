// Package config loads and validates flow's operator configuration (doc/design.md §3).
//
// Only two files are ever read: the file named by --config, or else the user
// file $XDG_CONFIG_HOME/flow/config.toml. A workspace's own config.toml or
// .flow.toml is never loaded; its presence only adds a warning. Trust never
// comes from a file.
package config

import "slices"

// Check kinds.
const (
	KindCheck       = "check"
	KindTest        = "test"
	KindLint        = "lint"
	KindTypecheck   = "typecheck"
	KindDiagnostics = "diagnostics"
	KindBuild       = "build"
)

// Roles.
const (
	RolePlanner  = "planner"
	RoleCoder    = "coder"
	RoleReviewer = "reviewer"
)

// Backend APIs.
const (
	APINative = "native" // Ollama's /api/chat
	APIOpenAI = "openai" // OpenAI-compatible /v1/chat/completions
)

// Config is the validated, effective configuration of one flow process.
type Config struct {
	// Workspace is the absolute, symlink-resolved workspace root.
	Workspace string `json:"workspace"`
	// ConfigPath is the absolute path of the loaded file, or "" when none was.
	ConfigPath string `json:"config_path"`
	// Trusted enables edits and named checks; only --trusted sets it.
	Trusted bool `json:"trusted"`

	// Ollama is the default server: the server of every role that
	// Roles does not send elsewhere.
	Ollama Ollama `json:"ollama"`
	// Servers are the other model servers, [servers.NAME], in file order
	// (doc/design.md §7.9).
	Servers []Server `json:"servers"`
	Models  Models   `json:"models"`
	// Roles chooses a server (and a model) for a role, [roles.ROLE], in
	// file order; a role not listed uses [ollama].
	Roles  []Role  `json:"roles"`
	Agent  Agent   `json:"agent"`
	Checks []Check `json:"checks"` // in file order
	Verify Verify  `json:"verify"`

	// Warnings are non-fatal findings, shown by flow status.
	Warnings []string `json:"warnings"`
}

// Ollama configures the model backend.
type Ollama struct {
	BaseURL       string  `json:"base_url"`
	Model         string  `json:"model"`
	API           string  `json:"api"`
	Temperature   float64 `json:"temperature"`
	ContextLength int     `json:"context_length"`
	Timeout       float64 `json:"timeout"` // seconds per model call
	AllowRemote   bool    `json:"allow_remote"`
	Think         bool    `json:"think"`
}

// DefaultServer is the name of the [ollama] table as a role's server.
const DefaultServer = "ollama"

// Server is one [servers.NAME] table: a model server besides [ollama],
// with the same keys (in JSON, beside its name).
type Server struct {
	Name string `json:"name"`
	Ollama
}

// Settings returns the server's values as an [Ollama] table.
func (s *Server) Settings() Ollama { return s.Ollama }

// NewServer returns the server name with the values of o.
func NewServer(name string, o Ollama) Server { return Server{Name: name, Ollama: o} }

// Role is one [roles.ROLE] table: the server a role's requests go to,
// and optionally its model there.
type Role struct {
	Name string `json:"name"`
	// Server names a [servers.NAME] table, or "ollama"; "" is "ollama".
	Server string `json:"server"`
	// Model, when set, is the role's model; else models.ROLE, else the
	// server's model.
	Model string `json:"model"`
}

// Models holds per-role model overrides; "" inherits the model of the
// role's server.
type Models struct {
	Planner  string `json:"planner"`
	Coder    string `json:"coder"`
	Reviewer string `json:"reviewer"`
}

// Agent holds the run budgets.
type Agent struct {
	MaxIterations   int `json:"max_iterations"`
	MaxCycles       int `json:"max_cycles"`
	MaxToolCalls    int `json:"max_tool_calls"`
	MaxContextChars int `json:"max_context_chars"`
	MaxTaskChars    int `json:"max_task_chars"`
	// Baseline runs the required checks once before the coder's first edit
	// so that the report can tell fixed, broken and pre-existing failures
	// apart. It costs one run of the required checks per run.
	Baseline bool `json:"baseline"`
	// BriefChars bounds the brief each role is handed up front: a map of
	// the source files and the text of the files the task most likely
	// concerns. 0 hands none (the roles navigate with the file tools).
	BriefChars int `json:"brief_chars"`
	// Planner is PlannerAuto (skip the planner of a trusted run when the
	// brief holds every source file of the workspace) or PlannerAlways.
	Planner string `json:"planner"`
	// AnswerCode applies the code blocks of a coder's answer that changed
	// no file, as the file_edit calls they stand for (package codeblock).
	AnswerCode bool `json:"answer_code"`
	// GoImports mends the imports of the Go files a coder changed, once
	// it has ended: the standard-library packages the code uses are
	// imported, and standard imports it does not use are removed
	// (package imports; doc/design.md §6.8).
	GoImports bool `json:"go_imports"`
	// EditFormat is how the coder changes files: EditTools (file_edit and
	// file_write calls), EditWhole (the answer holds the complete new text
	// of each changed file, in a fenced block named by its path) or
	// EditAuto (whole for a model the server says cannot call tools;
	// tools otherwise). "" means EditAuto.
	EditFormat string `json:"edit_format"`
	// ToolDeclarations is where the tools are declared to the model:
	// ToolsNative (the request's tools field, which the server's chat
	// template renders, besides the system prompt's list), ToolsText (the
	// system prompt's list alone; calls are read from the reply's text) or
	// ToolsAuto (text for a model the server says is small or cannot call
	// tools; native otherwise). "" means ToolsAuto (doc/design.md §6.5).
	ToolDeclarations string `json:"tool_declarations"`
	// Transcript keeps each model call's request messages and reply in
	// the run's journal (transcript.jsonl), to see why a run went as it
	// did. Off by default: it holds the workspace's text.
	Transcript bool `json:"transcript"`
	// RetryTemperature is the sampling temperature of a coder request
	// that follows a coder reply which changed no file and called no
	// tool: asked again at ollama.temperature, a small model gives the
	// same reply back (doc/design.md §6.6). Below ollama.temperature,
	// ollama.temperature is used; equal to it, the rule is off.
	RetryTemperature float64 `json:"retry_temperature"`
}

// The values of agent.planner.
const (
	PlannerAuto   = "auto"
	PlannerAlways = "always"
)

// The values of agent.edit_format.
const (
	EditAuto  = "auto"
	EditTools = "tools"
	EditWhole = "whole"
)

// The values of agent.tool_declarations.
const (
	ToolsAuto   = "auto"
	ToolsNative = "native"
	ToolsText   = "text"
)

// Check is one named check.
type Check struct {
	Name      string   `json:"name"`
	Cmd       []string `json:"cmd"`
	Timeout   int      `json:"timeout"` // milliseconds
	Required  bool     `json:"required"`
	Kind      string   `json:"kind"`
	Filetypes []string `json:"filetypes"`
	// Env, when non-nil, is the allowlist of environment variables passed to
	// the check; nil inherits flow's whole environment.
	Env []string `json:"env,omitempty"`
}

// Default returns the built-in configuration (the reference program's
// defaults) with no workspace resolved and no checks.
func Default() Config {
	return Config{
		Ollama: Ollama{
			BaseURL:       "http://127.0.0.1:11434",
			Model:         "qwen2.5-coder:7b",
			API:           APINative,
			Temperature:   0.2,
			ContextLength: 16384,
			Timeout:       120,
		},
		Agent: Agent{
			MaxIterations:    6,
			MaxCycles:        2,
			MaxToolCalls:     64,
			MaxContextChars:  100000,
			MaxTaskChars:     16000,
			Baseline:         true,
			BriefChars:       8000,
			Planner:          PlannerAuto,
			AnswerCode:       true,
			GoImports:        true,
			RetryTemperature: 0.8,
			EditFormat:       EditAuto,
			ToolDeclarations: ToolsAuto,
		},
		Verify:   Verify{Reviewer: ReviewerGate},
		Servers:  []Server{},
		Roles:    []Role{},
		Checks:   []Check{},
		Warnings: []string{},
	}
}

// Roles lists the roles in the order a run meets them.
var Roles = []string{RolePlanner, RoleCoder, RoleReviewer}

// ModelFor returns the effective model of role: [roles.ROLE] model, else
// models.ROLE, else the model of the role's server.
func (c *Config) ModelFor(role string) string {
	if r := c.roleTable(role); r != nil && r.Model != "" {
		return r.Model
	}
	if m := modelsKey(&c.Models, role); m != "" {
		return m
	}
	_, o, _ := c.ServerFor(role)
	return o.Model
}

// ServerFor returns the name and values of role's server: [ollama]
// ("ollama") unless [roles.ROLE] names a [servers.NAME] table. ok is false
// when it names a server that is not defined, which a validated
// configuration never does; o is then [ollama]'s, for messages only.
func (c *Config) ServerFor(role string) (name string, o Ollama, ok bool) {
	r := c.roleTable(role)
	if r == nil || r.Server == "" || r.Server == DefaultServer {
		return DefaultServer, c.Ollama, true
	}
	if s := c.Server(r.Server); s != nil {
		return s.Name, s.Settings(), true
	}
	return r.Server, c.Ollama, false
}

// Server returns the [servers.NAME] table name, or nil.
func (c *Config) Server(name string) *Server {
	for i := range c.Servers {
		if c.Servers[i].Name == name {
			return &c.Servers[i]
		}
	}
	return nil
}

// roleTable returns role's [roles.ROLE] table, or nil.
func (c *Config) roleTable(role string) *Role {
	for i := range c.Roles {
		if c.Roles[i].Name == role {
			return &c.Roles[i]
		}
	}
	return nil
}

// UseModel makes every role use the model name on its own server
// (--model, the TUI's /model): ollama.model and every server's model
// become name, and no role or [models] key overrides it.
func (c *Config) UseModel(name string) {
	c.Ollama.Model = name
	c.Models = Models{}
	// Copies: a Config's copies share its slices.
	c.Servers, c.Roles = slices.Clone(c.Servers), slices.Clone(c.Roles)
	for i := range c.Servers {
		c.Servers[i].Model = name
	}
	for i := range c.Roles {
		c.Roles[i].Model = ""
	}
}

// Protected returns the absolute paths no file tool may write: the loaded
// configuration file and the workspace's config.toml and .flow.toml.
func (c *Config) Protected() []string {
	p := []string{c.Workspace + "/config.toml", c.Workspace + "/.flow.toml"}
	if c.ConfigPath != "" {
		p = append(p, c.ConfigPath)
	}
	return p
}
