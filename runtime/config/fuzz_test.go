package config

import (
	"errors"
	"testing"
)

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
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parse(data)
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
