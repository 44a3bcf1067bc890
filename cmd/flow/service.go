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
	cfg     *config.Config
	disk    *bufferfs.Disk
	backend *ollama.Client
	svc     *agent.Service
}

// Close releases the workspace.
func (w *workspaceRuntime) Close() { w.disk.Close() }

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
	var warnings []string
	store, err := openJournal(e, cfg)
	if err != nil {
		warnings = append(warnings, fmt.Sprintf("write journal unavailable (undo and history are off): %v", err))
	}
	protected := cfg.Protected()
	if store != nil {
		// The journal must stay out of the model's reach even when the
		// state directory lies inside the workspace (a workspace at $HOME).
		protected = append(protected, store.Dir())
	}
	disk, err := bufferfs.NewDisk(cfg.Workspace, bufferfs.DiskOptions{Trusted: cfg.Trusted || writable, Protected: protected})
	if err != nil {
		return nil, fmt.Errorf("open workspace %s: %w", cfg.Workspace, err)
	}
	svc := agent.NewService(cfg, agent.ServiceOptions{
		FS: disk, Backend: backend, Catalog: backend, Store: store,
		Version: flowVersion(), FileIO: disk.Mode(), Warnings: warnings,
	})
	return &workspaceRuntime{cfg: cfg, disk: disk, backend: backend, svc: svc}, nil
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
