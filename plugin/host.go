package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/neovim/go-client/nvim"

	"flow/bufferfs"
	"flow/runtime/job"
	"flow/runtime/progress"
	"flow/runtime/report"
)

// Runtime is what the `flow nvim` host needs from flow's runtime;
// *agent.Service implements it. Runs, checks and undos are jobs of the
// runtime's one job system: a Start method returns the job, or an error
// matching [job.ErrBusy] while another job holds the workspace. The host
// only translates: events and results become on_event pushes.
type Runtime interface {
	// StartRun starts one task, calling events for every progress event
	// (each tagged with the job's id); the result is a report.Run.
	StartRun(ctx context.Context, task string, events func(progress.Event)) (*job.Job[report.Run], error)
	// StartCheck starts the named check, or every check when name is "",
	// calling events for check_start and check_end.
	StartCheck(ctx context.Context, name string, events func(progress.Event)) (*job.Job[report.CheckReport], error)
	// StartUndo starts the undo of a run ("" = the workspace's last run).
	StartUndo(ctx context.Context, runID string) (*job.Job[report.Undo], error)
	// Review lists the hunks of a finished run ("" = the workspace's last
	// run) and keeps and reverts those keep and revert select, through
	// the buffer-aware file system; it returns when done. A request that
	// cannot be made as asked is an error (doc/design.md §12.7).
	Review(ctx context.Context, runID string, keep, revert []string) (report.ReviewReport, error)
	// CancelAll cancels the job in progress and returns how many it
	// cancelled.
	CancelAll() int
	// Wait waits until every job has returned or ctx ends.
	Wait(ctx context.Context) bool
	// Status returns the status report; it never contacts the model.
	Status(ctx context.Context) report.Status
}

// RuntimeEnv is what the host hands to [HostDeps.NewRuntime].
type RuntimeEnv struct {
	// Root is the workspace root (absolute, symlink-free).
	Root string
	// Trusted is the host's trust flag.
	Trusted bool
	// FS is the buffer-aware file system every file tool must use: a
	// [bufferfs.Editor] over the Disk of Root.
	FS bufferfs.FS
	// Editor is the editor bridge, for the editor tools (doc/design.md §11.3), the
	// editor evidence of verification and the freshness snapshots.
	Editor *Bridge
}

// HostDeps configure [ServeHost].
type HostDeps struct {
	// Disk is the workspace to serve, opened by the caller (who closes it)
	// with the same trust. Required.
	Disk *bufferfs.Disk
	// Trusted is whether Disk was opened trusted (edits and named checks),
	// reported to Lua and compared with its setting.
	Trusted bool
	// Module is the editor tool module; "" means [DefaultModule].
	Module string
	// EditorTimeout bounds every request to Neovim; 0 means 120 s.
	EditorTimeout time.Duration
	// Version is flow's version, reported by flow_configure.
	Version string
	// Commit is the commit the binary was built from ("" when the build
	// stamped none), reported by flow_configure so that the plugin can tell
	// a bin/flow older than its checkout without starting another process.
	Commit string
	// Logger receives the host's log; nil discards it.
	Logger *slog.Logger
	// NewRuntime builds the runtime on first use. Required.
	NewRuntime func(ctx context.Context, env RuntimeEnv) (Runtime, error)
}

// host is one `flow nvim` session.
type host struct {
	deps    HostDeps
	log     *slog.Logger
	ctx     context.Context
	timeout time.Duration
	v       *nvim.Nvim
	root    string
	disk    *bufferfs.Disk
	bridge  *Bridge
	fs      *bufferfs.Editor

	rtMu  sync.Mutex
	rt    Runtime
	rtErr error

	forwarders sync.WaitGroup // goroutines pushing a job's result

	out *outbox
}

// ServeHost serves the `flow nvim` RPC host on stdin/stdout (go-client's
// nvim.New, RegisterHandler and Serve) until Neovim closes the channel or
// ctx ends. Nothing else may write to stdout: see [TakeStdout].
//
// Runs, checks and undos start as runtime jobs: their request returns at
// once, and progress events and the final result are pushed to Lua by
// evaluating the fixed string `return require('flow.rpc').on_event(...)`
// with the payload as argument, tagged with the token the client named in
// its request (so Lua knows the job before any push can arrive). flow_stop cancels them. When the channel
// closes, running jobs are cancelled and waited for (at most 5 s).
func ServeHost(ctx context.Context, stdin io.Reader, stdout io.WriteCloser, deps HostDeps) error {
	if deps.NewRuntime == nil || deps.Disk == nil {
		return errors.New("flow nvim: no workspace or no runtime constructor")
	}
	h := &host{deps: deps, log: deps.Logger}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	h.timeout = deps.EditorTimeout
	if h.timeout <= 0 {
		h.timeout = DefaultTimeout
	}
	disk := deps.Disk
	h.disk, h.root = disk, disk.Root()

	v, err := nvim.New(stdin, stdout, stdout, func(format string, args ...any) {
		h.log.Debug(fmt.Sprintf(format, args...))
	})
	if err != nil {
		return fmt.Errorf("flow nvim: %w", err)
	}
	h.v = v
	if h.bridge, err = NewBridge(v, BridgeOptions{Module: deps.Module, Timeout: h.timeout, Root: h.root,
		Anchor: DiskAnchor(disk), Logger: h.log}); err != nil {
		return fmt.Errorf("flow nvim: %w", err)
	}
	h.fs = bufferfs.NewEditor(disk, h.bridge)
	if err := h.register(); err != nil {
		return fmt.Errorf("flow nvim: %w", err)
	}

	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	h.ctx = hctx
	h.out = newOutbox(v, h.timeout, h.log)
	go h.out.run()

	served := make(chan error, 1)
	go func() { served <- v.Serve() }()
	select {
	case err = <-served:
	case <-ctx.Done():
		v.Close()
		err = <-served
	}
	cancel()
	h.wait(5 * time.Second)
	h.out.close()
	v.Close()
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, os.ErrClosed) {
		err = nil
	}
	return err
}

// wait waits at most d for running jobs to finish, then for their results
// to be queued (which follows at once).
func (h *host) wait(d time.Duration) {
	rt := h.built()
	if rt == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if !rt.Wait(ctx) {
		h.log.Warn("jobs still running at exit")
		return
	}
	h.forwarders.Wait()
}

// built returns the runtime when it has been built, else nil.
func (h *host) built() Runtime {
	h.rtMu.Lock()
	defer h.rtMu.Unlock()
	return h.rt
}

// runtime returns the runtime, building it on first use.
func (h *host) runtime() (Runtime, error) {
	h.rtMu.Lock()
	defer h.rtMu.Unlock()
	if h.rt == nil && h.rtErr == nil {
		h.rt, h.rtErr = h.deps.NewRuntime(h.ctx, RuntimeEnv{Root: h.root, Trusted: h.deps.Trusted, FS: h.fs, Editor: h.bridge})
		if h.rtErr == nil && h.rt == nil {
			h.rtErr = errors.New("no runtime")
		}
	}
	return h.rt, h.rtErr
}

// emitter returns the event sink of a job of kind op: each event becomes
// an on_event push tagged with the client's token for the job, or with
// the job's id when the client named none.
func (h *host) emitter(op string, clientToken any) func(progress.Event) {
	return func(e progress.Event) {
		if e.Kind == progress.ModelDelta {
			return // one push per streamed chunk is too many; the reply follows
		}
		var token any = e.Job
		if clientToken != nil {
			token = clientToken
		}
		e.Report, e.Verification = nil, nil
		h.out.push(map[string]any{"token": token, "op": op, "kind": "event", "text": progress.Column(e), "event": wire(e)})
	}
}

// started answers a job request: {status:"started", token} and, once the
// job has returned, a "done" push with its result; or, when the job could
// not start, {status:"busy"|"error", error}. The token is the client's
// (see [tokenArg]) or else the job's id.
func (h *host) started(op string, clientToken any, j *job.Handle, err error) (map[string]any, error) {
	if err != nil {
		status := report.StatusError
		if errors.Is(err, job.ErrBusy) {
			status = report.StatusBusy
		}
		return map[string]any{"status": status, "error": err.Error()}, nil
	}
	var token any = j.ID
	if clientToken != nil {
		token = clientToken
	}
	h.forwarders.Add(1)
	go func() {
		defer h.forwarders.Done()
		result, _ := j.Outcome()
		h.out.push(map[string]any{"token": token, "op": op, "kind": "done", "result": wire(result)})
	}()
	return map[string]any{"status": "started", "token": token}, nil
}

// sameRoot reports whether dir names the host's workspace root.
func (h *host) sameRoot(dir string) bool {
	real, err := filepath.EvalSymlinks(dir)
	return err == nil && real == h.root
}
