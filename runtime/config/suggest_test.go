package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestSuggest(t *testing.T) {
	keys := []string{"base_url", "model", "api", "temperature", "context_length", "timeout", "allow_remote", "think"}
	for _, tc := range []struct{ name, want string }{
		{"modle", "model"},
		{"Model", "model"},
		{"temprature", "temperature"},
		{"context_lenght", "context_length"},
		{"baseurl", "base_url"},
		{"timout", "timeout"},
		{"apii", "api"},
		{"allow_remotes", "allow_remote"},
		{"colour", ""},
		{"x", ""},
		{"", ""},
	} {
		if got := Suggest(tc.name, keys); got != tc.want {
			t.Errorf("Suggest(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct{ name, want string }{{"chek", "check"}, {"stauts", "status"}, {"udno", "undo"}, {"serv", "serve"}, {"zzz", ""}} {
		if got := Suggest(tc.name, []string{"run", "check", "status", "serve", "tui", "nvim", "undo", "doctor", "version", "help"}); got != tc.want {
			t.Errorf("Suggest(%q) among commands = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestConfigErrorsNameFileLineAndSuggest loads real files through Load and
// checks the whole message a person sees after "flow: ".
func TestConfigErrorsNameFileLineAndSuggest(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, doc, want string }{
		{"typo in a table", "[ollama]\nmodel = \"m\"\nmodle = \"qwen\"\n", ":3: Unknown ollama options: modle (did you mean model?)"},
		{"typo of a table", "[check.vet]\ncmd = [\"go\", \"vet\"]\n", ":1: Unknown config options: check (did you mean checks?)"},
		{"typo in a check", "# checks\n\n[checks.vet]\ncmd = [\"go\", \"vet\"]\nfiletype = [\"go\"]\n", ":5: Unknown checks.vet options: filetype (did you mean filetypes?)"},
		{"inline table", "ollama = { modle = \"x\" }\n", ":1: Unknown ollama options: modle (did you mean model?)"},
		{"dotted key", "agent.max_cycle = 2\n", ":1: Unknown agent options: max_cycle (did you mean max_cycles?)"},
		{"value out of range", "[agent]\n# a comment with max_cycles = 1\nmax_cycles = 9\n", ":3: agent.max_cycles must be an integer between 1 and 5"},
		{"string cmd", "[checks.t]\ncmd = \"go test ./...\"\n", `:2: checks.t.cmd must be an array of strings, for example cmd = ["go", "test", "./..."]`},
		{"base_url with /v1", "[ollama]\napi = \"openai\"\nbase_url = \"http://127.0.0.1:11434/v1\"\n", `:3: Invalid ollama.base_url: drop the path "/v1": base_url is the server's origin (for example http://127.0.0.1:11434) and flow adds /v1 itself (set api = "openai" for the OpenAI-compatible API)`},
		{"after a multi-line string", "[models]\nplanner = \"\"\"\nx = 1\n\"\"\"\ncritic = \"m\"\n", ":5: Unknown models options: critic"},
		{"two problems", "[agent]\nmax_cycles = 9\nmax_iterations = 0\n", ": line 2: agent.max_cycles must be an integer between 1 and 5; line 3: agent.max_iterations must be an integer between 1 and 32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, filepath.Base(t.Name())+".toml")
			if err := os.WriteFile(path, []byte(tc.doc), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(LoadOptions{ConfigFile: path, Cwd: dir, Getenv: func(string) string { return "" }})
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Load = %v, want a configuration error", err)
			}
			if got, want := err.Error(), path+tc.want; got != want {
				t.Fatalf("message\n got %q\nwant %q", got, want)
			}
		})
	}
}
