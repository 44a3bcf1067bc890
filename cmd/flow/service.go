package main

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"flow/bufferfs"
	"flow/plugin"
	"flow/runtime/agent"
	"flow/runtime/config"
	"flow/runtime/journal"
	"flow/runtime/measure"
	"flow/runtime/model"
	"flow/runtime/model/ollama"
)

// workspaceRuntime is one command's runtime over the configured workspace.
type workspaceRuntime struct {
	cfg     *config.Config
	disk    *bufferfs.Disk
	backend *ollama.Client // [ollama]'s
	// servers are the clients of the [servers.NAME] tables, by name.
	servers map[string]*ollama.Client
	store   *journal.Store // nil when the journal could not be opened
	// measures keeps the reviewer's measurements (doc/design.md §8.10);
	// its Path is "" when there is no state directory.
	measures measure.Store
	warnings []string
	// home and userFile name the user's home and user configuration file,
	// for the onboarding warnings.
	home, userFile string
}

// Close releases the workspace.
func (w *workspaceRuntime) Close() { w.disk.Close() }

// service builds the command's one runtime service: over the disk, or,
// with env, over the editor attachment (its buffer-aware file system and
// its editor session).
func (w *workspaceRuntime) service(env *plugin.RuntimeEnv) *agent.Service {
	opts := agent.ServiceOptions{
		FS: w.disk, Backend: w.backend, Servers: w.roleServers(), Catalog: w.backend, Store: w.store,
		Version: flowVersion(), FileIO: w.disk.Mode(), Warnings: w.warnings,
		Home: w.home, UserFile: w.userFile,
	}
	if w.measures.Path != "" {
		opts.Reviewer = w.measures.Standing
	}
	if env != nil {
		opts = env.ServiceOptions(opts)
	}
	return agent.NewService(w.cfg, opts)
}

// openRuntime loads the configuration and builds the runtime service. With
// writable set, the workspace is opened for writing even without --trusted
// (undo restores the operator's own files, it is not a model action).
func openRuntime(e *env, writable bool) (*workspaceRuntime, error) {
	cfg, err := loadConfig(e)
	if err != nil {
		return nil, err
	}
	backend, err := newBackend(config.DefaultServer, cfg.Ollama)
	if err != nil {
		return nil, err
	}
	w := &workspaceRuntime{cfg: cfg, backend: backend, servers: map[string]*ollama.Client{}, home: e.getenv("HOME"), userFile: config.UserFile(e.getenv)}
	for _, s := range cfg.Servers {
		if w.servers[s.Name], err = newBackend("servers."+s.Name, s.Settings()); err != nil {
			return nil, err
		}
	}
	if dir, err := journal.StateDir(e.getenv); err == nil {
		w.measures.Path = filepath.Join(dir, measure.StoreFile)
	}
	w.store, err = openJournal(e, cfg)
	if err != nil {
		w.warnings = append(w.warnings, fmt.Sprintf("write journal unavailable (undo and history are off): %v", err))
	}
	w.disk, err = bufferfs.NewDisk(cfg.Workspace, bufferfs.DiskOptions{
		Trusted:      cfg.Trusted || writable,
		Protected:    cfg.Protected(),
		Private:      privatePaths(e, cfg, w.store),
		ProtectGlobs: cfg.Verify.Protect,
	})
	if err != nil {
		return nil, fmt.Errorf("open workspace %s: %w", cfg.Workspace, err)
	}
	return w, nil
}

// privatePaths are flow's own files, which no file tool may read or write
// even when they lie inside the workspace (a workspace at $HOME): the whole
// state directory (every workspace's journal and lock), the log file and
// the loaded configuration.
func privatePaths(e *env, cfg *config.Config, store *journal.Store) []string {
	var p []string
	if dir, err := journal.StateDir(e.getenv); err == nil {
		p = append(p, dir)
	} else if store != nil {
		p = append(p, store.Dir())
	}
	if log := e.getenv("FLOW_LOG_FILE"); log != "" {
		p = append(p, log)
	}
	if cfg.ConfigPath != "" {
		p = append(p, cfg.ConfigPath)
	}
	return p
}

// newBackend builds the client of one server, the table named table
// ([ollama] or [servers.NAME]); it never contacts the server.
func newBackend(table string, o config.Ollama) (*ollama.Client, error) {
	c, err := ollama.New(ollama.Options{
		BaseURL:       o.BaseURL,
		API:           o.API,
		Temperature:   o.Temperature,
		ContextLength: o.ContextLength,
		Timeout:       time.Duration(o.Timeout * float64(time.Second)),
		AllowRemote:   o.AllowRemote,
		Think:         o.Think,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", table, err)
	}
	return c, nil
}

// roleServers returns the [servers.NAME] clients as the runtime takes
// them.
func (w *workspaceRuntime) roleServers() map[string]model.Backend {
	out := make(map[string]model.Backend, len(w.servers))
	for name, c := range w.servers {
		out[name] = c
	}
	return out
}

// client returns the client of role's server.
func (w *workspaceRuntime) client(role string) *ollama.Client {
	if name, _, _ := w.cfg.ServerFor(role); name != config.DefaultServer {
		return w.servers[name]
	}
	return w.backend
}

// openJournal opens the workspace's journal under the state directory.
func openJournal(e *env, cfg *config.Config) (*journal.Store, error) {
	dir, err := journal.StateDir(e.getenv)
	if err != nil {
		return nil, err
	}
	return journal.Open(dir, cfg.Workspace, journal.Options{})
}

// attachEditor connects to the editor of --nvim (doc/design.md §11.3) for a command
// that works through it (serve, run, check, status): the environment whose
// file system is buffer-aware and whose session is the bridge, and a
// function that closes the connection. Without --nvim it returns nil. A
// socket that is not private, not a socket, or does not answer within the
// editor timeout is an error: never a silent fall back to disk.
func (w *workspaceRuntime) attachEditor(e *env, logger *slog.Logger) (*plugin.RuntimeEnv, func(), error) {
	if e.opts.nvim == "" {
		return nil, func() {}, nil
	}
	attached, v, err := plugin.AttachSocket(e.opts.nvim, w.disk, w.cfg.Trusted, plugin.SocketOptions{
		Module: e.opts.editorModule, Timeout: editorTimeout(e), Logger: logger,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("--nvim %s: %w", e.opts.nvim, err)
	}
	return &attached, func() { v.Close() }, nil
}

// openService opens the runtime of a report command (run, check, status)
// and its service: through the editor with --nvim, exactly as `flow serve
// --nvim` has it, else over the disk. closeAll releases everything; bridge
// calls are logged to $FLOW_LOG_FILE at debug level.
func openService(e *env) (svc *agent.Service, closeAll func(), err error) {
	_, svc, closeAll, err = openServiceRuntime(e)
	return svc, closeAll, err
}

// openServiceRuntime is [openService] that also returns the workspace's
// runtime (its journal store, for the task records).
func openServiceRuntime(e *env) (rt *workspaceRuntime, svc *agent.Service, closeAll func(), err error) {
	rt, logger, closeRT, err := openServer(e)
	if err != nil {
		return nil, nil, nil, err
	}
	env, closeEditor, err := rt.attachEditor(e, logger)
	if err != nil {
		closeRT()
		return nil, nil, nil, err
	}
	return rt, rt.service(env), func() { closeEditor(); closeRT() }, nil
}
