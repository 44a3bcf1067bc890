package main

import (
	"slices"
	"strings"
	"testing"
)

// TestWorkerArgs: a task worker gets every flag that shapes the server's
// runtime — configuration, workspace, model, trust, behaviour-preserving,
// the editor socket with its timeout and module — and parses to the same
// options; output flags do not pass.
func TestWorkerArgs(t *testing.T) {
	for _, argv := range [][]string{
		{"serve"},
		{"serve", "-c", "ops.toml", "-w", "ws", "--trusted"},
		{"-m", "qwen", "serve", "--behaviour-preserving", "--nvim", "/run/nvim.sock", "--editor-timeout", "2.5", "--editor-module", "flow.tools"},
	} {
		o, err := parseArgs(argv)
		if err != nil {
			t.Fatal(err)
		}
		args := workerArgs(o)
		w, err := parseArgs(args)
		if err != nil {
			t.Fatalf("worker args %q of %q: %v", args, argv, err)
		}
		if w.command != "task-worker" || w.configFile != o.configFile || w.workspace != o.workspace ||
			w.model != o.model || w.modelSet != o.modelSet || w.trusted != o.trusted ||
			w.behaviourPreserving != o.behaviourPreserving || w.nvim != o.nvim ||
			w.editorTimeout != o.editorTimeout || w.editorModule != o.editorModule {
			t.Errorf("worker of %q has options %+v, want those of the server %+v", argv, *w, *o)
		}
	}
	if slices.Contains(commandNames(), "task-worker") {
		t.Error("the hidden task-worker is listed among the commands")
	}
}

// TestTaskWorkerByHand: run without the pipe flow serve gives it, the
// worker says what it is and exits 2, touching nothing.
func TestTaskWorkerByHand(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	res := runFlow(t, ws, hermeticEnv(t), "task-worker", "-w", ws)
	if res.code != 2 || res.stdout != "" || !strings.Contains(res.stderr, "flow serve") {
		t.Fatalf("flow task-worker by hand = %d %q %q, want 2 and a sentence naming flow serve", res.code, res.stdout, res.stderr)
	}
}
