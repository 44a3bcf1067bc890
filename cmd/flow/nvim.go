package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"flow/plugin"
)

// cmdNvim implements `flow nvim`, the Neovim RPC host the Lua plugin starts
// with jobstart(..., {rpc = true}). stdin/stdout are the msgpack-RPC
// channel: fd 1 is reserved for it before anything else runs, so nothing
// else — not even a check's output — can ever be written there.
func cmdNvim(ctx context.Context, e *env) int {
	out, err := plugin.TakeStdout()
	if err != nil {
		fmt.Fprintf(e.stderr, "flow: %s\n", err)
		return exitUsage
	}
	defer out.Close()
	rt, logger, closeAll, err := openServer(e)
	if err != nil {
		fmt.Fprintf(e.stderr, "flow: %s\n", err)
		return exitUsage
	}
	defer closeAll()
	err = plugin.ServeHost(ctx, os.Stdin, out, plugin.HostDeps{
		Disk:          rt.disk,
		Trusted:       rt.cfg.Trusted,
		Module:        e.opts.editorModule,
		EditorTimeout: editorTimeout(e),
		Version:       flowVersion(),
		Commit:        commit,
		Logger:        logger,
		NewRuntime: func(ctx context.Context, env plugin.RuntimeEnv) (plugin.Runtime, error) {
			return rt.service(&env), nil
		},
	})
	if ctx.Err() != nil {
		fmt.Fprintln(e.stderr, interruptedMessage)
		return exitInterrupted
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "flow: %s\n", err)
		return exitNotOK
	}
	return exitOK
}

// editorTimeout is --editor-timeout as a duration.
func editorTimeout(e *env) time.Duration {
	return time.Duration(e.opts.editorTimeout * float64(time.Second))
}
