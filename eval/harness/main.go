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

// command is the harness's command line: the Options of every run, and
// what the harness itself is to do.
type command struct {
	o *Options
	// tasks is -tasks as given; out is -out, defaulted by prepare.
	tasks, out string
	// flowSpec, peer and aider are what ParseRunners makes the runners of.
	flowSpec, peer, aider string
	// startServer is -start-server's command; cases is -cases.
	startServer, cases string
	doctor, reviewer   bool
}

// define declares the flags, the table of the command line: each is
// bound to its field of c or of its Options.
func (c *command) define(fs *flag.FlagSet) {
	o := c.o
	fs.StringVar(&c.startServer, "start-server", "", "start the model server with this `command` first (\"scripts/llamacpp-server.sh serve 8091 16384\"), wait for -base-url to answer, stop it at the end")
	fs.BoolVar(&c.reviewer, "reviewer", false, "evaluate flow's reviewer instead (make eval-reviewer): the labelled changes of -cases, each made by a scripted coder, judged by the real model")
	fs.StringVar(&c.cases, "cases", "eval/reviewer/cases", "the `folder` of the reviewer's labelled cases (-reviewer)")
	fs.StringVar(&c.flowSpec, "flow", "bin/flow", "the flow `binary` to evaluate, or several labelled ones (before=/tmp/flow-old,after=bin/flow); empty with -peer: the peer only")
	fs.StringVar(&c.peer, "peer", "", "run a peer on the same tasks, interleaved with flow: `aider`")
	fs.StringVar(&c.aider, "aider", defaultAiderPath(), "the aider `executable` of -peer aider (scripts/aider-venv.sh installs it there)")
	fs.BoolVar(&o.AiderChecks, "aider-checks", true, "give aider the task's checks as --test-cmd with --auto-test")
	fs.StringVar(&o.ServerLog, "server-log", "", "the model server's debug log `file` (OLLAMA_DEBUG=1): per run, the requests and prompt tokens it logged")
	fs.StringVar(&o.TasksDir, "tasks-dir", "eval/tasks", "the `folder` of the tasks")
	fs.StringVar(&o.ToolsDir, "tools-dir", "eval/tools", "the `folder` with the installed check tools (node_modules/, .venv/)")
	fs.StringVar(&c.tasks, "tasks", "", "comma-separated task `names` (a trailing * selects by prefix); empty: all")
	fs.IntVar(&o.Reps, "reps", 1, "repetitions of each task")
	fs.StringVar(&o.BaseURL, "base-url", "http://127.0.0.1:11434", "the model server's `URL`")
	fs.StringVar(&o.Model, "model", "flow-qwen2.5-coder:1.5b", "the model `name` for every role")
	fs.StringVar(&o.API, "api", "native", "the backend API: native or openai")
	fs.StringVar(&o.ReviewerURL, "reviewer-url", "", "send flow's reviewer to the model server at this `URL` ([servers.reviewer]); empty: -base-url")
	fs.StringVar(&o.ReviewerModel, "reviewer-model", "", "the reviewer's model `name` on -reviewer-url (default: -model)")
	fs.IntVar(&o.ContextLength, "context-length", 16384, "ollama.context_length (`tokens`)")
	fs.Float64Var(&o.CallTimeout, "call-timeout", 600, "ollama.timeout: `seconds` per model call")
	fs.DurationVar(&o.TaskTimeout, "task-timeout", 45*time.Minute, "the longest one flow run may take")
	fs.StringVar(&o.WorkDir, "work-dir", "", "scratch `folder` for workspaces and reports (default: a temporary one)")
	fs.BoolVar(&o.Keep, "keep", false, "keep the workspaces (under -work-dir)")
	fs.StringVar(&c.out, "out", "", "the JSON `file` of the run (default: $FLOW_TEST_CACHE/eval/run-<time>.json)")
	fs.StringVar(&o.Agent, "agent", "", "extra [agent] `settings` for every run, ';'-separated (\"brief_chars = 0; max_iterations = 8\")")
	fs.BoolVar(&c.doctor, "doctor", true, "run flow doctor first and stop when it is not ok")
}

// parseCommand parses and checks args; on a usage error it says why on
// stderr and returns nil.
func parseCommand(args []string, stderr io.Writer) *command {
	fs := flag.NewFlagSet("harness", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &command{o: &Options{}}
	c.define(fs)
	if err := fs.Parse(args); err != nil {
		return nil
	}
	switch o := c.o; {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "harness: unexpected argument %q\n", fs.Arg(0))
		return nil
	case o.API != "native" && o.API != "openai":
		fmt.Fprintf(stderr, "harness: -api must be native or openai, not %q\n", o.API)
		return nil
	case o.Reps < 1:
		fmt.Fprintln(stderr, "harness: -reps must be at least 1")
		return nil
	}
	if c.tasks != "" {
		c.o.Tasks = strings.Split(c.tasks, ",")
	}
	return c
}

// usageError is an error in what the harness was asked to do: it exits 2,
// where other errors exit 1.
type usageError struct{ error }

// fail prints err and returns the exit code it ends the harness with.
func fail(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "harness: %v\n", err)
	if errors.As(err, new(usageError)) {
		return 2
	}
	return 1
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := parseCommand(args, stderr)
	if c == nil {
		return 2
	}
	o := c.o
	if c.startServer != "" {
		stop, err := startLoggedServer(ctx, c.startServer, o.BaseURL, stderr)
		if err != nil {
			return fail(stderr, err)
		}
		defer stop()
		o.StartedServer = c.startServer
	}
	if c.reviewer {
		if err := absPaths(o); err != nil {
			return fail(stderr, usageError{err})
		}
		return runReviewer(ctx, o, c.cases, c.out, stdout, stderr)
	}
	list, err := c.prepare()
	if err != nil {
		return fail(stderr, err)
	}
	scratch := o.WorkDir
	if scratch == "" {
		if scratch, err = os.MkdirTemp("", "flow-eval-"); err != nil {
			return fail(stderr, err)
		}
		if !o.Keep {
			defer os.RemoveAll(scratch)
		}
	}
	if err := c.probe(ctx, list[0], scratch); err != nil {
		return fail(stderr, err)
	}
	results, err := Evaluate(ctx, o, list, scratch, c.out, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "harness: %v\n", err)
	}
	if len(o.Runners) > 1 {
		WriteComparison(stdout, results, o.Runners)
	} else {
		WriteTable(stdout, results)
	}
	fmt.Fprintf(stdout, "results: %s\n", c.out)
	switch {
	case ctx.Err() != nil:
		return 130
	case err != nil:
		return 1
	}
	return 0
}

// startLoggedServer starts the model server with cmd, its output going to
// a log file under the cache, and waits for url to answer.
func startLoggedServer(ctx context.Context, cmd, url string, stderr io.Writer) (stop func(), err error) {
	logFile := filepath.Join(cacheDir(), "eval", "server-"+time.Now().UTC().Format("20060102T150405Z")+".log")
	if err := os.MkdirAll(filepath.Dir(logFile), 0o755); err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "harness: starting %s (log %s)\n", cmd, logFile)
	return startServer(ctx, cmd, url, logFile, 10*time.Minute)
}

// prepare sets up the runners and the paths, and loads the tasks, each of
// whose tools must be installed; its errors are usage errors.
func (c *command) prepare() ([]*Task, error) {
	o := c.o
	runners, err := ParseRunners(c.flowSpec, c.peer, c.aider)
	if err != nil {
		return nil, usageError{err}
	}
	o.Runners = runners
	if err := absPaths(o); err != nil {
		return nil, usageError{err}
	}
	list, err := LoadTasks(o.TasksDir, o.Tasks)
	if err != nil {
		return nil, usageError{err}
	}
	if c.out == "" {
		c.out = filepath.Join(cacheDir(), "eval", "run-"+time.Now().UTC().Format("20060102T150405Z")+".json")
	}
	path := toolPath(o.ToolsDir)
	for _, t := range list {
		if miss := MissingTools(t.Language, path); len(miss) > 0 {
			return nil, usageError{fmt.Errorf("task %s needs %s: install the evaluation's tools with `make eval-tools`", t.Name, strings.Join(miss, ", "))}
		}
	}
	return list, nil
}

// probe checks what the runs need before the first: the server log can be
// read, every runner has a version, and flow doctor is ok (with -doctor),
// run on the task first in a workspace under scratch.
func (c *command) probe(ctx context.Context, first *Task, scratch string) error {
	o := c.o
	if o.ServerLog != "" {
		if err := (&ServerLog{Path: o.ServerLog}).Mark(); err != nil {
			return usageError{fmt.Errorf("%w (-server-log)", err)}
		}
	}
	for i := range o.Runners {
		rn := &o.Runners[i]
		if rn.Type != runnerAider {
			rn.Version = flowVersion(rn.Path)
			continue
		}
		var err error
		if rn.Version, err = aiderVersionOf(ctx, rn.Path); err != nil {
			return err
		}
		o.goEnv = goCacheEnv()
	}
	if fl := firstFlow(o.Runners); c.doctor && fl != nil {
		if msg := runDoctor(ctx, o, *fl, first, scratch); msg != "" {
			return fmt.Errorf("flow doctor is not ok: %s", msg)
		}
	}
	return nil
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
	f := newFile(o, tasks)
	queue := queueOf(o, tasks)
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
	several := len(o.Runners) > 1
	f.Pending = queue
	for i, p := range queue {
		if ctx.Err() != nil {
			break
		}
		var markErr error
		if serverLog != nil {
			markErr = serverLog.Mark()
		}
		r := RunOne(ctx, o, byLabel[p.Runner], byName[p.Task], p.Rep, scratch, p.name(several))
		if ctx.Err() != nil {
			// Interrupted: the run measured nothing; it stays pending.
			f.Pending = queue[i:]
			break
		}
		if serverLog != nil {
			r.addServerFigures(serverLog, markErr)
		}
		f.Results = append(f.Results, r)
		fmt.Fprintln(progress, ProgressLine(i+1, len(queue), r, several))
		f.Pending = queue[i+1:]
		f.summarize(o.Runners)
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

// newFile returns the JSON file of an evaluation of tasks with o, before
// its first run.
func newFile(o *Options, tasks []*Task) *File {
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
			f.Settings.Peer = aiderPeer(o, rn)
		}
	}
	for _, t := range tasks {
		f.Settings.Tasks = append(f.Settings.Tasks, t.Name)
	}
	return f
}

// aiderPeer is how the aider runner rn is run, for the settings.
func aiderPeer(o *Options, rn Runner) *Peer {
	return &Peer{Name: runnerAider, Version: rn.Version, Flags: AiderFixedFlags(o),
		NumCtx: o.ContextLength, ChecksAsTestCmd: o.AiderChecks,
		VerifiedRule: "aider exited 0, changed a file, and every check of the task passes (run by the harness after aider)",
		Figures: "model_calls: the TO LLM entries of --llm-history-file (the coder's requests; not aider's background chat summaries); " +
			"prompt_tokens, completion_tokens: the message_send events of --analytics-log, the server's counts of non-streamed replies"}
}

// queueOf returns the runs of an evaluation in order: each repetition of
// each task, every runner in turn.
func queueOf(o *Options, tasks []*Task) []Pending {
	var queue []Pending
	for rep := 1; rep <= o.Reps; rep++ {
		for _, t := range tasks {
			for _, rn := range o.Runners {
				queue = append(queue, Pending{Task: t.Name, Rep: rep, Runner: rn.Label})
			}
		}
	}
	return queue
}

// name is the run's name ("task-rep", with the runner's label when
// several run).
func (p Pending) name(several bool) string {
	name := fmt.Sprintf("%s-%d", p.Task, p.Rep)
	if several {
		name += "-" + p.Runner
	}
	return name
}

// addServerFigures adds what the server log says of the run since its
// mark (markErr is the mark's error).
func (r *Result) addServerFigures(serverLog *ServerLog, markErr error) {
	if markErr != nil {
		r.ServerError = markErr.Error()
		return
	}
	fig, err := serverLog.Since()
	if err != nil {
		r.ServerError = err.Error()
		return
	}
	r.Server = &fig
	if r.RunnerType != runnerAider && r.events != nil {
		r.Prompt = promptFigures(r.events, &fig)
	}
}

// summarize recomputes the file's summaries from its results.
func (f *File) summarize(runners []Runner) {
	f.Summary = Summarize(f.Results)
	f.ByRunner = SummarizeByRunner(f.Results, runners)
	f.Unknown = unknownFields(f.Results)
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
