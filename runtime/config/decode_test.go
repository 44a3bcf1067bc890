package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// check returns a [checks.<name>] table with a valid cmd plus extra lines.
func check(name string, extra ...string) string {
	return fmt.Sprintf("[checks.%s]\ncmd = [\"true\"]\n%s\n", name, strings.Join(extra, "\n"))
}

// manyChecks returns n valid check tables named c00, c01, ...
func manyChecks(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(check(fmt.Sprintf("c%02d", i)))
	}
	return b.String()
}

// quotedArray returns a TOML array of n copies of s.
func quotedArray(n int, s string) string {
	return "[" + strings.TrimSuffix(strings.Repeat(fmt.Sprintf("%q, ", s), n), ", ") + "]"
}

const (
	legacy     = ". Legacy shell/plugins/self_improve options are not supported."
	urlShape   = "Invalid ollama.base_url: expected HTTP(S) origin without credentials, query or path"
	urlRemote  = "Invalid ollama.base_url: non-loopback Ollama requires explicit ollama.allow_remote=true"
	argvMsg    = "checks.t.cmd must be a nonempty string argv array"
	nameBad    = "Invalid check name: "
	timeoutMsg = "checks.t.timeout must be an integer between 1 and 600000"
)

func urlPath(p string) string {
	return "Invalid ollama.base_url: drop the path \"" + p + "\": base_url is the server's origin (for example http://127.0.0.1:11434) and flow adds " + p + " itself (set api = \"openai\" for the OpenAI-compatible API)"
}

// TestParseInvalid covers every invalid case of the reference program's
// configuration tests plus flow's extensions; each error must be an *Error
// whose message is exactly the reference message naming the key.
func TestParseInvalid(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want string
	}{
		// Reference test_invalid_and_legacy_configuration_fails_closed.
		{"workspace_dir inside a table", "[ollama]\nworkspace_dir = \".\"", "Unknown ollama options: workspace_dir"},
		{"root trusted", "trusted = true", "Unknown config options: trusted. Trust is never read from a file: pass --trusted on the command line"},
		{"legacy tools table", "[tools]\nshell = true", "Unknown config options: tools" + legacy},
		{"several legacy keys sorted", "self_improve = 1\nmemory_db = \"m\"\n[tui]", "Unknown config options: memory_db, self_improve, tui" + legacy},
		{"string cmd", "[checks.t]\ncmd = \"go test ./...\"", `checks.t.cmd must be an array of strings, for example cmd = ["go", "test", "./..."]`},
		{"cwd key", check("t", `cwd = "/"`), "Unknown checks.t options: cwd. Checks always run in the workspace root"},
		{"negative check timeout", check("t", "timeout = -1"), timeoutMsg},
		{"string required", check("t", `required = "yes"`), "checks.t.required must be a boolean"},
		{"unknown kind", check("t", `kind = "deploy"`), "checks.t.kind is not a supported check kind"},
		{"empty cmd", "[checks.t]\ncmd = []", argvMsg},
		{"boolean iterations", "[agent]\nmax_iterations = true", "agent.max_iterations must be an integer between 1 and 32"},
		{"max_cycles 1000", "[agent]\nmax_cycles = 1000", "agent.max_cycles must be an integer between 1 and 5"},
		{"ollama timeout nan", "[ollama]\ntimeout = nan", "ollama.timeout must be a number between 0.1 and 600"},
		{"remote URL", "[ollama]\nbase_url = \"http://192.168.1.5:11434\"", urlRemote},
		{"userinfo URL", "[ollama]\nbase_url = \"http://user:pw@127.0.0.1:11434\"", urlShape},
		{"URL with path", "[ollama]\nbase_url = \"http://127.0.0.1:11434/api/chat\"", urlShape},
		{"URL with /api", "[ollama]\nbase_url = \"http://127.0.0.1:11434/api\"", urlPath("/api")},
		{"URL with /v1", "[ollama]\nbase_url = \"http://127.0.0.1:11434/v1/\"", urlPath("/v1")},
		{"numeric workspace_dir", "workspace_dir = 1", "workspace_dir must be a string"},

		// Further base_url cases.
		{"URL with query", "[ollama]\nbase_url = \"http://127.0.0.1:11434?x=1\"", urlShape},
		{"URL with empty query", "[ollama]\nbase_url = \"http://127.0.0.1:11434/?\"", urlShape},
		{"URL with fragment", "[ollama]\nbase_url = \"http://127.0.0.1:11434#top\"", urlShape},
		{"URL with empty fragment", "[ollama]\nbase_url = \"http://127.0.0.1:11434/#\"", urlShape},
		{"ftp scheme", "[ollama]\nbase_url = \"ftp://127.0.0.1:11434\"", urlShape},
		{"no scheme", "[ollama]\nbase_url = \"127.0.0.1:11434\"", "Invalid ollama.base_url: first path segment in URL cannot contain colon"},
		{"no host", "[ollama]\nbase_url = \"http://:11434\"", urlShape},
		{"opaque", "[ollama]\nbase_url = \"http:127.0.0.1\"", urlShape},
		{"double slash path", "[ollama]\nbase_url = \"http://127.0.0.1:11434//\"", urlShape},
		{"port out of range", "[ollama]\nbase_url = \"http://127.0.0.1:99999\"", `Invalid ollama.base_url: invalid port "99999"`},
		{"port zero", "[ollama]\nbase_url = \"http://127.0.0.1:0\"", `Invalid ollama.base_url: invalid port "0"`},
		{"empty port", "[ollama]\nbase_url = \"http://127.0.0.1:\"", "Invalid ollama.base_url: empty port"},
		{"remote IPv6", "[ollama]\nbase_url = \"http://[::2]:11434\"", urlRemote},
		{"loopback with zone", "[ollama]\nbase_url = \"http://[::1%25lo]:11434\"", urlRemote},
		{"mapped loopback", "[ollama]\nbase_url = \"http://[::ffff:127.0.0.1]:11434\"", urlRemote},
		{"name resolving to loopback", "[ollama]\nbase_url = \"http://127.0.0.1.nip.io\"", urlRemote},
		{"localhost with dot", "[ollama]\nbase_url = \"http://localhost.:11434\"", urlRemote},
		{"short IPv4 form", "[ollama]\nbase_url = \"http://127.1:11434\"", urlRemote},
		{"base_url not a string", "[ollama]\nbase_url = 11434", "ollama.base_url must be a string"},
		{"allow_remote as string", "[ollama]\nallow_remote = \"true\"", "trust flags must be booleans: ollama.allow_remote"},
		{"allow_remote as integer", "[ollama]\nallow_remote = 1", "trust flags must be booleans: ollama.allow_remote"},

		// Checks.
		{"missing cmd", "[checks.t]\nkind = \"test\"", "checks.t.cmd is required"},
		{"empty check table", "[checks.t]", "checks.t.cmd is required"},
		{"cmd with NUL", "[checks.t]\ncmd = [\"go\\u0000\"]", argvMsg},
		{"cmd with empty element", "[checks.t]\ncmd = [\"go\", \"\"]", argvMsg},
		{"cmd with integer element", "[checks.t]\ncmd = [\"go\", 1]", argvMsg},
		{"cmd of 129 elements", "[checks.t]\ncmd = " + quotedArray(129, "x"), argvMsg + " of at most 128 elements"},
		{"33 checks", manyChecks(33), "At most 32 named checks are supported"},
		{"65-char name", check(strings.Repeat("a", 65)), nameBad + "'" + strings.Repeat("a", 65) + "'"},
		{"name with space", "[checks.\"a b\"]\ncmd = [\"true\"]", nameBad + "'a b'"},
		{"name starting with dash", "[checks.\"-x\"]\ncmd = [\"true\"]", nameBad + "'-x'"},
		{"name starting with dot", "[checks.\".x\"]\ncmd = [\"true\"]", nameBad + "'.x'"},
		{"empty name", "[checks.\"\"]\ncmd = [\"true\"]", nameBad + "''"},
		{"non-ASCII name", "[checks.\"tést\"]\ncmd = [\"true\"]", nameBad + "'tést'"},
		{"name with newline", "[checks.\"a\\nb\"]\ncmd = [\"true\"]", nameBad + `'"a\nb"'`},
		{"check not a table", "[checks]\nt = 1", "checks.t must be a TOML table"},
		{"checks not a table", "checks = 1", "checks must be a table of named commands"},
		{"checks as array of tables", "[[checks]]\ncmd = [\"true\"]", "checks must be a table of named commands"},
		{"float check timeout", check("t", "timeout = 1.5"), timeoutMsg},
		{"nan check timeout", check("t", "timeout = nan"), timeoutMsg},
		{"check timeout above max", check("t", "timeout = 600001"), timeoutMsg},
		{"check timeout zero", check("t", "timeout = 0"), timeoutMsg},
		{"integer required", check("t", "required = 1"), "checks.t.required must be a boolean"},
		{"kind not a string", check("t", "kind = 1"), "checks.t.kind is not a supported check kind"},
		{"kind upper case", check("t", `kind = "Test"`), "checks.t.kind is not a supported check kind"},
		{"filetypes not strings", check("t", "filetypes = [1]"), "checks.t.filetypes must be a string array"},
		{"filetypes a string", check("t", `filetypes = "go"`), "checks.t.filetypes must be a string array"},
		{"env bad name", check("t", `env = ["PATH", "1X"]`), "checks.t.env has an invalid variable name: '1X'"},
		{"env name with equals", check("t", `env = ["A=B"]`), "checks.t.env has an invalid variable name: 'A=B'"},
		{"env empty name", check("t", `env = [""]`), "checks.t.env has an invalid variable name: ''"},
		{"env not an array", check("t", `env = "PATH"`), "checks.t.env must be an array of environment variable names"},
		{"env with integer", check("t", `env = [1]`), "checks.t.env must be an array of environment variable names"},
		{"env of 129 names", check("t", "env = "+quotedArray(129, "A")), "checks.t.env must list at most 128 variable names"},

		// Numbers and types.
		{"float for integer", "[ollama]\ncontext_length = 16384.0", "ollama.context_length must be an integer between 1024 and 131072"},
		{"context_length too small", "[ollama]\ncontext_length = 1023", "ollama.context_length must be an integer between 1024 and 131072"},
		{"context_length too large", "[ollama]\ncontext_length = 131073", "ollama.context_length must be an integer between 1024 and 131072"},
		{"inf temperature", "[ollama]\ntemperature = inf", "ollama.temperature must be a number between 0 and 2"},
		{"negative inf temperature", "[ollama]\ntemperature = -inf", "ollama.temperature must be a number between 0 and 2"},
		{"bool temperature", "[ollama]\ntemperature = true", "ollama.temperature must be a number between 0 and 2"},
		{"string temperature", "[ollama]\ntemperature = \"0.2\"", "ollama.temperature must be a number between 0 and 2"},
		{"negative temperature", "[ollama]\ntemperature = -0.1", "ollama.temperature must be a number between 0 and 2"},
		{"retry_temperature too large", "[agent]\nretry_temperature = 2.5", "agent.retry_temperature must be a number between 0 and 2"},
		{"string retry_temperature", "[agent]\nretry_temperature = \"hot\"", "agent.retry_temperature must be a number between 0 and 2"},
		{"ollama timeout too small", "[ollama]\ntimeout = 0.05", "ollama.timeout must be a number between 0.1 and 600"},
		{"ollama timeout too large", "[ollama]\ntimeout = 601", "ollama.timeout must be a number between 0.1 and 600"},
		{"max_tool_calls too large", "[agent]\nmax_tool_calls = 257", "agent.max_tool_calls must be an integer between 1 and 256"},
		{"max_context_chars too small", "[agent]\nmax_context_chars = 4095", "agent.max_context_chars must be an integer between 4096 and 1000000"},
		{"max_task_chars zero", "[agent]\nmax_task_chars = 0", "agent.max_task_chars must be an integer between 1 and 100000"},
		{"max_iterations as date", "[agent]\nmax_iterations = 2024-01-01", "agent.max_iterations must be an integer between 1 and 32"},
		{"unknown agent key", "[agent]\nmax_turns = 3", "Unknown agent options: max_turns"},
		{"unknown ollama keys sorted", "[ollama]\nshell_timeout = 1\nplugins_dir = \"p\"", "Unknown ollama options: plugins_dir, shell_timeout"},
		{"models with integer", "[models]\nplanner = 1", "models.planner must be a string, the model's name (a role's server is chosen with [roles.planner] server = \"NAME\")"},
		{"unknown role", "[models]\ncritic = \"m\"", "Unknown models options: critic"},
		{"api grpc", "[ollama]\napi = \"grpc\"", `ollama.api must be "native" or "openai"`},
		{"api not a string", "[ollama]\napi = 1", `ollama.api must be "native" or "openai"`},
		{"think yes", "[ollama]\nthink = \"yes\"", "ollama.think must be a boolean"},
		{"blank model", "[ollama]\nmodel = \"  \"", "ollama.model must be a nonempty string"},
		{"numeric model", "[ollama]\nmodel = 7", "ollama.model must be a nonempty string"},
		{"ollama not a table", "ollama = 1", "ollama must be a TOML table"},
		{"models not a table", "models = \"m\"", "models must be a TOML table"},
		{"agent as array of tables", "[[agent]]\nmax_cycles = 1", "agent must be a TOML table"},
		{"workspace_dir with NUL", "workspace_dir = \"a\\u0000b\"", "workspace_dir must not contain NUL bytes"},

		// Several problems are reported together, in a stable order.
		{"several problems", "[agent]\nmax_cycles = 0\nmax_iterations = 0",
			"agent.max_iterations must be an integer between 1 and 32; agent.max_cycles must be an integer between 1 and 5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := parse([]byte(tc.doc))
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("parse(%q) = %v, %v; want *Error %q", tc.doc, p, err, tc.want)
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("parse(%q) error = %q, want %q", tc.doc, got, tc.want)
			}
		})
	}
}

// TestParseSyntaxError checks that a TOML syntax error is not a schema
// error: Load reports it as "Cannot load configuration".
func TestParseSyntaxError(t *testing.T) {
	for _, doc := range []string{"[ollama", "a = ", "x = 1\nx = 2", "[agent]\n[agent]"} {
		_, err := parse([]byte(doc))
		var ce *Error
		if err == nil || errors.As(err, &ce) {
			t.Errorf("parse(%q) = %v, want a TOML syntax error", doc, err)
		}
	}
}

func TestParseValid(t *testing.T) {
	withOllama := func(f func(*Ollama)) Config {
		c := Default()
		f(&c.Ollama)
		return c
	}
	tests := []struct {
		name string
		doc  string
		want Config
		ws   string // expected workspace_dir, "" when absent
	}{
		{"empty file is the defaults", "", Default(), ""},
		{"comments only", "# nothing\n", Default(), ""},
		{"integer temperature", "[ollama]\ntemperature = 1", withOllama(func(o *Ollama) { o.Temperature = 1 }), ""},
		{"retry_temperature", "[agent]\nretry_temperature = 1.1", func() Config { c := Default(); c.Agent.RetryTemperature = 1.1; return c }(), ""},
		{"float timeout 0.1", "[ollama]\ntimeout = 0.1", withOllama(func(o *Ollama) { o.Timeout = 0.1 }), ""},
		{"integer timeout 600", "[ollama]\ntimeout = 600", withOllama(func(o *Ollama) { o.Timeout = 600 }), ""},
		{"remote with allow_remote", "[ollama]\nbase_url = \"https://ollama.example.com\"\nallow_remote = true",
			withOllama(func(o *Ollama) { o.BaseURL, o.AllowRemote = "https://ollama.example.com", true }), ""},
		{"allow_remote after base_url", "[ollama]\nbase_url = \"http://10.0.0.2:11434/\"\nallow_remote = true",
			withOllama(func(o *Ollama) { o.BaseURL, o.AllowRemote = "http://10.0.0.2:11434", true }), ""},
		{"trailing slash removed", "[ollama]\nbase_url = \"http://127.0.0.1:11434/\"", Default(), ""},
		{"localhost", "[ollama]\nbase_url = \"http://LocalHost:8080\"", withOllama(func(o *Ollama) { o.BaseURL = "http://LocalHost:8080" }), ""},
		{"IPv6 loopback", "[ollama]\nbase_url = \"http://[::1]:11434/\"", withOllama(func(o *Ollama) { o.BaseURL = "http://[::1]:11434" }), ""},
		{"127/8", "[ollama]\nbase_url = \"https://127.3.2.1\"", withOllama(func(o *Ollama) { o.BaseURL = "https://127.3.2.1" }), ""},
		{"openai api and think", "[ollama]\napi = \"openai\"\nthink = true", withOllama(func(o *Ollama) { o.API, o.Think = APIOpenAI, true }), ""},
		{"model trimmed", "[ollama]\nmodel = \" llama3 \"", withOllama(func(o *Ollama) { o.Model = "llama3" }), ""},
		{"context_length bounds", "[ollama]\ncontext_length = 131072", withOllama(func(o *Ollama) { o.ContextLength = 131072 }), ""},
		{"per-role models", "[models]\nplanner = \"p\"\ncoder = \"c\"\nreviewer = \"  \"", func() Config {
			c := Default()
			c.Models = Models{Planner: "p", Coder: "c"}
			return c
		}(), ""},
		{"agent values", "[agent]\nmax_iterations = 32\nmax_cycles = 5\nmax_tool_calls = 1\nmax_context_chars = 4096\nmax_task_chars = 100000", func() Config {
			c := Default()
			c.Agent = Agent{MaxIterations: 32, MaxCycles: 5, MaxToolCalls: 1, MaxContextChars: 4096, MaxTaskChars: 100000, Baseline: true, BriefChars: 8000, Planner: PlannerAuto, AnswerCode: true, GoImports: true, EditFormat: EditAuto, ToolDeclarations: ToolsAuto, RetryTemperature: 0.8}
			return c
		}(), ""},
		{"edit format whole", "[agent]\nedit_format = \"whole\"", func() Config {
			c := Default()
			c.Agent.EditFormat = EditWhole
			return c
		}(), ""},
		{"tools declared as text", "[agent]\ntool_declarations = \"text\"", func() Config {
			c := Default()
			c.Agent.ToolDeclarations = ToolsText
			return c
		}(), ""},
		{"answer code off", "[agent]\nanswer_code = false", func() Config {
			c := Default()
			c.Agent.AnswerCode = false
			return c
		}(), ""},
		{"go imports off", "[agent]\ngo_imports = false", func() Config {
			c := Default()
			c.Agent.GoImports = false
			return c
		}(), ""},
		{"transcript on", "[agent]\ntranscript = true", func() Config {
			c := Default()
			c.Agent.Transcript = true
			return c
		}(), ""},
		{"planner always", "[agent]\nplanner = \"always\"", func() Config {
			c := Default()
			c.Agent.Planner = PlannerAlways
			return c
		}(), ""},
		{"workspace_dir", "workspace_dir = \"../ws\"", Default(), "../ws"},
		{"check defaults", "[checks.lint]\ncmd = [\"golangci-lint\", \"run\"]", func() Config {
			c := Default()
			c.Checks = []Check{{Name: "lint", Cmd: []string{"golangci-lint", "run"}, Timeout: 60000, Required: true, Kind: KindCheck, Filetypes: []string{}}}
			return c
		}(), ""},
		{"check all fields", check("tests", `timeout = 600000`, `required = false`, `kind = "test"`, `filetypes = ["go", ".mod", "*"]`, `env = ["PATH", "HOME", "_X1"]`), func() Config {
			c := Default()
			c.Checks = []Check{{Name: "tests", Cmd: []string{"true"}, Timeout: 600000, Required: false, Kind: KindTest,
				Filetypes: []string{"go", ".mod", "*"}, Env: []string{"PATH", "HOME", "_X1"}}}
			return c
		}(), ""},
		{"empty env passes nothing", check("t", "env = []"), func() Config {
			c := Default()
			c.Checks = []Check{{Name: "t", Cmd: []string{"true"}, Timeout: 60000, Required: true, Kind: KindCheck, Filetypes: []string{}, Env: []string{}}}
			return c
		}(), ""},
		{"name and argv limits", "[checks." + strings.Repeat("a", 64) + "]\ncmd = " + quotedArray(128, "x") + "\nenv = " + quotedArray(128, "A"), func() Config {
			c := Default()
			c.Checks = []Check{{Name: strings.Repeat("a", 64), Cmd: strings.Split(strings.Repeat("x", 128), ""),
				Timeout: 60000, Required: true, Kind: KindCheck, Filetypes: []string{}, Env: strings.Split(strings.Repeat("A", 128), "")}}
			return c
		}(), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := parse([]byte(tc.doc))
			if err != nil {
				t.Fatalf("parse(%q) = %v", tc.doc, err)
			}
			if diff := cmp.Diff(tc.want, p.cfg); diff != "" {
				t.Errorf("parse(%q) config mismatch (-want +got):\n%s", tc.doc, diff)
			}
			if p.workspaceDir != tc.ws || p.hasWorkspace != (tc.ws != "") {
				t.Errorf("parse(%q) workspace_dir = %q (%v), want %q", tc.doc, p.workspaceDir, p.hasWorkspace, tc.ws)
			}
			if err := p.cfg.Validate(); err != nil {
				t.Errorf("parse(%q) config fails Validate: %v", tc.doc, err)
			}
		})
	}
}

// TestParseCheckOrder checks that checks keep the file's order whatever
// TOML form declares them.
func TestParseCheckOrder(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []string
	}{
		{"tables", check("zeta") + check("alpha") + check("mid"), []string{"zeta", "alpha", "mid"}},
		{"dotted keys", "checks.b.cmd = [\"x\"]\nchecks.a.cmd = [\"y\"]\n", []string{"b", "a"}},
		{"inline table", "checks = { b = { cmd = [\"x\"] }, a = { cmd = [\"y\"] } }\n", []string{"b", "a"}},
		{"mixed", "[checks]\nz.cmd = [\"x\"]\n[checks.a]\ncmd = [\"y\"]\n", []string{"z", "a"}},
		{"32 checks descending", func() string {
			var b strings.Builder
			for i := 31; i >= 0; i-- {
				b.WriteString(check(fmt.Sprintf("c%02d", i)))
			}
			return b.String()
		}(), func() []string {
			var names []string
			for i := 31; i >= 0; i-- {
				names = append(names, fmt.Sprintf("c%02d", i))
			}
			return names
		}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := parse([]byte(tc.doc))
			if err != nil {
				t.Fatalf("parse(%q) = %v", tc.doc, err)
			}
			var got []string
			for _, c := range p.cfg.Checks {
				got = append(got, c.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parse(%q) check order (-want +got):\n%s", tc.doc, diff)
			}
		})
	}
}

// TestParseSpecExample decodes the annotated example of doc/design.md §3.
func TestParseSpecExample(t *testing.T) {
	const doc = `workspace_dir = "/abs/or/relative/to/this/file"   # before any table

[ollama]
base_url = "http://127.0.0.1:11434"
model = "qwen2.5-coder:7b"
api = "native"
temperature = 0.2
context_length = 16384
timeout = 120
allow_remote = false
think = false

[models]
planner = ""
coder = ""
reviewer = ""

[agent]
max_iterations = 6
max_cycles = 2
max_tool_calls = 64
max_context_chars = 100000
max_task_chars = 16000

[checks.tests]
cmd = ["go", "test", "./..."]
timeout = 60000
required = true
kind = "test"
filetypes = ["go"]
env = ["PATH", "HOME"]
`
	p, err := parse([]byte(doc))
	if err != nil {
		t.Fatalf("parse(spec example) = %v", err)
	}
	want := Default()
	want.Checks = []Check{{Name: "tests", Cmd: []string{"go", "test", "./..."}, Timeout: 60000, Required: true,
		Kind: KindTest, Filetypes: []string{"go"}, Env: []string{"PATH", "HOME"}}}
	if diff := cmp.Diff(want, p.cfg); diff != "" {
		t.Errorf("parse(spec example) mismatch (-want +got):\n%s", diff)
	}
}
