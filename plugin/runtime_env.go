package plugin

import (
	"context"
	"fmt"
	iofs "io/fs"
	"log/slog"
	"time"

	"github.com/neovim/go-client/nvim"

	"flow/bufferfs"
	"flow/runtime/agent"
	"flow/runtime/editor"
)

// FileIOEditor names buffer-aware file I/O in status reports.
const FileIOEditor = agent.FileIOEditor

var _ editor.Session = (*Bridge)(nil)

// ServiceOptions fills opts for this environment, so that an
// [agent.Service] built with them works through the editor: FS is the
// buffer-aware file system and Editor the bridge, the one editor session
// from which the service derives the editor tools, coverage evidence, the
// freshness rules of checks and verification, and the editor part of
// status reports. Without a bridge only FS is set.
func (env RuntimeEnv) ServiceOptions(opts agent.ServiceOptions) agent.ServiceOptions {
	opts.FS = env.FS
	if env.Editor != nil {
		opts.Editor = env.Editor
		opts.FileIO = FileIOEditor
	}
	return opts
}

// SocketOptions configure [AttachSocket].
type SocketOptions struct {
	// Module is the editor tool module; "" means [DefaultSocketModule].
	Module string
	// Timeout bounds the connection, its first request and every editor
	// request; 0 means DefaultTimeout.
	Timeout time.Duration
	// Logger receives the bridge's debug records; nil discards them.
	Logger *slog.Logger
}

// AttachSocket connects to the Neovim listening at socket (`--nvim
// SOCKET`; see [DialSocket] for the rules) and returns the environment for
// a runtime over disk that uses it: a [Bridge] to the module and a
// [bufferfs.Editor]. The bridge's freshness probe falls back on the first
// file of disk's walk (see [BridgeOptions.Anchor]). The caller closes the
// returned client when done.
func AttachSocket(socket string, disk *bufferfs.Disk, trusted bool, opts SocketOptions) (RuntimeEnv, *nvim.Nvim, error) {
	module := moduleOr(opts.Module, DefaultSocketModule)
	v, err := DialSocket(socket, opts.Timeout)
	if err != nil {
		return RuntimeEnv{}, nil, err
	}
	b, err := NewBridge(v, BridgeOptions{Module: module, Timeout: opts.Timeout, Root: disk.Root(),
		Anchor: DiskAnchor(disk), Logger: opts.Logger})
	if err != nil {
		v.Close()
		return RuntimeEnv{}, nil, fmt.Errorf("editor bridge: %w", err)
	}
	env := RuntimeEnv{Root: disk.Root(), Trusted: trusted, FS: bufferfs.NewEditor(disk, b), Editor: b}
	return env, v, nil
}

// DiskAnchor returns a [BridgeOptions.Anchor] that names the first regular
// file of fs's walk: a file flow itself may read, so the editor is only
// ever asked about paths flow accepts.
func DiskAnchor(fs bufferfs.FS) func(ctx context.Context) string {
	return func(ctx context.Context) string {
		first := ""
		_ = fs.Walk(ctx, ".", func(path string, _ bufferfs.Info) error {
			first = path
			return iofs.SkipAll
		})
		return first
	}
}
