package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strings"
)

// maxFileSize bounds a configuration file; real ones are a few kilobytes.
const maxFileSize = 1 << 20

// LoadOptions are the command-line inputs of [Load].
type LoadOptions struct {
	// ConfigFile is --config; "" selects the user file.
	ConfigFile string
	// Workspace is --workspace, anchored at Cwd; "" uses workspace_dir
	// from the file, or else Cwd.
	Workspace string
	// Model is --model; when set it must be non-blank after trimming, and it
	// sets ollama.model and clears every per-role model.
	Model string
	// Trusted is --trusted, the only source of trust.
	Trusted bool
	// Cwd is the process working directory used for anchoring; "" means
	// os.Getwd.
	Cwd string
	// Getenv reads XDG_CONFIG_HOME and HOME; nil means os.Getenv. Nothing
	// else is read from the environment.
	Getenv func(string) string
}

// Load returns the effective configuration: defaults, then the one selected
// file, then the command-line overrides, validated, with the workspace
// resolved and warnings computed. Configuration problems are returned as an
// *[Error].
func Load(opts LoadOptions) (*Config, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	cwd, err := workingDir(opts.Cwd)
	if err != nil {
		return nil, err
	}

	cfg := Default()
	path, explicit, err := selectFile(opts.ConfigFile, cwd, getenv)
	if err != nil {
		return nil, err
	}
	var p *parsed
	if path != "" {
		p, path, err = loadFile(path, !explicit)
		if err != nil {
			return nil, err
		}
		if p != nil {
			cfg = p.cfg
			cfg.ConfigPath = path
		}
	}

	if opts.Model != "" {
		m := strings.TrimSpace(opts.Model)
		if m == "" {
			return nil, errorf(nil, "--model must be a nonempty string")
		}
		cfg.UseModel(m)
	}
	cfg.Trusted = opts.Trusted
	if err := cfg.Validate(); err != nil {
		return nil, err
	}

	// The workspace: --workspace against the CWD, else workspace_dir against
	// the file's directory, else the CWD itself.
	ws, anchor := cwd, cwd
	switch {
	case opts.Workspace != "":
		ws = opts.Workspace
	case p != nil && p.hasWorkspace:
		ws, anchor = p.workspaceDir, filepath.Dir(path)
	}
	cfg.Workspace, err = resolveWorkspace(ws, anchor, getenv)
	if err != nil {
		return nil, err
	}
	cfg.Warnings = projectWarnings(cfg.Workspace, cfg.ConfigPath)
	return &cfg, nil
}

// workingDir returns cwd made absolute, or the process working directory.
// Failures are configuration errors, like a missing workspace.
func workingDir(cwd string) (string, error) {
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", errorf(err, "Cannot determine the working directory: %v", err)
		}
		return wd, nil
	}
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return "", errorf(err, "Cannot determine the working directory: %v", err)
	}
	return abs, nil
}

// selectFile returns the absolute path of the file to load and whether it
// was named explicitly: --config, or else the user file (which may not
// exist), or "" when no user file can be located at all.
func selectFile(explicit, cwd string, getenv func(string) string) (string, bool, error) {
	if explicit == "" {
		return UserFile(getenv), false, nil
	}
	path, err := expandHome(explicit, getenv)
	if err != nil {
		return "", true, errorf(err, "Cannot load configuration %s: %v", showPath(explicit), err)
	}
	return anchorAt(path, cwd), true, nil
}

// UserFile returns the path of the user configuration file,
// $XDG_CONFIG_HOME/flow/config.toml. An unset, empty or relative
// XDG_CONFIG_HOME means $HOME/.config (the XDG base directory spec ignores
// relative values), so a file under the current directory is never picked
// up by accident. It returns "" when no home directory is known either.
func UserFile(getenv func(string) string) string {
	if getenv == nil {
		getenv = os.Getenv
	}
	if x := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "flow", "config.toml")
	}
	home, err := homeDir(getenv)
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".config", "flow", "config.toml")
}

// loadFile reads and decodes the file at the absolute path and returns it
// with its symlink-resolved path. A missing optional file (the user file)
// yields nil and no error.
func loadFile(path string, optional bool) (*parsed, string, error) {
	data, err := readFile(path)
	if optional && errors.Is(err, fs.ErrNotExist) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", errorf(err, "Cannot load configuration %s: %s", showPath(path), reason(err))
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	p, err := parse(data)
	if err != nil {
		var ce *Error
		if errors.As(err, &ce) {
			ce.locate(path, data)
			return nil, "", ce
		}
		return nil, "", errorf(err, "Cannot load configuration %s: %s", showPath(path), reason(err))
	}
	return p, path, nil
}

// readFile reads at most maxFileSize bytes of path.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("file is larger than %d bytes", maxFileSize)
	}
	return data, nil
}

// reason strips the path an *fs.PathError repeats.
func reason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// resolveWorkspace expands ~ in dir, anchors it, follows symlinks and
// requires an existing directory.
func resolveWorkspace(dir, anchor string, getenv func(string) string) (string, error) {
	expanded, err := expandHome(dir, getenv)
	if err != nil {
		return "", errorf(err, "Workspace must already be a directory: %s", showPath(dir))
	}
	abs := anchorAt(expanded, anchor)
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", errorf(err, "Workspace must already be a directory: %s", showPath(abs))
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", errorf(err, "Workspace must already be a directory: %s", showPath(abs))
	}
	if !fi.IsDir() {
		return "", errorf(nil, "Workspace must already be a directory: %s", showPath(abs))
	}
	return real, nil
}

// projectWarnings reports the workspace's own configuration files, which
// are never loaded, unless one of them is the file that was loaded.
func projectWarnings(workspace, loaded string) []string {
	warnings := []string{}
	var loadedInfo os.FileInfo
	if loaded != "" {
		loadedInfo, _ = os.Stat(loaded)
	}
	for _, name := range []string{"config.toml", ".flow.toml"} {
		path := filepath.Join(workspace, name)
		if _, err := os.Lstat(path); err != nil || path == loaded {
			continue
		}
		if loadedInfo != nil {
			if fi, err := os.Stat(path); err == nil && os.SameFile(fi, loadedInfo) {
				continue
			}
		}
		warnings = append(warnings, fmt.Sprintf("Ignored project configuration: %s; use --config explicitly", path))
	}
	return warnings
}

// anchorAt makes path absolute against dir and cleans it.
func anchorAt(path, dir string) string {
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	return filepath.Clean(path)
}

// expandHome replaces a leading "~" or "~/" with the home directory and a
// leading "~name" with that user's home directory, as shells do.
func expandHome(path string, getenv func(string) string) (string, error) {
	if !strings.HasPrefix(path, "~") {
		return path, nil
	}
	name, rest, _ := strings.Cut(path[1:], "/")
	var home string
	if name == "" {
		h, err := homeDir(getenv)
		if err != nil {
			return "", err
		}
		home = h
	} else {
		u, err := user.Lookup(name)
		if err != nil {
			// Like a shell, leave an unknown ~name alone: it is then an
			// ordinary relative name.
			return path, nil
		}
		home = u.HomeDir
	}
	return filepath.Join(home, rest), nil
}

// homeDir returns $HOME when it is absolute, else the account's home
// directory.
func homeDir(getenv func(string) string) (string, error) {
	if h := getenv("HOME"); filepath.IsAbs(h) {
		return h, nil
	}
	u, err := user.Current()
	if err != nil {
		return "", fmt.Errorf("cannot determine home directory: %w", err)
	}
	if !filepath.IsAbs(u.HomeDir) {
		return "", errors.New("cannot determine home directory")
	}
	return u.HomeDir, nil
}
