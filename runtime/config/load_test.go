package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// env returns a Getenv reading only m, so tests never see the real
// environment.
func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// tempDir returns a symlink-free temporary directory.
func tempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// write creates path (and its parents) with content.
func write(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func mkdir(t *testing.T, path string) string {
	t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// wantConfigError fails unless err is an *Error with exactly message want.
func wantConfigError(t *testing.T, err error, want string) *Error {
	t.Helper()
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("Load() error = %v (%T), want *Error %q", err, err, want)
	}
	if got := err.Error(); got != want {
		t.Errorf("Load() error = %q, want %q", got, want)
	}
	return ce
}

func TestLoadFileSelection(t *testing.T) {
	t.Parallel()
	root := tempDir(t)
	home := mkdir(t, filepath.Join(root, "home"))
	cwd := mkdir(t, filepath.Join(root, "cwd"))
	// A flow/config.toml under the CWD must never be picked up: it is what
	// an empty or relative XDG_CONFIG_HOME would point at.
	write(t, filepath.Join(cwd, "flow", "config.toml"), "[ollama]\nmodel = \"from-cwd\"\n")
	xdg := filepath.Join(root, "xdg")
	xdgFile := write(t, filepath.Join(xdg, "flow", "config.toml"), "[ollama]\nmodel = \"from-xdg\"\n")
	homeWithFile := mkdir(t, filepath.Join(root, "home2"))
	homeFile := write(t, filepath.Join(homeWithFile, ".config", "flow", "config.toml"), "[ollama]\nmodel = \"from-home\"\n")
	explicit := write(t, filepath.Join(cwd, "conf", "flow.toml"), "[ollama]\nmodel = \"explicit\"\n")
	homeExplicit := write(t, filepath.Join(home, "mine.toml"), "[ollama]\nmodel = \"tilde\"\n")
	empty := write(t, filepath.Join(root, "empty.toml"), "")
	link := filepath.Join(root, "link.toml")
	if err := os.Symlink(explicit, link); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name      string
		env       map[string]string
		config    string
		wantModel string
		wantPath  string
	}{
		{"XDG_CONFIG_HOME set", map[string]string{"XDG_CONFIG_HOME": xdg, "HOME": home}, "", "from-xdg", xdgFile},
		{"XDG_CONFIG_HOME empty", map[string]string{"XDG_CONFIG_HOME": "", "HOME": home}, "", "qwen2.5-coder:7b", ""},
		{"XDG_CONFIG_HOME relative", map[string]string{"XDG_CONFIG_HOME": ".", "HOME": home}, "", "qwen2.5-coder:7b", ""},
		{"XDG_CONFIG_HOME unset uses HOME", map[string]string{"HOME": homeWithFile}, "", "from-home", homeFile},
		{"empty XDG_CONFIG_HOME uses HOME", map[string]string{"XDG_CONFIG_HOME": "", "HOME": homeWithFile}, "", "from-home", homeFile},
		{"no user file", map[string]string{"XDG_CONFIG_HOME": filepath.Join(root, "none"), "HOME": home}, "", "qwen2.5-coder:7b", ""},
		{"--config relative to cwd", map[string]string{"XDG_CONFIG_HOME": xdg}, "conf/flow.toml", "explicit", explicit},
		{"--config beats the user file", map[string]string{"XDG_CONFIG_HOME": xdg}, explicit, "explicit", explicit},
		{"--config with tilde", map[string]string{"HOME": home}, "~/mine.toml", "tilde", homeExplicit},
		{"--config through a symlink", map[string]string{}, link, "explicit", explicit},
		{"empty --config file is recorded", map[string]string{}, empty, "qwen2.5-coder:7b", empty},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := Load(LoadOptions{ConfigFile: tc.config, Cwd: cwd, Getenv: env(tc.env)})
			if err != nil {
				t.Fatalf("Load(%q) = %v", tc.config, err)
			}
			if cfg.Ollama.Model != tc.wantModel || cfg.ConfigPath != tc.wantPath {
				t.Errorf("Load(%q) model, path = %q, %q, want %q, %q", tc.config, cfg.Ollama.Model, cfg.ConfigPath, tc.wantModel, tc.wantPath)
			}
			if tc.wantPath != "" && !slices.Contains(cfg.Protected(), tc.wantPath) {
				t.Errorf("Load(%q).Protected() = %v, want it to contain %s", tc.config, cfg.Protected(), tc.wantPath)
			}
		})
	}
}

// TestLoadProcessEnvironment covers the nil Getenv default.
func TestLoadProcessEnvironment(t *testing.T) {
	root := tempDir(t)
	xdg := filepath.Join(root, "xdg")
	path := write(t, filepath.Join(xdg, "flow", "config.toml"), "[agent]\nmax_cycles = 3\n")
	t.Setenv("XDG_CONFIG_HOME", xdg)
	t.Setenv("HOME", root)
	cfg, err := Load(LoadOptions{Cwd: root})
	if err != nil {
		t.Fatalf("Load() = %v", err)
	}
	if cfg.Agent.MaxCycles != 3 || cfg.ConfigPath != path {
		t.Errorf("Load() max_cycles, path = %d, %q, want 3, %q", cfg.Agent.MaxCycles, cfg.ConfigPath, path)
	}
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	root := tempDir(t)
	noHome := map[string]string{"XDG_CONFIG_HOME": filepath.Join(root, "none")}
	bad := write(t, filepath.Join(root, "bad.toml"), "[ollama\n")
	schema := write(t, filepath.Join(root, "schema.toml"), "[agent]\nmax_cycles = 1000\n")
	noCmd := write(t, filepath.Join(root, "nocmd.toml"), "[checks.tests]\nkind = \"test\"\n")
	wsFile := write(t, filepath.Join(root, "file"), "x")
	userXDG := filepath.Join(root, "userxdg")
	userBad := write(t, filepath.Join(userXDG, "flow", "config.toml"), "trusted = true\n")
	relWS := write(t, filepath.Join(root, "cfg", "rel.toml"), "workspace_dir = \"missing\"\n")

	tests := []struct {
		name     string
		opts     LoadOptions
		want     string // exact message, or prefix when it ends in "..."
		wantPath string
		notExist bool
	}{
		{"missing --config", LoadOptions{ConfigFile: "nope.toml"},
			"Cannot load configuration " + filepath.Join(root, "nope.toml") + ": no such file or directory", "", true},
		{"--config is a directory", LoadOptions{ConfigFile: root},
			"Cannot load configuration " + root + ": is a directory", "", false},
		{"invalid TOML", LoadOptions{ConfigFile: bad}, "Cannot load configuration " + bad + ": toml: ...", "", false},
		{"schema error names the file, line and key", LoadOptions{ConfigFile: schema}, schema + ":2: agent.max_cycles must be an integer between 1 and 5", schema, false},
		{"check without cmd", LoadOptions{ConfigFile: noCmd}, noCmd + ":1: checks.tests.cmd is required", noCmd, false},
		{"invalid user file", LoadOptions{Getenv: env(map[string]string{"XDG_CONFIG_HOME": userXDG})},
			userBad + ":1: Unknown config options: trusted. Trust is never read from a file: pass --trusted on the command line", userBad, false},
		{"missing --workspace", LoadOptions{Workspace: "missing"},
			"Workspace must already be a directory: " + filepath.Join(root, "missing"), "", true},
		{"missing workspace_dir", LoadOptions{ConfigFile: relWS},
			"Workspace must already be a directory: " + filepath.Join(root, "cfg", "missing"), "", true},
		{"workspace is a file", LoadOptions{Workspace: wsFile}, "Workspace must already be a directory: " + wsFile, "", false},
		{"blank --model", LoadOptions{Model: " \t"}, "--model must be a nonempty string", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts := tc.opts
			opts.Cwd = root
			if opts.Getenv == nil {
				opts.Getenv = env(noHome)
			}
			cfg, err := Load(opts)
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Load(%+v) = %v, %v; want *Error %q", tc.opts, cfg, err, tc.want)
			}
			if prefix, ok := strings.CutSuffix(tc.want, "..."); ok {
				if !strings.HasPrefix(err.Error(), prefix) {
					t.Errorf("Load(%+v) error = %q, want prefix %q", tc.opts, err, prefix)
				}
			} else if err.Error() != tc.want {
				t.Errorf("Load(%+v) error = %q, want %q", tc.opts, err, tc.want)
			}
			if ce.Path != tc.wantPath {
				t.Errorf("Load(%+v) error path = %q, want %q", tc.opts, ce.Path, tc.wantPath)
			}
			if got := errors.Is(err, fs.ErrNotExist); got != tc.notExist {
				t.Errorf("errors.Is(Load(%+v), fs.ErrNotExist) = %v, want %v", tc.opts, got, tc.notExist)
			}
		})
	}
}

func TestLoadWorkspace(t *testing.T) {
	t.Parallel()
	root := tempDir(t)
	noUser := env(map[string]string{"XDG_CONFIG_HOME": filepath.Join(root, "none"), "HOME": root})
	cwd := mkdir(t, filepath.Join(root, "cwd"))
	// Both the config directory and the CWD have a "proj": only the config
	// directory's may be chosen for a relative workspace_dir.
	cfgProj := mkdir(t, filepath.Join(root, "cfg", "proj"))
	mkdir(t, filepath.Join(cwd, "proj"))
	relCfg := write(t, filepath.Join(root, "cfg", "config.toml"), "workspace_dir = \"proj\"\n")
	dotCfg := write(t, filepath.Join(root, "cfg", "dot.toml"), "workspace_dir = \".\"\n")
	other := mkdir(t, filepath.Join(root, "other"))
	absCfg := write(t, filepath.Join(root, "cfg", "abs.toml"), "workspace_dir = \""+other+"\"\n")
	tildeCfg := write(t, filepath.Join(root, "cfg", "tilde.toml"), "workspace_dir = \"~/other\"\n")
	noWSCfg := write(t, filepath.Join(root, "cfg", "nows.toml"), "[agent]\nmax_cycles = 1\n")
	real := mkdir(t, filepath.Join(root, "real"))
	if err := os.Symlink(real, filepath.Join(cwd, "alias")); err != nil {
		t.Fatal(err)
	}
	cfgLinkDir := mkdir(t, filepath.Join(root, "linkdir"))
	// A config reached through a symlink anchors at the real file's directory.
	if err := os.Symlink(relCfg, filepath.Join(cfgLinkDir, "config.toml")); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name      string
		config    string
		workspace string
		want      string
	}{
		{"relative workspace_dir anchored at the config file", relCfg, "", cfgProj},
		{"workspace_dir . is the config directory", dotCfg, "", filepath.Join(root, "cfg")},
		{"absolute workspace_dir", absCfg, "", other},
		{"workspace_dir with tilde", tildeCfg, "", other},
		{"no workspace_dir means the cwd", noWSCfg, "", cwd},
		{"no file means the cwd", "", "", cwd},
		{"--workspace anchored at the cwd beats the file", relCfg, "proj", filepath.Join(cwd, "proj")},
		{"--workspace absolute", relCfg, other, other},
		{"--workspace with tilde", "", "~/other", other},
		{"symlinks resolved", "", "alias", real},
		{"config reached through a symlink", filepath.Join(cfgLinkDir, "config.toml"), "", cfgProj},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := Load(LoadOptions{ConfigFile: tc.config, Workspace: tc.workspace, Cwd: cwd, Getenv: noUser})
			if err != nil {
				t.Fatalf("Load(config %q, workspace %q) = %v", tc.config, tc.workspace, err)
			}
			if cfg.Workspace != tc.want {
				t.Errorf("Load(config %q, workspace %q).Workspace = %q, want %q", tc.config, tc.workspace, cfg.Workspace, tc.want)
			}
		})
	}
}

// TestLoadProjectConfigIgnored is the reference's
// test_project_config_and_plugins_never_auto_loaded: a workspace's own
// configuration never takes effect, even with --trusted, and is reported.
func TestLoadProjectConfigIgnored(t *testing.T) {
	t.Parallel()
	root := tempDir(t)
	noUser := env(map[string]string{"XDG_CONFIG_HOME": filepath.Join(root, "none"), "HOME": root})
	ws := mkdir(t, filepath.Join(root, "ws"))
	projCfg := write(t, filepath.Join(ws, "config.toml"), "[ollama]\nbase_url = \"http://127.0.0.1:9999\"\nmodel = \"evil\"\n")
	projFlow := write(t, filepath.Join(ws, ".flow.toml"), "[agent]\nmax_cycles = 5\n")
	warn := func(p string) string { return "Ignored project configuration: " + p + "; use --config explicitly" }

	t.Run("never loaded", func(t *testing.T) {
		t.Parallel()
		for _, cwd := range []string{ws, root} {
			cfg, err := Load(LoadOptions{Workspace: ws, Cwd: cwd, Trusted: true, Getenv: noUser})
			if err != nil {
				t.Fatalf("Load() = %v", err)
			}
			if cfg.Ollama.BaseURL != Default().Ollama.BaseURL || cfg.Ollama.Model != Default().Ollama.Model ||
				cfg.Agent.MaxCycles != Default().Agent.MaxCycles || cfg.ConfigPath != "" {
				t.Errorf("Load(cwd %s) took project configuration: ollama %+v, agent %+v, path %q", cwd, cfg.Ollama, cfg.Agent, cfg.ConfigPath)
			}
			if diff := cmp.Diff([]string{warn(projCfg), warn(projFlow)}, cfg.Warnings); diff != "" {
				t.Errorf("Load(cwd %s).Warnings (-want +got):\n%s", cwd, diff)
			}
			if !cfg.Trusted {
				t.Errorf("Load(Trusted: true).Trusted = false")
			}
		}
	})
	t.Run("explicitly loaded file is not warned about", func(t *testing.T) {
		t.Parallel()
		cfg, err := Load(LoadOptions{ConfigFile: projCfg, Workspace: ws, Cwd: root, Getenv: noUser})
		if err != nil {
			t.Fatalf("Load() = %v", err)
		}
		if cfg.Ollama.BaseURL != "http://127.0.0.1:9999" || cfg.ConfigPath != projCfg {
			t.Errorf("Load(--config %s) base_url, path = %q, %q", projCfg, cfg.Ollama.BaseURL, cfg.ConfigPath)
		}
		if diff := cmp.Diff([]string{warn(projFlow)}, cfg.Warnings); diff != "" {
			t.Errorf("Load().Warnings (-want +got):\n%s", diff)
		}
	})
	t.Run("loaded through another name", func(t *testing.T) {
		t.Parallel()
		link := filepath.Join(root, "approved.toml")
		if err := os.Link(projCfg, link); err != nil {
			t.Skipf("hard links unsupported: %v", err)
		}
		cfg, err := Load(LoadOptions{ConfigFile: link, Workspace: ws, Cwd: root, Getenv: noUser})
		if err != nil {
			t.Fatalf("Load() = %v", err)
		}
		if diff := cmp.Diff([]string{warn(projFlow)}, cfg.Warnings); diff != "" {
			t.Errorf("Load().Warnings (-want +got):\n%s", diff)
		}
	})
	t.Run("no project files no warnings", func(t *testing.T) {
		t.Parallel()
		cfg, err := Load(LoadOptions{Cwd: root, Getenv: noUser})
		if err != nil {
			t.Fatalf("Load() = %v", err)
		}
		if cfg.Warnings == nil || len(cfg.Warnings) != 0 {
			t.Errorf("Load().Warnings = %#v, want empty non-nil", cfg.Warnings)
		}
	})
}

// TestLoadOverrides is the reference's
// test_explicit_config_does_not_grant_trust_and_workspace_override_wins.
func TestLoadOverrides(t *testing.T) {
	t.Parallel()
	root := tempDir(t)
	noUser := env(map[string]string{"XDG_CONFIG_HOME": filepath.Join(root, "none"), "HOME": root})
	path := write(t, filepath.Join(root, "c.toml"), "[ollama]\nmodel = \"base\"\n[models]\nplanner = \"p\"\ncoder = \"c\"\n")

	cfg, err := Load(LoadOptions{ConfigFile: path, Cwd: root, Getenv: noUser})
	if err != nil {
		t.Fatalf("Load() = %v", err)
	}
	if cfg.Trusted {
		t.Errorf("Load(--config).Trusted = true, want false: a file never grants trust")
	}
	for role, want := range map[string]string{RolePlanner: "p", RoleCoder: "c", RoleReviewer: "base"} {
		if got := cfg.ModelFor(role); got != want {
			t.Errorf("ModelFor(%s) = %q, want %q", role, got, want)
		}
	}

	cfg, err = Load(LoadOptions{ConfigFile: path, Model: " llama3 ", Trusted: true, Cwd: root, Getenv: noUser})
	if err != nil {
		t.Fatalf("Load(--model) = %v", err)
	}
	if !cfg.Trusted {
		t.Errorf("Load(--trusted).Trusted = false")
	}
	if cfg.Models != (Models{}) || cfg.Ollama.Model != "llama3" {
		t.Errorf("Load(--model) ollama.model, models = %q, %+v, want llama3 and none", cfg.Ollama.Model, cfg.Models)
	}
	for _, role := range []string{RolePlanner, RoleCoder, RoleReviewer} {
		if got := cfg.ModelFor(role); got != "llama3" {
			t.Errorf("ModelFor(%s) after --model = %q, want llama3", role, got)
		}
	}
}

func TestUserFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"XDG", map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/x/flow/config.toml"},
		{"empty XDG", map[string]string{"XDG_CONFIG_HOME": "", "HOME": "/h"}, "/h/.config/flow/config.toml"},
		{"relative XDG", map[string]string{"XDG_CONFIG_HOME": "cfg", "HOME": "/h"}, "/h/.config/flow/config.toml"},
		{"unset XDG", map[string]string{"HOME": "/h"}, "/h/.config/flow/config.toml"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := UserFile(env(tc.env)); got != tc.want {
				t.Errorf("UserFile(%v) = %q, want %q", tc.env, got, tc.want)
			}
		})
	}
	// Without HOME the account's home directory is used; it is absolute
	// (or nothing is loaded at all).
	if got := UserFile(env(nil)); got != "" && !filepath.IsAbs(got) {
		t.Errorf("UserFile(no HOME) = %q, want an absolute path or empty", got)
	}
}
