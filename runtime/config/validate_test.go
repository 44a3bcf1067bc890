package config

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	t.Parallel()
	goodCheck := func() Check {
		return Check{Name: "tests", Cmd: []string{"go", "test"}, Timeout: 1000, Required: true, Kind: KindTest}
	}
	tests := []struct {
		name   string
		mutate func(*Config)
		want   string // "" = valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"defaults with a check", func(c *Config) { c.Checks = []Check{goodCheck()} }, ""},
		{"remote allowed", func(c *Config) { c.Ollama.BaseURL, c.Ollama.AllowRemote = "https://gpu.example:443", true }, ""},
		{"remote not allowed", func(c *Config) { c.Ollama.BaseURL = "https://gpu.example" }, urlRemote},
		{"credentials", func(c *Config) { c.Ollama.BaseURL = "http://a@localhost" }, urlShape},
		{"empty base_url", func(c *Config) { c.Ollama.BaseURL = "" }, urlShape},
		{"blank model", func(c *Config) { c.Ollama.Model = " " }, "ollama.model must be a nonempty string"},
		{"empty api", func(c *Config) { c.Ollama.API = "" }, `ollama.api must be "native" or "openai"`},
		{"NaN temperature", func(c *Config) { c.Ollama.Temperature = math.NaN() }, "ollama.temperature must be a number between 0 and 2"},
		{"inf timeout", func(c *Config) { c.Ollama.Timeout = math.Inf(1) }, "ollama.timeout must be a number between 0.1 and 600"},
		{"zero timeout", func(c *Config) { c.Ollama.Timeout = 0 }, "ollama.timeout must be a number between 0.1 and 600"},
		{"context_length", func(c *Config) { c.Ollama.ContextLength = 0 }, "ollama.context_length must be an integer between 1024 and 131072"},
		{"zero agent budgets", func(c *Config) { c.Agent = Agent{} }, strings.Join([]string{
			"agent.max_iterations must be an integer between 1 and 32",
			"agent.max_cycles must be an integer between 1 and 5",
			"agent.max_tool_calls must be an integer between 1 and 256",
			"agent.max_context_chars must be an integer between 4096 and 1000000",
			"agent.max_task_chars must be an integer between 1 and 100000",
		}, "; ")},
		{"tool declarations unset", func(c *Config) { c.Agent.ToolDeclarations = "" }, ""},
		{"bad tool declarations", func(c *Config) { c.Agent.ToolDeclarations = "json" }, toolDeclarationsMessage},
		{"33 checks", func(c *Config) {
			for i := range 33 {
				ch := goodCheck()
				ch.Name = fmt.Sprint("c", i)
				c.Checks = append(c.Checks, ch)
			}
		}, "At most 32 named checks are supported"},
		{"bad check name", func(c *Config) { ch := goodCheck(); ch.Name = "a/b"; c.Checks = []Check{ch} }, "Invalid check name: 'a/b'"},
		{"duplicate check names", func(c *Config) { c.Checks = []Check{goodCheck(), goodCheck()} }, "Duplicate check name: 'tests'"},
		{"nil cmd", func(c *Config) { ch := goodCheck(); ch.Cmd = nil; c.Checks = []Check{ch} }, "checks.tests.cmd must be a nonempty string argv array"},
		{"NUL in cmd", func(c *Config) { ch := goodCheck(); ch.Cmd = []string{"a\x00"}; c.Checks = []Check{ch} }, "checks.tests.cmd must be a nonempty string argv array"},
		{"zero check timeout", func(c *Config) { ch := goodCheck(); ch.Timeout = 0; c.Checks = []Check{ch} }, "checks.tests.timeout must be an integer between 1 and 600000"},
		{"empty kind", func(c *Config) { ch := goodCheck(); ch.Kind = ""; c.Checks = []Check{ch} }, "checks.tests.kind is not a supported check kind"},
		{"bad env", func(c *Config) { ch := goodCheck(); ch.Env = []string{"A-B"}; c.Checks = []Check{ch} }, "checks.tests.env has an invalid variable name: 'A-B'"},
		{"empty env is valid", func(c *Config) { ch := goodCheck(); ch.Env = []string{}; c.Checks = []Check{ch} }, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := Default()
			tc.mutate(&c)
			err := c.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Validate() = %v, want *Error %q", err, tc.want)
			}
			if err.Error() != tc.want {
				t.Errorf("Validate() = %q, want %q", err, tc.want)
			}
		})
	}
}

func TestErrorMessageBounds(t *testing.T) {
	t.Parallel()
	var p problems
	for i := range 20 {
		p.add("p%d", i)
	}
	want := "p0; p1; p2; p3; p4; p5; p6; p7; p8; p9; p10; p11; p12; p13; p14; p15; and 4 more problems"
	if got := p.err().Error(); got != want {
		t.Errorf("Error() with 20 problems = %q, want %q", got, want)
	}

	var doc strings.Builder
	for i := range 12 {
		fmt.Fprintf(&doc, "k%02d = 1\n", i)
	}
	_, err := parse([]byte(doc.String()))
	want = "Unknown config options: k00, k01, k02, k03, k04, k05, k06, k07, k08, k09 and 2 more"
	if err == nil || err.Error() != want {
		t.Errorf("parse(12 unknown keys) = %v, want %q", err, want)
	}

	long := strings.Repeat("x", 100)
	if got, want := show(long), `"`+strings.Repeat("x", 79)+`…"`; got != want {
		t.Errorf("show(100 x) = %s, want %s", got, want)
	}
	if got, want := show("a\x1b[2Jb"), `"a\x1b[2Jb"`; got != want {
		t.Errorf("show(escape sequence) = %s, want %s", got, want)
	}
	if got := showPath("/" + long); got != "/"+long {
		t.Errorf("showPath(long path) = %s, want it unchanged", got)
	}
	if got, want := showPath("/a\nb"), `"/a\nb"`; got != want {
		t.Errorf("showPath(newline) = %s, want %s", got, want)
	}
}
