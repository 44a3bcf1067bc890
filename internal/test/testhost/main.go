// Command testhost is a stand-in for `flow` in the Neovim plugin tests: its
// `nvim` subcommand serves the real host (plugin.ServeHost) over a fake
// runtime that writes files through the buffer-aware file system it is
// given, so :FlowBuild exercises the editor path for real; `version`
// answers like flow's. The tests build it into a temporary directory.
// (:checkhealth is tested against the real flow binary in cmd/flow.)
//
// Tasks the fake runtime understands: "write PATH WORDS..." writes WORDS
// and a newline to PATH; "wait" blocks until cancelled; "panic" panics;
// anything else succeeds without changes.
//
// With --config FILE, `nvim` serves flow's real runtime instead
// (agent.Service over the configuration FILE, its model server and the
// workspace's journal under $XDG_STATE_HOME), so that a test can script a
// whole run with internal/test/ollamatest and review it.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"flow/bufferfs"
	"flow/plugin"
	"flow/runtime/agent"
	"flow/runtime/config"
	"flow/runtime/job"
	"flow/runtime/journal"
	"flow/runtime/model/ollama"
	"flow/runtime/progress"
	"flow/runtime/report"
)

const version = "0.1.0-test"

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	var cmd, workspace, cfgFile string
	trusted := false
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "--trusted":
			trusted = true
		case "--workspace", "--config":
			if i+1 >= len(args) {
				fmt.Fprintf(os.Stderr, "flow: %s needs a value\n", a)
				return 2
			}
			if a == "--workspace" {
				workspace = args[i+1]
			} else {
				cfgFile = args[i+1]
			}
			i++
		default:
			if cmd == "" {
				cmd = a
			}
		}
	}
	switch cmd {
	case "version":
		fmt.Println("flow " + version)
		return 0
	case "nvim":
		return serve(workspace, cfgFile, trusted)
	}
	fmt.Fprintf(os.Stderr, "flow: unknown command %q\n", cmd)
	return 2
}

func serve(workspace, cfgFile string, trusted bool) int {
	out, err := plugin.TakeStdout()
	if err != nil {
		fmt.Fprintln(os.Stderr, "flow:", err)
		return 1
	}
	logger := slog.New(slog.DiscardHandler)
	if p := os.Getenv("FLOW_LOG_FILE"); p != "" {
		if f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600); err == nil {
			defer f.Close()
			logger = slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug}))
		}
	}
	if workspace == "" {
		if workspace, err = os.Getwd(); err != nil {
			fmt.Fprintln(os.Stderr, "flow:", err)
			return 1
		}
	}
	disk, err := bufferfs.NewDisk(workspace, bufferfs.DiskOptions{Trusted: trusted})
	if err != nil {
		fmt.Fprintln(os.Stderr, "flow:", err)
		return 1
	}
	defer disk.Close()
	err = plugin.ServeHost(context.Background(), os.Stdin, out, plugin.HostDeps{
		Disk:    disk,
		Trusted: trusted,
		Version: version,
		Logger:  logger,
		NewRuntime: func(_ context.Context, env plugin.RuntimeEnv) (plugin.Runtime, error) {
			if cfgFile != "" {
				return service(cfgFile, env)
			}
			return &fake{env: env}, nil
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "flow:", err)
		return 1
	}
	return 0
}

// service builds flow's runtime over the configuration file, as `flow
// nvim` does, with the workspace's journal (so runs can be undone and
// reviewed).
func service(cfgFile string, env plugin.RuntimeEnv) (plugin.Runtime, error) {
	cfg, err := config.Load(config.LoadOptions{ConfigFile: cfgFile, Workspace: env.Root, Trusted: env.Trusted})
	if err != nil {
		return nil, err
	}
	backend, err := ollama.New(ollama.Options{BaseURL: cfg.Ollama.BaseURL, API: cfg.Ollama.API})
	if err != nil {
		return nil, err
	}
	dir, err := journal.StateDir(os.Getenv)
	if err != nil {
		return nil, err
	}
	store, err := journal.Open(dir, cfg.Workspace, journal.Options{})
	if err != nil {
		return nil, err
	}
	opts := agent.ServiceOptions{Backend: backend, Store: store, Version: version}
	return agent.NewService(cfg, env.ServiceOptions(opts)), nil
}

// fake is a Runtime that does what its task says through the FS it got.
// Its jobs run under the runtime's real job system (job.Gate), so busy,
// cancel-all and job ids behave as in flow.
type fake struct {
	env  plugin.RuntimeEnv
	gate job.Gate
	mu   sync.Mutex
	last *report.Run
}

var _ plugin.Runtime = (*fake)(nil)

// tag stamps every event with the job's id, as the runtime does.
func tag(j *job.Handle, events func(progress.Event)) func(progress.Event) {
	return func(e progress.Event) {
		e.Job = j.ID
		events(e)
	}
}

func (f *fake) StartRun(ctx context.Context, task string, events func(progress.Event)) (*job.Job[report.Run], error) {
	return job.Start(&f.gate, ctx, job.KindRun, func(ctx context.Context, j *job.Job[report.Run]) (report.Run, string) {
		rep := f.run(ctx, task, tag(j.Handle, events))
		return rep, rep.Status
	}, func(p any) report.Run {
		return report.Run{Status: report.StatusError, Task: task, Error: job.PanicMessage(job.KindRun, p)}.Normalize()
	})
}

func (f *fake) StartCheck(ctx context.Context, name string, events func(progress.Event)) (*job.Job[report.CheckReport], error) {
	return job.Start(&f.gate, ctx, job.KindCheck, func(ctx context.Context, j *job.Job[report.CheckReport]) (report.CheckReport, string) {
		rep := f.check(ctx, name, tag(j.Handle, events))
		return rep, rep.Status
	}, func(p any) report.CheckReport {
		return report.CheckReport{Status: report.StatusError, Error: job.PanicMessage(job.KindCheck, p)}.Normalize()
	})
}

func (f *fake) StartUndo(ctx context.Context, runID string) (*job.Job[report.Undo], error) {
	return job.Start(&f.gate, ctx, job.KindUndo, func(context.Context, *job.Job[report.Undo]) (report.Undo, string) {
		rep := report.Undo{Status: report.StatusOK, RunID: runID, Workspace: f.env.Root}
		return rep, rep.Status
	}, func(p any) report.Undo {
		return report.Undo{Status: report.StatusError, RunID: runID, Error: job.PanicMessage(job.KindUndo, p)}.Normalize()
	})
}

// Review has no journal to read: the fake keeps none.
func (f *fake) Review(_ context.Context, runID string, _, _ []string) (report.ReviewReport, error) {
	return report.ReviewReport{Status: report.StatusUnavailable, RunID: runID, Workspace: f.env.Root,
		Message: "the test host's fake runtime keeps no journal to review"}.Normalize(), nil
}

func (f *fake) CancelAll() int                { return f.gate.CancelAll() }
func (f *fake) Wait(ctx context.Context) bool { return f.gate.Wait(ctx) }

func (f *fake) run(ctx context.Context, task string, events func(progress.Event)) report.Run {
	start := time.Now()
	rep := report.Run{
		Status: report.StatusOK, Task: task, RunID: fmt.Sprintf("run-%d", start.UnixNano()),
		Workspace: f.env.Root, StartedAt: start.UTC().Format(time.RFC3339),
		Summary: "fake run",
	}
	events(progress.Event{Kind: progress.RunStart, Time: start, RunID: rep.RunID, Message: task})
	fields := strings.Fields(task)
	switch {
	case len(fields) >= 2 && fields[0] == "write":
		path, content := fields[1], strings.Join(fields[2:], " ")+"\n"
		events(progress.Event{Kind: progress.ToolStart, Time: time.Now(), RunID: rep.RunID, Role: "coder", Tool: "file_write", Message: path})
		status := report.StatusOK
		if _, err := f.env.FS.Read(ctx, path, 0); err != nil && !isNotFound(err) {
			rep.Status, rep.Error, status = report.StatusError, err.Error(), report.StatusError
		} else if _, err := f.env.FS.Write(ctx, path, []byte(content), bufferfs.WriteOptions{}); err != nil {
			rep.Status, rep.Error, status = report.StatusError, err.Error(), report.StatusError
		} else {
			rep.ChangedFiles = append(rep.ChangedFiles, path)
		}
		events(progress.Event{Kind: progress.ToolEnd, Time: time.Now(), RunID: rep.RunID, Role: "coder", Tool: "file_write", Status: status, Error: rep.Error})
	case len(fields) == 1 && fields[0] == "wait":
		<-ctx.Done()
		rep.Status, rep.Reason = report.StatusCancelled, "cancelled"
	case len(fields) == 1 && fields[0] == "panic":
		panic("fake runtime panic")
	}
	rep.DurationMS = time.Since(start).Milliseconds()
	events(progress.Event{Kind: progress.RunEnd, Time: time.Now(), RunID: rep.RunID, Status: rep.Status, Report: &rep})
	f.mu.Lock()
	f.last = &rep
	f.mu.Unlock()
	return rep
}

func isNotFound(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "no such file") || errors.Is(err, bufferfs.ErrNotFound))
}

func (f *fake) check(_ context.Context, name string, events func(progress.Event)) report.CheckReport {
	if name == "" {
		name = "tests"
	}
	events(progress.Event{Kind: progress.CheckStart, Time: time.Now(), Check: name})
	events(progress.Event{Kind: progress.CheckEnd, Time: time.Now(), Check: name, Status: report.StatusOK})
	return report.CheckReport{
		Status: report.StatusOK, Verified: true, Reason: "fake check",
		Checks: []report.CheckResult{{Name: name, Source: report.SourceCheck, Required: true, Status: report.StatusOK}},
	}
}

func (f *fake) Status(ctx context.Context) report.Status {
	f.mu.Lock()
	var last any
	if f.last != nil {
		last = *f.last
	}
	f.mu.Unlock()
	return report.Status{
		Status: report.StatusOK, Version: version, Workspace: f.env.Root, Trusted: f.env.Trusted,
		Checks: []report.CheckSummary{
			{Name: "tests", Required: true, Kind: "test", Filetypes: []string{"*"}},
			{Name: "lint", Required: true, Kind: "lint", Filetypes: []string{"go"}},
		},
		Editor: f.env.Editor.Status(ctx), LastReport: last, Busy: f.gate.Current() != nil,
	}
}
