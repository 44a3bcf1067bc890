package config

import (
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// parsed is one configuration file decoded onto the defaults.
type parsed struct {
	cfg Config
	// workspaceDir is the file's workspace_dir, meaningful when hasWorkspace.
	workspaceDir string
	hasWorkspace bool
}

// parse decodes a TOML document strictly. A syntax error is returned as the
// TOML library's error; schema problems as an *Error. The document is
// decoded into generic values first so that types are checked exactly: TOML
// distinguishes 1, 1.0 and true, and so does flow.
//
// A document nested deeper than [MaxNesting] is refused before the decoder
// sees it.
func parse(data []byte) (*parsed, error) {
	if err := checkNesting(data); err != nil {
		return nil, err
	}
	var root map[string]any
	md, err := toml.Decode(string(data), &root)
	if err != nil {
		return nil, err
	}
	d := decoder{out: parsed{cfg: Default()}}
	d.root(root, md.Keys())
	if err := d.p.err(); err != nil {
		return nil, err
	}
	return &d.out, nil
}

// decoder accumulates problems while copying checked values into out.
type decoder struct {
	p   problems
	out parsed
}

// Allowed keys of each table.
var (
	rootKeys   = []string{"workspace_dir", "ollama", "servers", "models", "roles", "agent", "checks", "verify"}
	ollamaKeys = []string{"base_url", "model", "api", "temperature", "context_length", "timeout", "allow_remote", "think"}
	modelsKeys = []string{RolePlanner, RoleCoder, RoleReviewer}
	checkKeys  = []string{"cmd", "timeout", "required", "kind", "filetypes", "env"}
)

// unknownKeys returns the keys of t not in allowed, sorted.
func unknownKeys(t map[string]any, allowed []string) []string {
	var out []string
	for k := range t {
		if !slices.Contains(allowed, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// rejectUnknown records an "Unknown <name> options" problem.
func (d *decoder) rejectUnknown(name string, t map[string]any, allowed []string) {
	if u := unknownKeys(t, allowed); len(u) > 0 {
		hint := didYouMean(u[0], allowed)
		if why, ok := unsupported[u[0]]; ok {
			hint = ". " + why
		}
		d.p.add("Unknown %s options: %s%s", name, nameList(u), hint)
	}
}

// unsupported explains keys that look like options but are refused on
// purpose, instead of suggesting a key that sounds alike.
var unsupported = map[string]string{
	"cwd":   "Checks always run in the workspace root",
	"shell": "Checks run an exact argv without a shell",
}

// legacyKeys are root keys of the reference program's removed features.
var legacyKeys = map[string]bool{
	"tools": true, "shell": true, "shell_timeout": true, "plugins": true, "plugins_dir": true,
	"self_improve": true, "memory": true, "memory_db": true, "feedback": true, "evolve": true,
	"web_search": true, "tui": true, "skills": true,
}

// rootHint explains unknown root keys: trust is never read from a file, a
// removed feature's key is said to be one, and a typo gets the closest key.
func rootHint(unknown []string) string {
	for _, k := range unknown {
		if k == "trusted" {
			return ". Trust is never read from a file: pass --trusted on the command line"
		}
	}
	for _, k := range unknown {
		if legacyKeys[k] {
			return ". Legacy shell/plugins/self_improve options are not supported."
		}
	}
	return didYouMean(unknown[0], rootKeys)
}

// table returns v as a TOML table, or records "<name> must be a TOML table".
func (d *decoder) table(name string, v any) (map[string]any, bool) {
	t, ok := v.(map[string]any)
	if !ok {
		d.p.add("%s must be a TOML table", name)
	}
	return t, ok
}

func (d *decoder) root(root map[string]any, keys []toml.Key) {
	if u := unknownKeys(root, rootKeys); len(u) > 0 {
		d.p.add("Unknown config options: %s%s", nameList(u), rootHint(u))
	}
	if v, ok := root["workspace_dir"]; ok {
		switch s, isString := v.(string); {
		case !isString:
			d.p.add("workspace_dir must be a string")
		case strings.IndexByte(s, 0) >= 0:
			d.p.add("workspace_dir must not contain NUL bytes")
		default:
			d.out.workspaceDir, d.out.hasWorkspace = s, true
		}
	}
	if v, ok := root["ollama"]; ok {
		if t, ok := d.table("ollama", v); ok {
			d.ollama(t)
		}
	}
	if v, ok := root["models"]; ok {
		if t, ok := d.table("models", v); ok {
			d.models(t)
		}
	}
	if v, ok := root["servers"]; ok {
		d.servers(v, keys)
	}
	if v, ok := root["roles"]; ok {
		d.roles(v)
	}
	if v, ok := root["agent"]; ok {
		if t, ok := d.table("agent", v); ok {
			d.agent(t)
		}
	}
	if v, ok := root["checks"]; ok {
		d.checks(v, keys)
	}
	if v, ok := root["verify"]; ok {
		if t, ok := d.table("verify", v); ok {
			d.verify(t)
		}
	}
}

func (d *decoder) ollama(t map[string]any) {
	d.server("ollama", t, &d.out.cfg.Ollama)
}

// server decodes a server table, [ollama] (table "ollama") or
// [servers.NAME], onto o; every message names the table's keys.
func (d *decoder) server(table string, t map[string]any, o *Ollama) {
	d.rejectUnknown(table, t, ollamaKeys)
	// allow_remote first: the base_url check depends on it.
	if v, ok := t["allow_remote"]; ok {
		if b, ok := v.(bool); ok {
			o.AllowRemote = b
		} else {
			d.p.add("trust flags must be booleans: %s.allow_remote", table)
		}
	}
	if v, ok := t["base_url"]; ok {
		if s, ok := v.(string); !ok {
			d.p.add("%s.base_url must be a string", table)
		} else if msg := checkBaseURL(table, s, o.AllowRemote); msg != "" {
			d.p.add("%s", msg)
		} else {
			o.BaseURL = normalizeBaseURL(s)
		}
	}
	if v, ok := t["model"]; ok {
		if s, ok := v.(string); ok && strings.TrimSpace(s) != "" {
			o.Model = strings.TrimSpace(s)
		} else {
			d.p.add("%s.model must be a nonempty string", table)
		}
	}
	if v, ok := t["api"]; ok {
		if s, ok := v.(string); ok && (s == APINative || s == APIOpenAI) {
			o.API = s
		} else {
			d.p.add("%s", apiMessage(table))
		}
	}
	d.number(t, table, "temperature", temperatureRange, &o.Temperature)
	d.number(t, table, "timeout", modelTimeoutRange, &o.Timeout)
	if v, ok := t["context_length"]; ok {
		d.integer(table+".context_length", v, contextLengthRange, &o.ContextLength)
	}
	if v, ok := t["think"]; ok {
		if b, ok := v.(bool); ok {
			o.Think = b
		} else {
			d.p.add("%s.think must be a boolean", table)
		}
	}
}

// number decodes t[name], an integer or float within r, into dst.
func (d *decoder) number(t map[string]any, table, name string, r floatRange, dst *float64) {
	v, ok := t[name]
	if !ok {
		return
	}
	var f float64
	switch n := v.(type) {
	case int64:
		f = float64(n)
	case float64:
		f = n
	default:
		ok = false
	}
	if !ok || !r.contains(f) {
		d.p.add("%s", r.message(table+"."+name))
		return
	}
	*dst = f
}

// integer decodes v, which must be a TOML integer (not a float, not a
// boolean) within r, into dst.
func (d *decoder) integer(key string, v any, r intRange, dst *int) {
	n, ok := v.(int64)
	if !ok || !r.contains(n) {
		d.p.add("%s", r.message(key))
		return
	}
	*dst = int(n)
}

func (d *decoder) models(t map[string]any) {
	d.rejectUnknown("models", t, modelsKeys)
	m := &d.out.cfg.Models
	for _, f := range []struct {
		role string
		dst  *string
	}{{RolePlanner, &m.Planner}, {RoleCoder, &m.Coder}, {RoleReviewer, &m.Reviewer}} {
		v, ok := t[f.role]
		if !ok {
			continue
		}
		if s, ok := v.(string); ok {
			// A blank role model inherits its server's model, like an empty one.
			*f.dst = strings.TrimSpace(s)
		} else {
			d.p.add("models.%s must be a string, the model's name (a role's server is chosen with [roles.%s] server = \"NAME\")", f.role, f.role)
		}
	}
}

func (d *decoder) agent(t map[string]any) {
	allowed := make([]string, len(agentFields), len(agentFields)+1)
	for i, f := range agentFields {
		allowed[i] = f.name
	}
	d.rejectUnknown("agent", t, append(allowed, "baseline", "planner", "answer_code", "go_imports", "edit_format", "tool_declarations", "transcript", "retry_temperature"))
	for _, f := range []struct {
		name string
		dst  *bool
	}{{"baseline", &d.out.cfg.Agent.Baseline}, {"answer_code", &d.out.cfg.Agent.AnswerCode}, {"go_imports", &d.out.cfg.Agent.GoImports}, {"transcript", &d.out.cfg.Agent.Transcript}} {
		if v, ok := t[f.name]; ok {
			if b, ok := v.(bool); ok {
				*f.dst = b
			} else {
				d.p.add("agent.%s must be a boolean", f.name)
			}
		}
	}
	if v, ok := t["planner"]; ok {
		if s, ok := v.(string); ok && validPlanner(s) {
			d.out.cfg.Agent.Planner = s
		} else {
			d.p.add("%s", plannerMessage)
		}
	}
	if v, ok := t["edit_format"]; ok {
		if s, ok := v.(string); ok && validEditFormat(s) {
			d.out.cfg.Agent.EditFormat = s
		} else {
			d.p.add("%s", editFormatMessage)
		}
	}
	if v, ok := t["tool_declarations"]; ok {
		if s, ok := v.(string); ok && validToolDeclarations(s) {
			d.out.cfg.Agent.ToolDeclarations = s
		} else {
			d.p.add("%s", toolDeclarationsMessage)
		}
	}
	d.number(t, "agent", "retry_temperature", temperatureRange, &d.out.cfg.Agent.RetryTemperature)
	for _, f := range agentFields {
		if v, ok := t[f.name]; ok {
			d.integer("agent."+f.name, v, f.rng, f.field(&d.out.cfg.Agent))
		}
	}
}
