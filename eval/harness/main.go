// Command harness is flow's evaluation harness (`make eval`): it runs the
// real flow binary, black-box, on every task under eval/tasks against a
// model server, then decides with each task's hidden acceptance test whether
// the task was really done.
//
//	go run ./eval/harness [-model NAME] [-api native|openai] [-base-url URL]
//	    [-tasks a,b,prefix*] [-reps N] [-flow bin/flow | -flow before=A,after=B]
//	    [-peer aider] [-server-log FILE] [-out FILE] ...
//
// Several labelled flow builds and the peer (aider, with -peer aider) run
// interleaved: every task × repetition runs each of them in turn on a fresh
// copy of the project, so that a before/after is measured against the peer
// in one run. For every run it prints a progress line; at the end a table
// (pass rate, verified rate, false verified, median time per task; with
// several runners, their figures side by side) on stdout. The JSON file
// (-out) holds the settings, the machine, every result and the summaries;
// it is rewritten after every run, so an interrupted evaluation keeps what
// it measured.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"flow/internal/text"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// File is the JSON file of one evaluation run.
type File struct {
	StartedAt string   `json:"started_at"`
	Finished  bool     `json:"finished"`
	Settings  Settings `json:"settings"`
	Machine   Machine  `json:"machine"`
	Results   []Result `json:"results"`
	Summary   Summary  `json:"summary"`
	// ByRunner is the summary of each runner's results, in the runners'
	// order (Summary is of all results together).
	ByRunner []RunnerSummary `json:"by_runner"`
	Unknown  []string        `json:"fields_not_in_report"`
	Pending  []Pending       `json:"pending,omitempty"`
}

// Settings are the options of the run that matter for comparing runs.
type Settings struct {
	Model         string   `json:"model"`
	API           string   `json:"api"`
	BaseURL       string   `json:"base_url"`
	ContextLength int      `json:"context_length"`
	CallTimeout   float64  `json:"call_timeout_s"`
	Reps          int      `json:"reps"`
	Tasks         []string `json:"tasks"`
	Agent         string   `json:"agent,omitempty"`
	// FlowVersion is the first flow build's version.
	FlowVersion   string   `json:"flow_version"`
	Runners       []Runner `json:"runners"`
	Peer          *Peer    `json:"peer,omitempty"`
	ServerLog     string   `json:"server_log,omitempty"`
	StartedServer string   `json:"started_server,omitempty"`
}

// Peer is how the peer was run, for reading its results.
type Peer struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// Flags are the flags of every run; each run adds the task's checks
	// (with ChecksAsTestCmd), the task as --message and its source files.
	Flags           []string `json:"flags"`
	NumCtx          int      `json:"num_ctx"`
	ChecksAsTestCmd bool     `json:"checks_as_test_cmd"`
	VerifiedRule    string   `json:"verified_rule"`
	Figures         string   `json:"figures"`
}

// Machine describes where the run happened.
type Machine struct {
	CPUs   int    `json:"cpus"`
	CPU    string `json:"cpu"`
	OS     string `json:"os"`
	Kernel string `json:"kernel"`
}

// Pending is a task × repetition not run yet.
type Pending struct {
	Task   string `json:"task"`
	Rep    int    `json:"rep"`
	Runner string `json:"runner"`
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("harness", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &Options{}
	var tasks, out, flowSpec, peer, aiderPath string
	var doctor, reviewer bool
	var startCmd string
	fs.StringVar(&startCmd, "start-server", "", "start the model server with this `command` first (\"scripts/llamacpp-server.sh serve 8091 16384\"), wait for -base-url to answer, stop it at the end")
	var casesDir string
	fs.BoolVar(&reviewer, "reviewer", false, "evaluate flow's reviewer instead (make eval-reviewer): the labelled changes of -cases, each made by a scripted coder, judged by the real model")
	fs.StringVar(&casesDir, "cases", "eval/reviewer/cases", "the `folder` of the reviewer's labelled cases (-reviewer)")
	fs.StringVar(&flowSpec, "flow", "bin/flow", "the flow `binary` to evaluate, or several labelled ones (before=/tmp/flow-old,after=bin/flow); empty with -peer: the peer only")
	fs.StringVar(&peer, "peer", "", "run a peer on the same tasks, interleaved with flow: `aider`")
	fs.StringVar(&aiderPath, "aider", defaultAiderPath(), "the aider `executable` of -peer aider (scripts/aider-venv.sh installs it there)")
	fs.BoolVar(&o.AiderChecks, "aider-checks", true, "give aider the task's checks as --test-cmd with --auto-test")
	fs.StringVar(&o.ServerLog, "server-log", "", "the model server's debug log `file` (OLLAMA_DEBUG=1): per run, the requests and prompt tokens it logged")
	fs.StringVar(&o.TasksDir, "tasks-dir", "eval/tasks", "the `folder` of the tasks")
	fs.StringVar(&o.ToolsDir, "tools-dir", "eval/tools", "the `folder` with the installed check tools (node_modules/, .venv/)")
	fs.StringVar(&tasks, "tasks", "", "comma-separated task `names` (a trailing * selects by prefix); empty: all")
	fs.IntVar(&o.Reps, "reps", 1, "repetitions of each task")
	fs.StringVar(&o.BaseURL, "base-url", "http://127.0.0.1:11434", "the model server's `URL`")
	fs.StringVar(&o.Model, "model", "flow-qwen2.5-coder:1.5b", "the model `name` for every role")
	fs.StringVar(&o.API, "api", "native", "the backend API: native or openai")
	fs.IntVar(&o.ContextLength, "context-length", 16384, "ollama.context_length (`tokens`)")
	fs.Float64Var(&o.CallTimeout, "call-timeout", 600, "ollama.timeout: `seconds` per model call")
	fs.DurationVar(&o.TaskTimeout, "task-timeout", 45*time.Minute, "the longest one flow run may take")
	fs.StringVar(&o.WorkDir, "work-dir", "", "scratch `folder` for workspaces and reports (default: a temporary one)")
	fs.BoolVar(&o.Keep, "keep", false, "keep the workspaces (under -work-dir)")
	fs.StringVar(&out, "out", "", "the JSON `file` of the run (default: $FLOW_TEST_CACHE/eval/run-<time>.json)")
	fs.StringVar(&o.Agent, "agent", "", "extra [agent] `settings` for every run, ';'-separated (\"brief_chars = 0; max_iterations = 8\")")
	fs.BoolVar(&doctor, "doctor", true, "run flow doctor first and stop when it is not ok")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "harness: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if o.API != "native" && o.API != "openai" {
		fmt.Fprintf(stderr, "harness: -api must be native or openai, not %q\n", o.API)
		return 2
	}
	if o.Reps < 1 {
		fmt.Fprintln(stderr, "harness: -reps must be at least 1")
		return 2
	}
	if tasks != "" {
		o.Tasks = strings.Split(tasks, ",")
	}
	if startCmd != "" {
		logFile := filepath.Join(cacheDir(), "eval", "server-"+time.Now().UTC().Format("20060102T150405Z")+".log")
		if err := os.MkdirAll(filepath.Dir(logFile), 0o755); err != nil {
			fmt.Fprintf(stderr, "harness: %v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "harness: starting %s (log %s)\n", startCmd, logFile)
		stop, err := startServer(ctx, startCmd, o.BaseURL, logFile, 10*time.Minute)
		if err != nil {
			fmt.Fprintf(stderr, "harness: %v\n", err)
			return 1
		}
		defer stop()
		o.StartedServer = startCmd
	}
	if reviewer {
		if err := absPaths(o); err != nil {
			fmt.Fprintf(stderr, "harness: %v\n", err)
			return 2
		}
		return runReviewer(ctx, o, casesDir, out, stdout, stderr)
	}
	runners, err := ParseRunners(flowSpec, peer, aiderPath)
	if err != nil {
		fmt.Fprintf(stderr, "harness: %v\n", err)
		return 2
	}
	o.Runners = runners
	if err := absPaths(o); err != nil {
		fmt.Fprintf(stderr, "harness: %v\n", err)
		return 2
	}
	list, err := LoadTasks(o.TasksDir, o.Tasks)
	if err != nil {
		fmt.Fprintf(stderr, "harness: %v\n", err)
		return 2
	}
	if out == "" {
		out = filepath.Join(cacheDir(), "eval", "run-"+time.Now().UTC().Format("20060102T150405Z")+".json")
	}
	path := toolPath(o.ToolsDir)
	for _, t := range list {
		if miss := MissingTools(t.Language, path); len(miss) > 0 {
			fmt.Fprintf(stderr, "harness: task %s needs %s: install the evaluation's tools with `make eval-tools`\n", t.Name, strings.Join(miss, ", "))
			return 2
		}
	}
	scratch := o.WorkDir
	if scratch == "" {
		if scratch, err = os.MkdirTemp("", "flow-eval-"); err != nil {
			fmt.Fprintf(stderr, "harness: %v\n", err)
			return 1
		}
		if !o.Keep {
			defer os.RemoveAll(scratch)
		}
	}
	if o.ServerLog != "" {
		if err := (&ServerLog{Path: o.ServerLog}).Mark(); err != nil {
			fmt.Fprintf(stderr, "harness: %v (-server-log)\n", err)
			return 2
		}
	}
	for i := range o.Runners {
		rn := &o.Runners[i]
		if rn.Type == runnerAider {
			if rn.Version, err = aiderVersionOf(ctx, rn.Path); err != nil {
				fmt.Fprintf(stderr, "harness: %v\n", err)
				return 1
			}
			o.goEnv = goCacheEnv()
		} else {
			rn.Version = flowVersion(rn.Path)
		}
	}
	if fl := firstFlow(o.Runners); doctor && fl != nil {
		if msg := runDoctor(ctx, o, *fl, list[0], scratch); msg != "" {
			fmt.Fprintf(stderr, "harness: flow doctor is not ok: %s\n", msg)
			return 1
		}
	}
	results, err := Evaluate(ctx, o, list, scratch, out, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "harness: %v\n", err)
	}
	if len(o.Runners) > 1 {
		WriteComparison(stdout, results, o.Runners)
	} else {
		WriteTable(stdout, results)
	}
	fmt.Fprintf(stdout, "results: %s\n", out)
	switch {
	case ctx.Err() != nil:
		return 130
	case err != nil:
		return 1
	}
	return 0
}

func absPaths(o *Options) error {
	for _, p := range []*string{&o.TasksDir, &o.ToolsDir} {
		a, err := filepath.Abs(*p)
		if err != nil {
			return err
		}
		*p = a
	}
	if err := absRunnerPaths(o.Runners); err != nil {
		return err
	}
	for _, p := range []*string{&o.WorkDir, &o.ServerLog} {
		if *p == "" {
			continue
		}
		a, err := filepath.Abs(*p)
		if err != nil {
			return err
		}
		*p = a
	}
	return nil
}

func cacheDir() string {
	if d := os.Getenv("FLOW_TEST_CACHE"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return os.TempDir()
	}
	return filepath.Join(home, ".cache", "flow-test")
}

// Evaluate runs every task × repetition in order, each runner in turn on
// a fresh copy, printing a progress line for each run and rewriting the
// JSON file out after each.
func Evaluate(ctx context.Context, o *Options, tasks []*Task, scratch, out string, progress io.Writer) ([]Result, error) {
	f := &File{
		StartedAt: time.Now().UTC().Format(time.RFC3339),
		Settings: Settings{Model: o.Model, API: o.API, BaseURL: o.BaseURL, ContextLength: o.ContextLength,
			CallTimeout: o.CallTimeout, Reps: o.Reps, Agent: o.Agent, Runners: o.Runners, ServerLog: o.ServerLog, StartedServer: o.StartedServer},
		Machine:  machine(),
		Results:  []Result{},
		ByRunner: []RunnerSummary{},
		Unknown:  []string{},
	}
	if fl := firstFlow(o.Runners); fl != nil {
		f.Settings.FlowVersion = fl.Version
	}
	for _, rn := range o.Runners {
		if rn.Type == runnerAider {
			f.Settings.Peer = &Peer{Name: runnerAider, Version: rn.Version, Flags: AiderFixedFlags(o),
				NumCtx: o.ContextLength, ChecksAsTestCmd: o.AiderChecks,
				VerifiedRule: "aider exited 0, changed a file, and every check of the task passes (run by the harness after aider)",
				Figures: "model_calls: the TO LLM entries of --llm-history-file (the coder's requests; not aider's background chat summaries); " +
					"prompt_tokens, completion_tokens: the message_send events of --analytics-log, the server's counts of non-streamed replies"}
		}
	}
	for _, t := range tasks {
		f.Settings.Tasks = append(f.Settings.Tasks, t.Name)
	}
	var queue []Pending
	for rep := 1; rep <= o.Reps; rep++ {
		for _, t := range tasks {
			for _, rn := range o.Runners {
				queue = append(queue, Pending{Task: t.Name, Rep: rep, Runner: rn.Label})
			}
		}
	}
	byName := map[string]*Task{}
	for _, t := range tasks {
		byName[t.Name] = t
	}
	byLabel := map[string]Runner{}
	for _, rn := range o.Runners {
		byLabel[rn.Label] = rn
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return nil, fmt.Errorf("results folder: %w", err)
	}
	var serverLog *ServerLog
	if o.ServerLog != "" {
		serverLog = &ServerLog{Path: o.ServerLog}
	}
	f.Pending = queue
	for i, p := range queue {
		if ctx.Err() != nil {
			break
		}
		name := fmt.Sprintf("%s-%d", p.Task, p.Rep)
		if len(o.Runners) > 1 {
			name += "-" + p.Runner
		}
		var markErr error
		if serverLog != nil {
			markErr = serverLog.Mark()
		}
		r := RunOne(ctx, o, byLabel[p.Runner], byName[p.Task], p.Rep, scratch, name)
		if ctx.Err() != nil {
			// Interrupted: the run measured nothing; it stays pending.
			f.Pending = queue[i:]
			break
		}
		if serverLog != nil {
			if markErr != nil {
				r.ServerError = markErr.Error()
			} else if fig, err := serverLog.Since(); err != nil {
				r.ServerError = err.Error()
			} else {
				r.Server = &fig
				if r.RunnerType != runnerAider && r.events != nil {
					r.Prompt = promptFigures(r.events, &fig)
				}
			}
		}
		f.Results = append(f.Results, r)
		fmt.Fprintln(progress, ProgressLine(i+1, len(queue), r, len(o.Runners) > 1))
		f.Pending = queue[i+1:]
		f.Summary = Summarize(f.Results)
		f.ByRunner = SummarizeByRunner(f.Results, o.Runners)
		f.Unknown = unknownFields(f.Results)
		if err := writeJSON(out, f); err != nil {
			return f.Results, err
		}
	}
	f.Finished = ctx.Err() == nil
	if err := writeJSON(out, f); err != nil {
		return f.Results, err
	}
	return f.Results, nil
}

// unknownFields names the result fields no report of the run carried.
func unknownFields(rs []Result) []string {
	var native, text, refused bool
	for _, r := range rs {
		native = native || r.ToolCallsNative != nil
		text = text || r.ToolCallsText != nil
		refused = refused || r.ToolCallsRefused != nil
	}
	out := []string{}
	if !native {
		out = append(out, "tool_calls_native")
	}
	if !text {
		out = append(out, "tool_calls_from_text")
	}
	if !refused {
		out = append(out, "tool_calls_refused")
	}
	return out
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// runDoctor runs `flow doctor` with the first task's configuration and
// returns "" when it is ok, else its reason.
func runDoctor(ctx context.Context, o *Options, fl Runner, t *Task, scratch string) string {
	dir := filepath.Join(scratch, "doctor")
	ws := filepath.Join(dir, "workspace")
	if err := prepareWorkspace(t, ws, o.ToolsDir); err != nil {
		return err.Error()
	}
	cfg := filepath.Join(dir, "flow.toml")
	if err := os.WriteFile(cfg, []byte(operatorConfig(o, t, ws)), 0o644); err != nil {
		return err.Error()
	}
	dctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(dctx, fl.Path, "doctor", "-c", cfg, "-w", ws)
	cmd.Env = runEnv(toolPath(o.ToolsDir), dir)
	out, err := cmd.Output()
	var rep struct {
		Status string `json:"status"`
	}
	if jerr := json.Unmarshal(out, &rep); jerr != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Sprintf("%v: %s", err, lastLine(string(ee.Stderr)))
		}
		return fmt.Sprintf("no report: %v", jerr)
	}
	if rep.Status == "ok" {
		return ""
	}
	return rep.Status + ": " + text.OneLine(string(out), 800)
}

func flowVersion(bin string) string {
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "flow "))
}

func machine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}
