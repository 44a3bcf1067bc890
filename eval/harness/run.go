package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"flow/internal/text"
)

// Options are the harness's settings (the command-line flags).
type Options struct {
	// Runners are the flow builds and the peer, run in this order on every
	// task × repetition.
	Runners       []Runner
	TasksDir      string
	ToolsDir      string // eval/tools: node_modules/ and .venv/
	Tasks         []string
	Reps          int
	BaseURL       string
	Model         string
	API           string // native or openai
	ContextLength int
	CallTimeout   float64       // seconds per model call (ollama.timeout)
	TaskTimeout   time.Duration // the whole flow run
	WorkDir       string        // scratch space; a temporary directory when empty
	Keep          bool          // keep the workspaces
	Agent         string        // extra [agent] lines ("brief_chars = 0"), for comparing settings
	// ReviewerURL and ReviewerModel, when set, send flow's reviewer to a
	// server of its own ([servers.reviewer], [roles.reviewer]; the model
	// defaults to Model), with the API, window and timeout of the rest.
	ReviewerURL, ReviewerModel string
	// AiderChecks gives aider the task's checks as its test command, with
	// --auto-test.
	AiderChecks bool
	// ServerLog is the model server's debug log ("" when not read).
	ServerLog string
	// StartedServer is the -start-server command the harness ran the
	// model server with, "" when the server was already there.
	StartedServer string

	goEnv []string // GOCACHE, GOMODCACHE, GOPATH for aider's own HOME
}

const defaultAcceptanceTimeout = 5 * time.Minute

// agentTable finds a task configuration's [agent] header line.
var agentTable = regexp.MustCompile(`(?m)^\s*\[\s*agent\s*\][^\n]*`)

// Result is one task × repetition. Fields the run's report does not carry
// are nil, so that a comparison never mistakes "unknown" for zero.
type Result struct {
	// Runner is the label of the flow build or the peer that ran;
	// RunnerType says which ("flow" or "aider").
	Runner           string `json:"runner"`
	RunnerType       string `json:"runner_type"`
	Task             string `json:"task"`
	Language         string `json:"language"`
	Kind             string `json:"kind"`
	Possible         bool   `json:"possible"`
	Rep              int    `json:"rep"`
	Status           string `json:"status"`
	Verified         bool   `json:"verified"`
	AcceptancePassed bool   `json:"acceptance_passed"`
	Pass             bool   `json:"pass"`
	FalseVerified    bool   `json:"false_verified"`
	ModelCalls       int    `json:"model_calls"`
	ToolCalls        int    `json:"tool_calls"`
	ToolCallsNative  *int   `json:"tool_calls_native"`
	ToolCallsText    *int   `json:"tool_calls_from_text"`
	ToolCallsRefused *int   `json:"tool_calls_refused"`
	ToolErrors       int    `json:"tool_errors"`
	// RepeatTurns counts the model turns whose every tool call repeated one
	// of the previous turn's (answered from it, not run again).
	RepeatTurns int `json:"repeat_turns"`
	// PromptEvalMS sums the model calls' prompt_eval_ms: the server's time
	// evaluating prompts (native API; 0 when the report has none).
	PromptEvalMS     int64    `json:"prompt_eval_ms"`
	PromptTokens     int      `json:"prompt_tokens"`
	CompletionTokens int      `json:"completion_tokens"`
	Cycles           int      `json:"cycles"`
	WallMS           int64    `json:"wall_ms"`
	ChangedFiles     []string `json:"changed_files"`
	Roles            []string `json:"roles"`
	Reason           string   `json:"reason,omitempty"`
	Error            string   `json:"error,omitempty"`
	ExitCode         int      `json:"exit_code"`
	AcceptanceOutput string   `json:"acceptance_output,omitempty"`
	Workspace        string   `json:"workspace,omitempty"`
	// ChecksPassed and Checks are the task's checks, run by the harness
	// after a peer's run (flow runs its own; nil for flow).
	ChecksPassed *bool          `json:"checks_passed,omitempty"`
	Checks       []CheckOutcome `json:"checks,omitempty"`
	// Server is what the model server's log says about the run's requests
	// (-server-log); ServerError says why it could not be read.
	Server      *ServerFigures `json:"server,omitempty"`
	ServerError string         `json:"server_log_error,omitempty"`
	// EditFormat is how flow's coder changed files ("tools", "whole"), and
	// Evidence what verified the run, from the report; "" when it does
	// not say.
	EditFormat string `json:"edit_format,omitempty"`
	Evidence   string `json:"evidence,omitempty"`
	// ToolDeclarations is where the run declared its tools ("native",
	// "text"), from the report's edit_format.tools.
	ToolDeclarations string `json:"tool_declarations,omitempty"`
	// HostEdits are the changes flow made to files itself (its report's
	// host_edits: mended imports), as "path: what".
	HostEdits []string `json:"host_edits,omitempty"`
	// Prompt are flow's prompt figures (cache.go); nil for the peer.
	Prompt *PromptFigures `json:"prompt,omitempty"`
	// events are flow's report events, for Prompt once the server log is read.
	events []map[string]any
}

// flowReport is the part of flow's run report the harness reads; the whole
// report is kept too, for the fields that only some versions carry.
type flowReport struct {
	Status       string   `json:"status"`
	Verified     bool     `json:"verified"`
	ChangedFiles []string `json:"changed_files"`
	ModelCalls   int      `json:"model_calls"`
	ToolCalls    int      `json:"tool_calls"`
	Cycles       int      `json:"cycles"`
	Usage        struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Roles []struct {
		Role       string `json:"role"`
		Status     string `json:"status"`
		Turns      int    `json:"turns"`
		ToolErrors int    `json:"tool_errors"`
		Error      string `json:"error"`
	} `json:"roles"`
	Events     []map[string]any `json:"events"`
	Reason     string           `json:"reason"`
	Error      string           `json:"error"`
	EditFormat *struct {
		Format string `json:"format"`
		Tools  string `json:"tools"`
	} `json:"edit_format"`
	Verification *struct {
		Evidence string `json:"evidence"`
	} `json:"verification"`
	HostEdits []struct {
		Path   string `json:"path"`
		What   string `json:"what"`
		Status string `json:"status"`
	} `json:"host_edits"`
}

// toolPath is PATH with the evaluation's own tools first: tsc from
// eval/tools/node_modules, pyflakes (and its python3) from eval/tools/.venv.
func toolPath(toolsDir string) string {
	var dirs []string
	for _, d := range []string{filepath.Join(toolsDir, ".venv", "bin"), filepath.Join(toolsDir, "node_modules", ".bin")} {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			dirs = append(dirs, d)
		}
	}
	return strings.Join(append(dirs, os.Getenv("PATH")), string(os.PathListSeparator))
}

// MissingTools names what the checks of language need and PATH lacks.
func MissingTools(language, path string) []string {
	var need [][]string // alternatives: {executable, python module}
	switch language {
	case "go":
		need = [][]string{{"go"}, {"gofmt"}}
	case "python":
		need = [][]string{{"python3"}, {"python3", "pyflakes"}}
	case "javascript", "typescript":
		need = [][]string{{"node"}, {"tsc"}}
	}
	var missing []string
	for _, n := range need {
		exe, err := lookPath(n[0], path)
		if err != nil {
			missing = append(missing, n[0])
			continue
		}
		if len(n) == 2 {
			if exec.Command(exe, "-c", "import "+n[1]).Run() != nil {
				missing = append(missing, n[1]+" (python module)")
			}
		}
	}
	return missing
}

func lookPath(name, path string) (string, error) {
	for _, d := range filepath.SplitList(path) {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found", name)
}

// prepareWorkspace lays a fresh copy of the task's project in dir, with the
// installed JavaScript tools linked in as node_modules (flow's file tools
// skip node_modules, so the model does not see it).
func prepareWorkspace(t *Task, dir, toolsDir string) error {
	if err := copyTree(filepath.Join(t.Dir, "project"), dir, nil); err != nil {
		return fmt.Errorf("copy the project: %w", err)
	}
	if t.Language == "javascript" || t.Language == "typescript" {
		nm := filepath.Join(toolsDir, "node_modules")
		if _, err := os.Stat(nm); err == nil {
			if err := os.Symlink(nm, filepath.Join(dir, "node_modules")); err != nil {
				return err
			}
		}
	}
	return nil
}

// operatorConfig is the whole configuration of one run: the harness's
// workspace and model server, then the task's own flow.toml.
func operatorConfig(o *Options, t *Task, workspace string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "workspace_dir = %s\n\n[ollama]\n", strconv.Quote(workspace))
	fmt.Fprintf(&b, "base_url = %s\nmodel = %s\napi = %s\n", strconv.Quote(o.BaseURL), strconv.Quote(o.Model), strconv.Quote(o.API))
	fmt.Fprintf(&b, "context_length = %d\ntimeout = %g\n\n", o.ContextLength, o.CallTimeout)
	if o.ReviewerURL != "" {
		m := o.ReviewerModel
		if m == "" {
			m = o.Model
		}
		fmt.Fprintf(&b, "[servers.reviewer]\nbase_url = %s\nmodel = %s\napi = %s\n", strconv.Quote(o.ReviewerURL), strconv.Quote(m), strconv.Quote(o.API))
		fmt.Fprintf(&b, "context_length = %d\ntimeout = %g\n\n[roles.reviewer]\nserver = \"reviewer\"\n\n", o.ContextLength, o.CallTimeout)
	}
	checks := t.Checks
	if extra := strings.TrimSpace(o.Agent); extra != "" {
		lines := strings.ReplaceAll(extra, ";", "\n")
		// One [agent] table: the task's own, when it has one, gets the
		// lines first (TOML refuses a table defined twice).
		if loc := agentTable.FindStringIndex(checks); loc != nil {
			checks = checks[:loc[1]] + "\n" + lines + checks[loc[1]:]
		} else {
			fmt.Fprintf(&b, "[agent]\n%s\n\n", lines)
		}
	}
	b.WriteString(checks)
	return b.String()
}

// RunOne runs one runner (a flow build or the peer) on a fresh copy of
// the task in scratch/name, and then the hidden acceptance test on a copy of
// what it left.
func RunOne(ctx context.Context, o *Options, rn Runner, t *Task, rep int, scratch, name string) Result {
	res := Result{Runner: rn.Label, RunnerType: rn.Type, Task: t.Name, Language: t.Language, Kind: t.Kind,
		Possible: t.CanBeDone(), Rep: rep, ChangedFiles: []string{}, Roles: []string{}}
	dir := filepath.Join(scratch, name)
	ws := filepath.Join(dir, "workspace")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		res.Status, res.Error = "harness_error", err.Error()
		return res
	}
	if o.Keep {
		res.Workspace = ws
	}
	if err := prepareWorkspace(t, ws, o.ToolsDir); err != nil {
		res.Status, res.Error = "harness_error", err.Error()
		return res
	}
	path := toolPath(o.ToolsDir)
	env := runEnv(path, dir)
	switch rn.Type {
	case runnerAider:
		runAider(ctx, o, rn, t, dir, ws, env, &res)
	default:
		runFlow(ctx, o, rn, t, dir, ws, env, &res)
	}
	if ctx.Err() != nil {
		return res // interrupted: the caller drops the run
	}

	passed, out, aerr := runAcceptance(ctx, t, ws, filepath.Join(dir, "accept"), env)
	res.AcceptancePassed = passed
	res.AcceptanceOutput = out
	if aerr != nil && res.Error == "" {
		res.Error = "acceptance: " + aerr.Error()
	}
	res.FalseVerified = res.Verified && !res.AcceptancePassed
	if t.CanBeDone() {
		res.Pass = res.AcceptancePassed
	} else {
		res.Pass = !res.Verified
	}
	if !o.Keep {
		_ = os.RemoveAll(ws)
		_ = os.RemoveAll(filepath.Join(dir, "accept"))
	}
	return res
}

// options are o with the build's own [agent] settings after -agent's.
func (rn Runner) options(o *Options) *Options {
	ro := *o
	if rn.Agent != "" {
		ro.Agent = strings.Trim(o.Agent+";"+rn.Agent, ";")
	}
	return &ro
}

// runFlow runs a flow build on ws and fills res from its report.
func runFlow(ctx context.Context, o *Options, rn Runner, t *Task, dir, ws string, env []string, res *Result) {
	cfg := filepath.Join(dir, "flow.toml")
	if err := os.WriteFile(cfg, []byte(operatorConfig(rn.options(o), t, ws)), 0o644); err != nil {
		res.Status, res.Error = "harness_error", err.Error()
		return
	}
	runCtx, cancel := context.WithTimeout(ctx, o.TaskTimeout)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(runCtx, rn.Path, "run", "--trusted", "-q", "-c", cfg, "-w", ws, t.Text)
	cmd.Env = env
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res.WallMS = time.Since(start).Milliseconds()
	res.ExitCode = cmd.ProcessState.ExitCode()
	_ = os.WriteFile(filepath.Join(dir, "report.json"), stdout.Bytes(), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "flow.stderr"), stderr.Bytes(), 0o644)

	var rep0 flowReport
	if jerr := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &rep0); jerr != nil {
		res.Status = "harness_error"
		switch {
		case runCtx.Err() != nil && ctx.Err() == nil:
			res.Error = fmt.Sprintf("flow run did not finish within %s", o.TaskTimeout)
		case err != nil:
			res.Error = fmt.Sprintf("flow run: %v: %s", err, lastLine(stderr.String()))
		default:
			res.Error = fmt.Sprintf("flow run printed no report: %v", jerr)
		}
	} else {
		fillFromReport(res, &rep0)
	}
}

func runEnv(path, dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "FLOW_LOG_FILE", "PYTHONDONTWRITEBYTECODE":
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"PATH="+path,
		"XDG_STATE_HOME="+filepath.Join(dir, "state"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
		"PYTHONDONTWRITEBYTECODE=1",
	)
}

func fillFromReport(res *Result, r *flowReport) {
	res.Status = r.Status
	res.Verified = r.Verified
	if r.ChangedFiles != nil {
		res.ChangedFiles = r.ChangedFiles
	}
	res.ModelCalls = r.ModelCalls
	res.ToolCalls = r.ToolCalls
	res.Cycles = r.Cycles
	res.PromptTokens = r.Usage.PromptTokens
	res.CompletionTokens = r.Usage.CompletionTokens
	res.Reason = text.OneLine(r.Reason, 300)
	res.Error = text.OneLine(r.Error, 300)
	if r.EditFormat != nil {
		res.EditFormat = r.EditFormat.Format
		res.ToolDeclarations = r.EditFormat.Tools
	}
	res.events = r.Events
	res.Prompt = promptFigures(r.Events, nil)
	if r.Verification != nil {
		res.Evidence = r.Verification.Evidence
	}
	for _, e := range r.HostEdits {
		h := e.Path + ": " + e.What
		if e.Status != "ok" {
			h += " (" + e.Status + ")"
		}
		res.HostEdits = append(res.HostEdits, h)
	}
	for _, role := range r.Roles {
		s := fmt.Sprintf("%s:%s/%d", role.Role, role.Status, role.Turns)
		if role.Error != "" {
			s += " (" + text.OneLine(role.Error, 120) + ")"
		}
		res.Roles = append(res.Roles, s)
		res.ToolErrors += role.ToolErrors
	}
	res.ToolCallsNative, res.ToolCallsText, res.ToolCallsRefused = toolCallSources(r.Events)
	res.RepeatTurns = repeatTurns(r.Events)
	for _, e := range r.Events {
		if ms, ok := e["prompt_eval_ms"].(float64); ok && e["kind"] == "model_call" {
			res.PromptEvalMS += int64(ms)
		}
	}
}

// repeatTurns counts the turns (a model_call event and the tool events
// after it) that had tool calls, each marked repeated.
func repeatTurns(events []map[string]any) int {
	n, calls, repeats := 0, 0, 0
	end := func() {
		if calls > 0 && repeats == calls {
			n++
		}
		calls, repeats = 0, 0
	}
	for _, e := range events {
		if e["kind"] == "model_call" {
			end()
			continue
		}
		if _, ok := e["tool"].(string); !ok {
			continue
		}
		calls++
		if e["repeated"] == true {
			repeats++
		}
	}
	end()
	return n
}

// toolCallSources counts the executed tool calls by where they came from,
// when the report's events say so: an event's "source" ("native" or
// "text") or a boolean "from_text", and a "refused" status or flag. A
// report whose events carry none of these gives nil counts (unknown).
func toolCallSources(events []map[string]any) (native, text, refused *int) {
	var n, tx, rf int
	var knowSource, knowRefused bool
	for _, e := range events {
		if src, ok := e["source"].(string); ok {
			knowSource = true
			switch src {
			case "text":
				tx++
			case "native":
				n++
			}
		} else if ft, ok := e["from_text"].(bool); ok {
			knowSource = true
			if ft {
				tx++
			} else {
				n++
			}
		}
		if st, _ := e["status"].(string); st == "refused" {
			knowRefused = true
			rf++
		} else if r, ok := e["refused"].(bool); ok {
			knowRefused = true
			if r {
				rf++
			}
		}
	}
	if knowSource {
		native, text = &n, &tx
	}
	if knowRefused {
		refused = &rf
	}
	return native, text, refused
}

// runAcceptance copies the final workspace to dir, lays the hidden
// acceptance files over it (restoring the original tests) and runs the
// task's acceptance command there.
func runAcceptance(ctx context.Context, t *Task, ws, dir string, env []string) (bool, string, error) {
	if _, err := os.Stat(ws); err != nil {
		return false, "", fmt.Errorf("no workspace: %w", err)
	}
	if err := copyTree(ws, dir, map[string]bool{"node_modules": true}); err != nil {
		return false, "", fmt.Errorf("copy the workspace: %w", err)
	}
	if target, err := os.Readlink(filepath.Join(ws, "node_modules")); err == nil {
		if err := os.Symlink(target, filepath.Join(dir, "node_modules")); err != nil {
			return false, "", err
		}
	}
	if err := copyTree(filepath.Join(t.Dir, "acceptance"), dir, nil); err != nil {
		return false, "", fmt.Errorf("lay the acceptance files: %w", err)
	}
	timeout := defaultAcceptanceTimeout
	if t.Acceptance.TimeoutSec > 0 {
		timeout = time.Duration(t.Acceptance.TimeoutSec) * time.Second
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(actx, t.Acceptance.Cmd[0], t.Acceptance.Cmd[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	if exe, err := lookPath(t.Acceptance.Cmd[0], envPath(env)); err == nil {
		cmd.Path, cmd.Err = exe, nil // found on the run's PATH: not the lookup of our own
	}
	cmd.Stdin = nil
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	tail := string(out)
	if end := text.Tail(tail, 2000); end != tail {
		tail = text.Ellipsis + end
	}
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && actx.Err() == nil {
			return false, tail, nil
		}
		if actx.Err() != nil {
			return false, tail, fmt.Errorf("did not finish within %s", timeout)
		}
		return false, tail, err
	}
	return true, tail, nil
}

func envPath(env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			return v
		}
	}
	return ""
}

// lastLine is the last line of a command's stderr, where the error usually
// is, as one line of at most 300 characters.
func lastLine(s string) string {
	last, _ := text.LastLines(strings.TrimSpace(s), 1)
	return text.OneLine(last, 300)
}

// sortedKeys is used for stable output.
func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
