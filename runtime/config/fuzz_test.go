package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// nestingDepth returns how many tables and arrays are nested in v, v
// included.
func nestingDepth(v any) int {
	deepest := 0
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			deepest = max(deepest, nestingDepth(e))
		}
	case []map[string]any:
		for _, e := range v {
			deepest = max(deepest, nestingDepth(e))
		}
	case []any:
		for _, e := range v {
			deepest = max(deepest, nestingDepth(e))
		}
	default:
		return 0
	}
	return deepest + 1
}

// FuzzParse feeds arbitrary bytes as a configuration file. Decoding must
// never panic; a schema problem must be an *Error; and every accepted
// configuration must satisfy Validate and the package's limits.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"",
		"workspace_dir = \".\"\n",
		"[ollama]\nbase_url = \"http://127.0.0.1:11434/\"\nmodel = \"m\"\napi = \"openai\"\ntemperature = 1\ncontext_length = 2048\ntimeout = 0.1\nallow_remote = false\nthink = true\n",
		"[ollama]\nbase_url = \"https://example.com\"\nallow_remote = true\n",
		"[models]\nplanner = \"p\"\ncoder = \"\"\nreviewer = \" \"\n",
		"[agent]\nmax_iterations = 32\nmax_cycles = 1\nmax_tool_calls = 256\nmax_context_chars = 4096\nmax_task_chars = 1\n",
		"[checks.tests]\ncmd = [\"go\", \"test\", \"./...\"]\ntimeout = 60000\nrequired = false\nkind = \"test\"\nfiletypes = [\"go\"]\nenv = [\"PATH\"]\n",
		"checks = { b = { cmd = [\"x\"] }, a = { cmd = [\"y\"], env = [] } }\n",
		"[checks.t]\ncmd = \"sh -c x\"\n",
		"[checks.t]\nkind = \"test\"\n",
		"[[checks]]\ncmd = [\"x\"]\n",
		"[ollama]\ntimeout = nan\ntemperature = inf\ncontext_length = 1.0\n",
		"trusted = true\n[tools]\n",
		"[ollama]\nbase_url = \"http://u@[::1]:0/?#\"\n",
		// The nesting pre-scan: brackets in every string form and in
		// comments, dotted keys, headers, and depths around the bound.
		"x = \"[{\\\"[\" # [[{\ny = '[{'\nz = \"\"\"\n[{\n\"\"\"\"\"\nw = '''['''''\n",
		"[a.\"b.c\".'d']\ne.f.g = {h.i = [1.5, {j = 2}], k = 1979-05-27T07:32:00Z}\n",
		"[[checks]]\n[[a.b]]\nx = [[[]], [{}]]\n",
		"x = " + strings.Repeat("{a=", MaxNesting) + "1" + strings.Repeat("}", MaxNesting) + "\n",
		"x = " + strings.Repeat("[", MaxNesting+1) + "\n",
		strings.Repeat("a.", MaxNesting) + "a = 1\n",
		"x = \"unterminated [[[\ny = {\n",
		"x = " + strings.Repeat("[", MaxNesting) + strings.Repeat("]", MaxNesting) + "\n",
		"[[" + strings.Repeat("a.", MaxNesting-1) + "a]]\n",
		"[" + strings.Repeat("a.", 31) + "a]\n" + strings.Repeat("b.", 31) + "b = {c = 1}\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parse(data)
		if nerr := checkNesting(data); nerr != nil {
			if err == nil || err.Error() != nerr.Error() {
				t.Fatalf("parse(%q) = %v, want the pre-scan's refusal %v", data, err, nerr)
			}
			// The pre-scan never counts more levels than the document
			// has: what it refuses, the decoder either rejects or finds
			// nested deeper than the bound.
			var v map[string]any
			if len(data) <= 4096 && toml.Unmarshal(data, &v) == nil {
				if depth := nestingDepth(v) - 1; depth <= MaxNesting {
					t.Fatalf("checkNesting refused %q (%v), which decodes with depth %d", data, nerr, depth)
				}
			}
		}
		if err != nil {
			var ce *Error
			if errors.As(err, &ce) && len(ce.Problems) == 0 {
				t.Fatalf("parse(%q) returned an *Error without problems", data)
			}
			return
		}
		if err := p.cfg.Validate(); err != nil {
			t.Fatalf("parse(%q) accepted a config that fails Validate: %v", data, err)
		}
		if p.cfg.Checks == nil || p.cfg.Warnings == nil {
			t.Fatalf("parse(%q) left nil slices: checks %v, warnings %v", data, p.cfg.Checks, p.cfg.Warnings)
		}
		for _, c := range p.cfg.Checks {
			if c.Filetypes == nil {
				t.Fatalf("parse(%q) check %s has nil filetypes", data, c.Name)
			}
		}
	})
}
