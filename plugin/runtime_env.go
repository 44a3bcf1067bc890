package plugin

import (
	"fmt"
	"time"

	"github.com/neovim/go-client/nvim"

	"flow/bufferfs"
	"flow/runtime/agent"
	"flow/runtime/tools"
)

// FileIOEditor names buffer-aware file I/O in status reports.
const FileIOEditor = "editor"

// ServiceOptions fills the editor fields of opts for this environment, so
// that an [agent.Service] built with them works through the editor:
//
//   - FS: the buffer-aware file system;
//   - Tools: each run's toolbox offers the editor tools (SPEC §12.2 role
//     rules, editor_debug limited to action "status");
//   - EditorEvidence: editor_lint / editor_diagnostics coverage evidence;
//   - EditorState: the freshness probe (checks refuse unsaved buffers and
//     turn stale when the editor changes; review is compared against the
//     post-check snapshot);
//   - Editor: the editor part of status reports;
//   - FileIO: "editor" unless set.
//
// Without a bridge only FS is set.
func (env RuntimeEnv) ServiceOptions(opts agent.ServiceOptions) agent.ServiceOptions {
	opts.FS = env.FS
	ed := env.Editor
	if ed == nil {
		return opts
	}
	fsys := env.FS
	opts.Tools = func(o tools.Options) agent.Toolbox {
		return tools.WithEditor(tools.New(fsys, o), ed)
	}
	opts.EditorEvidence = tools.WithEditor(tools.New(fsys, tools.Options{Trusted: env.Trusted}), ed)
	opts.EditorState = ed
	opts.Editor = ed.Status
	if opts.FileIO == "" {
		opts.FileIO = FileIOEditor
	}
	return opts
}

// AttachSocket connects to the Neovim listening at socket (`flow serve
// --nvim SOCKET`; see [DialSocket] for the rules) and returns the
// environment for a runtime over disk that uses it: a [Bridge] to module
// ("" = rose.tools, what Rose's Neovim provides) and a [bufferfs.Editor].
// The connection and first request are bounded by timeout. The caller
// closes the returned client when done.
func AttachSocket(socket string, disk *bufferfs.Disk, trusted bool, module string, timeout time.Duration) (RuntimeEnv, *nvim.Nvim, error) {
	if module == "" {
		module = "rose.tools"
	}
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
