package config

import (
	"slices"

	"github.com/BurntSushi/toml"
)

// checks decodes the [checks] table, keeping the file's order.
func (d *decoder) checks(v any, keys []toml.Key) {
	t, ok := v.(map[string]any)
	if !ok {
		d.p.add("checks must be a table of named commands")
		return
	}
	if len(t) > MaxChecks {
		d.p.add("%s", tooManyChecks)
		return
	}
	for _, name := range tableOrder("checks", t, keys) {
		if !validCheckName(name) {
			d.p.add("%s", checkNameMessage(name))
			continue
		}
		ct, ok := t[name].(map[string]any)
		if !ok {
			d.p.add("checks.%s must be a TOML table", name)
			continue
		}
		d.out.cfg.Checks = append(d.out.cfg.Checks, d.check(name, ct))
	}
}

// tableOrder returns the names of the table of tables named table
// (checks, servers) in the order the file first mentions them. Go maps
// have no order, so the order comes from the parser's key list; any name
// it somehow lacks follows, sorted.
func tableOrder(table string, t map[string]any, keys []toml.Key) []string {
	order := make([]string, 0, len(t))
	seen := make(map[string]bool, len(t))
	for _, k := range keys {
		if len(k) < 2 || k[0] != table {
			continue
		}
		if _, ok := t[k[1]]; ok && !seen[k[1]] {
			seen[k[1]] = true
			order = append(order, k[1])
		}
	}
	var rest []string
	for name := range t {
		if !seen[name] {
			rest = append(rest, name)
		}
	}
	slices.Sort(rest)
	return append(order, rest...)
}

// check decodes one named check table; name is already valid.
func (d *decoder) check(name string, t map[string]any) Check {
	key := "checks." + name
	d.rejectUnknown(key, t, checkKeys)
	ch := Check{
		Name:      name,
		Timeout:   DefaultCheckTimeout,
		Required:  true,
		Kind:      KindCheck,
		Filetypes: []string{},
	}
	if v, ok := t["cmd"]; !ok {
		d.p.add("%s.cmd is required", key)
	} else if arr, ok := v.([]any); !ok {
		d.p.add("%s.cmd must be an array of strings, for example cmd = [\"go\", \"test\", \"./...\"]", key)
	} else if argv, ok := stringArray(arr); !ok {
		d.p.add("%s.cmd must be a nonempty string argv array", key)
	} else if msg := checkArgv(key, argv); msg != "" {
		d.p.add("%s", msg)
	} else {
		ch.Cmd = argv
	}
	if v, ok := t["timeout"]; ok {
		d.integer(key+".timeout", v, checkTimeoutRange, &ch.Timeout)
	}
	if v, ok := t["required"]; ok {
		if b, ok := v.(bool); ok {
			ch.Required = b
		} else {
			d.p.add("%s.required must be a boolean", key)
		}
	}
	if v, ok := t["kind"]; ok {
		if s, ok := v.(string); ok && checkKinds[s] {
			ch.Kind = s
		} else {
			d.p.add("%s.kind is not a supported check kind", key)
		}
	}
	if v, ok := t["filetypes"]; ok {
		if ft, ok := anyStringArray(v); ok {
			ch.Filetypes = ft
		} else {
			d.p.add("%s.filetypes must be a string array", key)
		}
	}
	if v, ok := t["env"]; ok {
		if env, ok := anyStringArray(v); !ok {
			d.p.add("%s.env must be an array of environment variable names", key)
		} else if msg := checkEnv(key, env); msg != "" {
			d.p.add("%s", msg)
		} else {
			ch.Env = env // non-nil even when empty: pass no variables
		}
	}
	return ch
}

// anyStringArray returns v as []string when it is an array of strings.
func anyStringArray(v any) ([]string, bool) {
	arr, ok := v.([]any)
	if !ok {
		return nil, false
	}
	return stringArray(arr)
}

// stringArray returns arr as a non-nil []string when every element is a
// string.
func stringArray(arr []any) ([]string, bool) {
	out := make([]string, 0, len(arr))
	for _, e := range arr {
		s, ok := e.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}
