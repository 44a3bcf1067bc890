package plugin

import (
	"fmt"
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
	}
	return opts
}

// AttachSocket connects to the Neovim listening at socket (`flow serve
// --nvim SOCKET`; see [DialSocket] for the rules) and returns the
// environment for a runtime over disk that uses it: a [Bridge] to module
// ("" = [DefaultSocketModule]) and a [bufferfs.Editor].
// The connection and first request are bounded by timeout. The caller
// closes the returned client when done.
func AttachSocket(socket string, disk *bufferfs.Disk, trusted bool, module string, timeout time.Duration) (RuntimeEnv, *nvim.Nvim, error) {
	module = moduleOr(module, DefaultSocketModule)
	v, err := DialSocket(socket, timeout)
	if err != nil {
		return RuntimeEnv{}, nil, err
	}
	b, err := NewBridge(v, BridgeOptions{Module: module, Timeout: timeout, Root: disk.Root()})
	if err != nil {
		v.Close()
		return RuntimeEnv{}, nil, fmt.Errorf("editor bridge: %w", err)
	}
	env := RuntimeEnv{Root: disk.Root(), Trusted: trusted, FS: bufferfs.NewEditor(disk, b), Editor: b}
	return env, v, nil
}
