package plugin

import (
	"fmt"
	"runtime/debug"
	"strings"

	"flow/runtime/job"
	"flow/runtime/progress"
	"flow/runtime/report"
)

// handler is the shape of every RPC handler: the request's arguments,
// decoded into any (never into a fixed shape: go-client v1.2.1 corrupts
// the stream when a map is decoded into a slice), and a result for Lua.
type handler func(args []any) (any, error)

// register installs every handler of methods.go, each behind the recover
// shim, so a panicking handler becomes an RPC error and the host survives.
func (h *host) register() error {
	for method, fn := range map[string]handler{
		MethodConfigure: h.configure,
		MethodRun:       h.run,
		MethodCheck:     h.check,
		MethodStatus:    h.status,
		MethodStop:      h.stop,
		MethodUndo:      h.undo,
		MethodReview:    h.review,
	} {
		if err := h.v.RegisterHandler(method, h.safe(method, fn)); err != nil {
			return fmt.Errorf("register %s: %w", method, err)
		}
	}
	return nil
}

// safe wraps fn in the recover shim.
func (h *host) safe(method string, fn handler) func(args ...any) (any, error) {
	return func(args ...any) (out any, err error) {
		defer func() {
			if r := recover(); r != nil {
				h.log.Error("handler panicked", "method", method, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				out, err = nil, fmt.Errorf("flow: internal error in %s: %v", method, r)
			}
		}()
		return fn(args)
	}
}

// stringArg returns args[i] when it is a string ("" when absent or nil).
func stringArg(args []any, i int) (string, error) {
	if i >= len(args) || args[i] == nil {
		return "", nil
	}
	switch s := args[i].(type) {
	case string:
		return s, nil
	case []byte:
		return string(s), nil
	}
	return "", fmt.Errorf("flow: argument %d must be a string", i+1)
}

// tokenArg returns the client's token for a job, args[i]: an integer or a
// string that Lua minted and registered before sending the request, so a
// push for the job can never arrive before Lua knows it. nil when absent
// or of another type (the job's id is used then).
func tokenArg(args []any, i int) any {
	if i >= len(args) {
		return nil
	}
	switch t := args[i].(type) {
	case int64, uint64, string:
		return t
	case int:
		return int64(t)
	case []byte:
		return string(t)
	}
	return nil
}

// configure: flow_configure(opts) → {version, workspace, trusted, module,
// problems}. Lua sends the settings it started the host with; a mismatch
// (or a runtime that cannot be built) is reported as a problem, which Lua
// shows.
func (h *host) configure(args []any) (any, error) {
	var problems []string
	if len(args) > 0 && args[0] != nil {
		opts, ok := args[0].(map[string]any)
		if !ok {
			if list, isList := args[0].([]any); !isList || len(list) > 0 {
				return nil, fmt.Errorf("flow: flow_configure expects an options table")
			}
		}
		if ws, ok := opts["workspace"].(string); ok && ws != "" && !h.sameRoot(ws) {
			problems = append(problems, fmt.Sprintf("workspace %s differs from the host's %s", ws, h.root))
		}
		if tr, ok := opts["trusted"].(bool); ok && tr != h.deps.Trusted {
			problems = append(problems, fmt.Sprintf("trusted=%v differs from the host's trusted=%v", tr, h.deps.Trusted))
		}
	}
	if _, err := h.runtime(); err != nil {
		problems = append(problems, err.Error())
	}
	return map[string]any{
		"version":   h.deps.Version,
		"commit":    h.deps.Commit,
		"workspace": h.root,
		"trusted":   h.deps.Trusted,
		"module":    h.bridge.Module(),
		"problems":  nonNil(problems),
	}, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// run: flow_run(task, token?) → {status:"started", token} | {status:"busy"}.
func (h *host) run(args []any) (any, error) {
	return h.startJob("run", args, func(rt Runtime, task string, emit func(progress.Event)) (*job.Handle, error) {
		j, err := rt.StartRun(h.ctx, task, emit)
		return job.Untyped(j), err
	})
}

// check: flow_check(name|"", token?) → {status:"started", token}.
func (h *host) check(args []any) (any, error) {
	return h.startJob("check", args, func(rt Runtime, name string, emit func(progress.Event)) (*job.Handle, error) {
		j, err := rt.StartCheck(h.ctx, name, emit)
		return job.Untyped(j), err
	})
}

// undo: flow_undo(run_id|"", token?) → {status:"started", token}.
func (h *host) undo(args []any) (any, error) {
	return h.startJob("undo", args, func(rt Runtime, id string, _ func(progress.Event)) (*job.Handle, error) {
		j, err := rt.StartUndo(h.ctx, id)
		return job.Untyped(j), err
	})
}

// review: flow_review(run_id|"", keep, revert) → report.ReviewReport. It
// answers once the decisions are applied: a revert is a write through the
// buffer-aware file system, which calls back into Neovim while Neovim
// waits for this answer (it serves requests on the channel it waits on).
// A request the review cannot make (no run, an unknown hunk) is a report
// with status error and the reason as its message, so that Lua shows it
// like a refusal.
func (h *host) review(args []any) (any, error) {
	id, err := stringArg(args, 0)
	if err != nil {
		return nil, err
	}
	keep, err := selectorsArg(args, 1)
	if err != nil {
		return nil, err
	}
	revert, err := selectorsArg(args, 2)
	if err != nil {
		return nil, err
	}
	rt, err := h.runtime()
	if err != nil {
		return map[string]any{"status": report.StatusError, "run_id": id, "error": err.Error(), "message": err.Error()}, nil
	}
	rep, err := rt.Review(h.ctx, id, keep, revert)
	if err != nil {
		return map[string]any{"status": report.StatusError, "run_id": id, "workspace": h.root, "error": err.Error(), "message": err.Error()}, nil
	}
	return wire(rep.Normalize()), nil
}

// selectorsArg returns args[i] as a list of review selectors: a list of
// strings (an empty Lua table may arrive as an empty map), a
// comma-separated string, or nothing.
func selectorsArg(args []any, i int) ([]string, error) {
	if i >= len(args) || args[i] == nil {
		return nil, nil
	}
	var items []any
	switch v := args[i].(type) {
	case []any:
		items = v
	case map[string]any:
		if len(v) > 0 {
			return nil, fmt.Errorf("flow: argument %d must be a list of hunk ids or paths", i+1)
		}
	case string, []byte:
		s, _ := stringArg(args, i)
		for _, f := range strings.Split(s, ",") {
			items = append(items, f)
		}
	default:
		return nil, fmt.Errorf("flow: argument %d must be a list of hunk ids or paths", i+1)
	}
	var out []string
	for j := range items {
		s, err := stringArg(items, j)
		if err != nil {
			return nil, fmt.Errorf("flow: argument %d must be a list of hunk ids or paths", i+1)
		}
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out, nil
}

// startJob answers a job request: args[0] is the job's string argument
// (a run needs a non-empty task), args[1] the client's token; start starts
// the job on the runtime with the job's event sink.
func (h *host) startJob(op string, args []any, start func(rt Runtime, arg string, emit func(progress.Event)) (*job.Handle, error)) (any, error) {
	arg, err := stringArg(args, 0)
	if err != nil {
		return nil, err
	}
	if op == "run" && strings.TrimSpace(arg) == "" {
		return nil, fmt.Errorf("flow: flow_run needs a task")
	}
	rt, err := h.runtime()
	if err != nil {
		return map[string]any{"status": report.StatusError, "error": err.Error()}, nil
	}
	token := tokenArg(args, 1)
	j, err := start(rt, arg, h.emitter(op, token))
	return h.started(op, token, j, err)
}

// status: flow_status() → the status report, at once.
func (h *host) status([]any) (any, error) {
	rt, err := h.runtime()
	if err != nil {
		return map[string]any{"status": report.StatusError, "error": err.Error(), "workspace": h.root}, nil
	}
	return wire(rt.Status(h.ctx)), nil
}

// stop: flow_stop() → {stopped: n}; the jobs end at their next safe point
// and report cancelled.
func (h *host) stop([]any) (any, error) {
	n := 0
	if rt := h.built(); rt != nil {
		n = rt.CancelAll()
	}
	return map[string]any{"stopped": n}, nil
}
