package config

import (
	"path/filepath"
	"strings"
	"testing"
)

// loadText loads doc as the --config file.
func loadText(t *testing.T, doc string) (*Config, error) {
	t.Helper()
	root := tempDir(t)
	noUser := env(map[string]string{"XDG_CONFIG_HOME": filepath.Join(root, "none"), "HOME": root})
	path := write(t, filepath.Join(root, "c.toml"), doc)
	return Load(LoadOptions{ConfigFile: path, Cwd: root, Getenv: noUser})
}

const gpuServer = "[servers.gpu]\nbase_url = \"http://127.0.0.1:8080\"\nmodel = \"big\"\napi = \"openai\"\n"

// TestServersPerRole: a role sent to a [servers.NAME] table gets that
// server's values and model; the others stay on [ollama]; a role's model
// and models.ROLE override the server's model.
func TestServersPerRole(t *testing.T) {
	cfg, err := loadText(t, "[ollama]\nmodel = \"small\"\n"+gpuServer+"context_length = 32768\ntemperature = 0\n"+
		"[roles.reviewer]\nserver = \"gpu\"\n[roles.planner]\nserver = \"ollama\"\nmodel = \"mid\"\n")
	if err != nil {
		t.Fatalf("Load() = %v", err)
	}
	want := map[string][2]string{
		RolePlanner: {"ollama", "mid"}, RoleCoder: {"ollama", "small"}, RoleReviewer: {"gpu", "big"},
	}
	for role, w := range want {
		name, _, ok := cfg.ServerFor(role)
		if name != w[0] || !ok || cfg.ModelFor(role) != w[1] {
			t.Errorf("%s: server %q (ok %v), model %q; want %q, %q", role, name, ok, cfg.ModelFor(role), w[0], w[1])
		}
	}
	_, o, _ := cfg.ServerFor(RoleReviewer)
	if o.BaseURL != "http://127.0.0.1:8080" || o.API != APIOpenAI || o.ContextLength != 32768 || o.Temperature != 0 || o.Timeout != 120 {
		t.Errorf("reviewer's server = %+v, want gpu's values on the built-in defaults", o)
	}

	cfg, err = loadText(t, gpuServer+"[models]\nreviewer = \"other\"\n[roles.reviewer]\nserver = \"gpu\"\n")
	if err != nil {
		t.Fatalf("Load() = %v", err)
	}
	if got := cfg.ModelFor(RoleReviewer); got != "other" {
		t.Errorf("models.reviewer on gpu: ModelFor = %q, want other", got)
	}
	cfg.UseModel("one")
	for _, role := range Roles {
		if got := cfg.ModelFor(role); got != "one" {
			t.Errorf("after UseModel, ModelFor(%s) = %q, want one", role, got)
		}
	}
}

// TestServersInvalid holds every rule of the server and role tables: each
// document must be refused with a message containing want.
func TestServersInvalid(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"unknown server key", gpuServer + "num_ctx = 4096\n", "Unknown servers.gpu options: num_ctx"},
		{"remote without allow_remote", "[servers.gpu]\nbase_url = \"http://192.168.1.5:8000\"\nmodel = \"m\"\n",
			"Invalid servers.gpu.base_url: non-loopback Ollama requires explicit servers.gpu.allow_remote=true"},
		{"URL with /v1", "[servers.gpu]\nbase_url = \"http://127.0.0.1:8000/v1\"\nmodel = \"m\"\n", `Invalid servers.gpu.base_url: drop the path "/v1"`},
		{"no base_url", "[servers.gpu]\nmodel = \"m\"\n", "servers.gpu.base_url is required"},
		{"no model", "[servers.gpu]\nbase_url = \"http://127.0.0.1:8000\"\n", "servers.gpu.model is required"},
		{"bad api", gpuServer + "[servers.b]\nbase_url = \"http://127.0.0.1:1\"\nmodel = \"m\"\napi = \"grpc\"\n", `servers.b.api must be "native" or "openai"`},
		{"bad window", "[servers.gpu]\nbase_url = \"http://127.0.0.1:8000\"\nmodel = \"m\"\ncontext_length = 100\n", "servers.gpu.context_length must be an integer between 1024 and 131072"},
		{"bad timeout", "[servers.gpu]\nbase_url = \"http://127.0.0.1:8000\"\nmodel = \"m\"\ntimeout = 0\n", "servers.gpu.timeout must be a number between 0.1 and 600"},
		{"string think", "[servers.gpu]\nbase_url = \"http://127.0.0.1:8000\"\nmodel = \"m\"\nthink = \"yes\"\n", "servers.gpu.think must be a boolean"},
		{"server named ollama", "[servers.ollama]\nbase_url = \"http://127.0.0.1:8000\"\nmodel = \"m\"\n", "the name ollama is the [ollama] table's"},
		{"bad server name", "[servers.\"a b\"]\nbase_url = \"http://127.0.0.1:8000\"\nmodel = \"m\"\n", "Invalid server name: 'a b'"},
		{"servers not a table of tables", "[servers]\nurl = \"x\"\n", "servers.url must be a TOML table"},
		{"missing server", gpuServer + "[roles.reviewer]\nserver = \"gpux\"\n",
			`roles.reviewer.server names the server "gpux", which is not defined: the reviewer's requests would have nowhere to go; add a [servers.gpux] table with base_url and model, or name one of "ollama" (the [ollama] table), "gpu"`},
		{"unknown role", gpuServer + "[roles.writer]\nserver = \"gpu\"\n", "Unknown roles options: writer"},
		{"role typo", gpuServer + "[roles.reviwer]\nserver = \"gpu\"\n", "Unknown roles options: reviwer (did you mean reviewer?)"},
		{"unknown role key", gpuServer + "[roles.reviewer]\nhost = \"gpu\"\n", "Unknown roles.reviewer options: host"},
		{"role as a string", gpuServer + "[roles]\nreviewer = \"gpu\"\n", `roles.reviewer must be a table: write [roles.reviewer] with server = "gpu"`},
		{"empty role server", gpuServer + "[roles.reviewer]\nserver = \"\"\n", "roles.reviewer.server must be a nonempty string"},
		// The other spelling: [models] names models, [roles] servers.
		{"models names a server", gpuServer + "[models]\nreviewer = \"gpu\"\n",
			`models.reviewer = "gpu" names a server, and [models] names models: send the reviewer to that server with [roles.reviewer] server = "gpu"`},
		{"models as a table", gpuServer + "[models.reviewer]\nserver = \"gpu\"\n",
			`models.reviewer must be a string, the model's name (a role's server is chosen with [roles.reviewer] server = "NAME")`},
		{"model set twice", gpuServer + "[models]\nreviewer = \"a\"\n[roles.reviewer]\nserver = \"gpu\"\nmodel = \"b\"\n",
			"the reviewer's model is set twice, by models.reviewer and roles.reviewer.model; keep one"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadText(t, tc.doc)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load(%q) = %v, want an error containing %q", tc.doc, err, tc.want)
			}
			if _, ok := err.(*Error); !ok {
				t.Errorf("Load() error is %T, want *Error (a configuration error, exit 2)", err)
			}
		})
	}
}

// TestServersValidate applies the rules to a Config built in code.
func TestServersValidate(t *testing.T) {
	c := Default()
	c.Servers = []Server{NewServer("gpu", c.Ollama), NewServer("gpu", c.Ollama)}
	c.Servers[1].BaseURL = "http://10.0.0.1:8000"
	c.Roles = []Role{{Name: RoleCoder, Server: "nowhere"}}
	err := c.Validate()
	for _, want := range []string{"Duplicate server name: 'gpu'", "servers.gpu.allow_remote=true", `roles.coder.server names the server "nowhere"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to contain %q", err, want)
		}
	}
}
