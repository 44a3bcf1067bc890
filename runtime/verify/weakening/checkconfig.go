package weakening

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"strings"
)

// checkConfig reports a changed check definition. Files that mix check
// settings with other content are compared on their check settings only:
// package.json on its scripts and test/lint tool keys, pyproject.toml,
// setup.cfg and Cargo.toml on their tool and lint sections.
func checkConfig(ch Change) []Finding {
	if !ch.Exists {
		return []Finding{{Path: ch.Path, What: WhatCheckConfig,
			Detail: fmt.Sprintf("%s: a check configuration file was deleted", ch.Path)}}
	}
	base := path.Base(ch.Path)
	same := bytes.Equal(ch.Before, ch.After)
	switch base {
	case "package.json":
		same = sameJSONKeys(ch.Before, ch.After, "scripts", "eslintConfig", "jest", "mocha", "ava",
			"prettier", "c8", "nyc", "vitest", "stylelint", "xo", "standard", "tap")
	case "pyproject.toml":
		same = sameSections(ch.Before, ch.After, func(s string) bool { return strings.HasPrefix(s, "tool.") })
	case "setup.cfg", "tox.ini":
		same = sameSections(ch.Before, ch.After, func(s string) bool {
			for _, p := range []string{"flake8", "tool:pytest", "pytest", "mypy", "pylint", "coverage", "isort", "pycodestyle", "pydocstyle", "testenv", "tox"} {
				if strings.HasPrefix(s, p) {
					return true
				}
			}
			return false
		})
	case "Cargo.toml":
		same = sameSections(ch.Before, ch.After, func(s string) bool {
			return strings.HasPrefix(s, "lints") || strings.HasPrefix(s, "workspace.lints") || strings.HasPrefix(s, "profile.test")
		})
	}
	if same {
		return nil
	}
	return []Finding{{Path: ch.Path, What: WhatCheckConfig,
		Detail: fmt.Sprintf("%s: the configuration of a check was changed", ch.Path)}}
}

// sameJSONKeys compares the given top-level keys of two JSON objects. Text
// that is not a JSON object compares as changed.
func sameJSONKeys(a, b []byte, keys ...string) bool {
	var x, y map[string]json.RawMessage
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	for _, k := range keys {
		if !sameJSON(x[k], y[k]) {
			return false
		}
	}
	return true
}

func sameJSON(a, b json.RawMessage) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ea, _ := json.Marshal(x)
	eb, _ := json.Marshal(y)
	return bytes.Equal(ea, eb)
}

// sameSections compares the INI/TOML sections whose names keep selects,
// line by line after trimming.
func sameSections(a, b []byte, keep func(string) bool) bool {
	return sections(a, keep) == sections(b, keep)
}

func sections(src []byte, keep func(string) bool) string {
	var out strings.Builder
	on := false
	for _, line := range strings.Split(string(src), "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") {
			name := strings.Trim(t, "[] \t")
			on = keep(name)
		}
		if on && t != "" && !strings.HasPrefix(t, "#") && !strings.HasPrefix(t, ";") {
			out.WriteString(t)
			out.WriteByte('\n')
		}
	}
	return out.String()
}
