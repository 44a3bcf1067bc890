package main

import (
	"fmt"
	"time"

	"flow/bufferfs"
	"flow/runtime/agent"
	"flow/runtime/config"
	"flow/runtime/journal"
	"flow/runtime/model/ollama"
)

// workspaceRuntime is one command's runtime over the configured workspace.
type workspaceRuntime struct {
	cfg      *config.Config
	disk     *bufferfs.Disk
	backend  *ollama.Client
	store    *journal.Store // nil when the journal could not be opened
	warnings []string
	svc      *agent.Service // over the disk; front ends with an editor build their own
}

// Close releases the workspace.
func (w *workspaceRuntime) Close() { w.disk.Close() }

// serviceOptions are the runtime service's collaborators over the disk; an
// editor attachment replaces the file system and adds its tools.
func (w *workspaceRuntime) serviceOptions() agent.ServiceOptions {
	return agent.ServiceOptions{
		FS: w.disk, Backend: w.backend, Catalog: w.backend, Store: w.store,
		Version: flowVersion(), FileIO: w.disk.Mode(), Warnings: w.warnings,
	}
}

// openRuntime loads the configuration and builds the runtime service. With
// writable set, the workspace is opened for writing even without --trusted
// (undo restores the operator's own files, it is not a model action).
func openRuntime(e *env, writable bool) (*workspaceRuntime, error) {
	cfg, err := loadConfig(e)
	if err != nil {
		return nil, err
	}
	backend, err := newBackend(cfg)
	if err != nil {
		return nil, err
	}
	w := &workspaceRuntime{cfg: cfg, backend: backend}
	w.store, err = openJournal(e, cfg)
	if err != nil {
		w.warnings = append(w.warnings, fmt.Sprintf("write journal unavailable (undo and history are off): %v", err))
	}
	protected := cfg.Protected()
	if w.store != nil {
		// The journal must stay out of the model's reach even when the
		// state directory lies inside the workspace (a workspace at $HOME).
		protected = append(protected, w.store.Dir())
	}
	w.disk, err = bufferfs.NewDisk(cfg.Workspace, bufferfs.DiskOptions{Trusted: cfg.Trusted || writable, Protected: protected, ProtectGlobs: cfg.Verify.Protect})
	if err != nil {
		return nil, fmt.Errorf("open workspace %s: %w", cfg.Workspace, err)
	}
	w.svc = agent.NewService(cfg, w.serviceOptions())
	return w, nil
}

// newBackend builds the model client; it never contacts the server.
func newBackend(cfg *config.Config) (*ollama.Client, error) {
	c, err := ollama.New(ollama.Options{
		BaseURL:       cfg.Ollama.BaseURL,
		API:           cfg.Ollama.API,
		Temperature:   cfg.Ollama.Temperature,
		ContextLength: cfg.Ollama.ContextLength,
		Timeout:       time.Duration(cfg.Ollama.Timeout * float64(time.Second)),
		AllowRemote:   cfg.Ollama.AllowRemote,
		Think:         cfg.Ollama.Think,
	})
	if err != nil {
		return nil, fmt.Errorf("ollama: %w", err)
	}
	return c, nil
}

// openJournal opens the workspace's journal under the state directory.
func openJournal(e *env, cfg *config.Config) (*journal.Store, error) {
	dir, err := journal.StateDir(e.getenv)
	if err != nil {
		return nil, err
	}
	return journal.Open(dir, cfg.Workspace, journal.Options{})
}
