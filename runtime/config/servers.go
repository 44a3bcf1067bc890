package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// MaxServers bounds the [servers.NAME] tables.
const MaxServers = 8

// servers decodes the [servers] table of tables, keeping the file's order.
// Each server starts from the built-in [ollama] defaults, without a model
// or a base URL: both are required.
func (d *decoder) servers(v any, keys []toml.Key) {
	t, ok := v.(map[string]any)
	if !ok {
		d.p.add("servers must be a table of named servers: [servers.NAME] with base_url and model")
		return
	}
	if len(t) > MaxServers {
		d.p.add("At most %d servers are supported", MaxServers)
		return
	}
	for _, name := range tableOrder("servers", t, keys) {
		if msg := serverNameMessage(name); msg != "" {
			d.p.add("%s", msg)
			continue
		}
		key := "servers." + name
		st, ok := t[name].(map[string]any)
		if !ok {
			d.p.add("%s must be a TOML table with base_url and model", key)
			continue
		}
		o := Default().Ollama
		o.BaseURL, o.Model = "", ""
		for _, req := range []string{"base_url", "model"} {
			if _, ok := st[req]; !ok {
				d.p.add("%s.%s is required", key, req)
			}
		}
		d.server(key, st, &o)
		d.out.cfg.Servers = append(d.out.cfg.Servers, NewServer(name, o))
	}
}

// serverNameMessage is the problem of a server name, "" for a good one.
func serverNameMessage(name string) string {
	if name == DefaultServer {
		return "servers.ollama: the name ollama is the [ollama] table's, the default server; give this server another name"
	}
	if !validCheckName(name) {
		return fmt.Sprintf("Invalid server name: '%s' (a name matches [A-Za-z0-9][A-Za-z0-9_.-]*, at most %d characters)", show(name), MaxCheckName)
	}
	return ""
}

// roleKeys are the keys of a [roles.ROLE] table.
var roleKeys = []string{"server", "model"}

// roles decodes the [roles] table: one table per role, in role order.
func (d *decoder) roles(v any) {
	t, ok := v.(map[string]any)
	if !ok {
		d.p.add(`roles must be a table of roles: [roles.reviewer] server = "NAME"`)
		return
	}
	d.rejectUnknown("roles", t, Roles)
	for _, role := range Roles {
		rv, ok := t[role]
		if !ok {
			continue
		}
		key := "roles." + role
		rt, ok := rv.(map[string]any)
		if !ok {
			hint := `server = "NAME"`
			if s, isString := rv.(string); isString {
				hint = fmt.Sprintf("server = %q", show(s))
			}
			d.p.add("%s must be a table: write [%s] with %s", key, key, hint)
			continue
		}
		d.rejectUnknown(key, rt, roleKeys)
		r := Role{Name: role}
		for _, f := range []struct {
			name string
			dst  *string
		}{{"server", &r.Server}, {"model", &r.Model}} {
			if v, ok := rt[f.name]; ok {
				if s, ok := v.(string); ok && strings.TrimSpace(s) != "" {
					*f.dst = strings.TrimSpace(s)
				} else {
					d.p.add("%s.%s must be a nonempty string", key, f.name)
				}
			}
		}
		d.out.cfg.Roles = append(d.out.cfg.Roles, r)
	}
}

// validateServers returns the problems of the [servers.NAME] and
// [roles.ROLE] tables: each server's values as [ollama]'s, unique names,
// and each role's server defined, its model set once.
func validateServers(c *Config) problems {
	var p problems
	if len(c.Servers) > MaxServers {
		p.add("At most %d servers are supported", MaxServers)
	}
	seen := map[string]bool{}
	for i := range c.Servers {
		s := &c.Servers[i]
		if msg := serverNameMessage(s.Name); msg != "" {
			p.add("%s", msg)
			continue
		}
		if seen[s.Name] {
			p.add("Duplicate server name: '%s'", s.Name)
		}
		seen[s.Name] = true
		o := s.Settings()
		p = append(p, validateOllama("servers."+s.Name, &o)...)
	}
	p = append(p, validateRoles(c)...)
	return p
}

// validateRoles returns the problems of the [roles.ROLE] tables and of
// [models] keys that name a server instead of a model.
func validateRoles(c *Config) problems {
	var p problems
	seen := map[string]bool{}
	for _, r := range c.Roles {
		key := "roles." + r.Name
		if !slices.Contains(Roles, r.Name) {
			p.add("Unknown roles options: %s%s", show(r.Name), didYouMean(r.Name, Roles))
			continue
		}
		if seen[r.Name] {
			p.add("Duplicate role table: [%s]", key)
		}
		seen[r.Name] = true
		if _, _, ok := c.ServerFor(r.Name); !ok {
			p.add("%s.server names the server %q, which is not defined: the %s's requests would have nowhere to go; add a [servers.%s] table with base_url and model, or name one of %s",
				key, show(r.Server), r.Name, show(r.Server), serverNames(c))
		}
		if r.Model != "" && modelsKey(&c.Models, r.Name) != "" {
			p.add("the %s's model is set twice, by models.%s and %s.model; keep one", r.Name, r.Name, key)
		}
	}
	for _, role := range Roles {
		if m := modelsKey(&c.Models, role); m != "" && c.Server(m) != nil {
			p.add("models.%s = %q names a server, and [models] names models: send the %s to that server with [roles.%s] server = %q", role, show(m), role, role, show(m))
		}
	}
	return p
}

// modelsKey returns models.ROLE.
func modelsKey(m *Models, role string) string {
	switch role {
	case RolePlanner:
		return m.Planner
	case RoleCoder:
		return m.Coder
	case RoleReviewer:
		return m.Reviewer
	}
	return ""
}

// serverNames lists the servers a role may name, for a message.
func serverNames(c *Config) string {
	names := []string{`"` + DefaultServer + `" (the [ollama] table)`}
	for _, s := range c.Servers {
		names = append(names, fmt.Sprintf("%q", show(s.Name)))
	}
	return strings.Join(names, ", ")
}
