package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
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
	"flow/runtime/config"
)

// The peer: aider (aider-chat from PyPI, in the venv scripts/aider-venv.sh
// makes), run on the same tasks, model server and model as flow.

// aiderVersion is the aider-chat release scripts/aider-venv.sh installs by
// default; -aider picks another executable.
const aiderVersion = "0.86.2"

// defaultAiderPath is where scripts/aider-venv.sh puts aider.
func defaultAiderPath() string {
	return filepath.Join(cacheDir(), "aider", aiderVersion, "venv", "bin", "aider")
}

// aiderModel is litellm's name of an Ollama model on its native chat API.
func aiderModel(model string) string { return "ollama_chat/" + model }

// The files of one aider run, in its run folder (outside the workspace).
const (
	aiderSettingsFile = "aider-model-settings.yml"
	aiderMetadataFile = "aider-model-metadata.json"
	aiderLLMHistory   = "aider-llm-history.txt"
	aiderAnalyticsLog = "aider-analytics.jsonl"
	aiderChatHistory  = "aider-chat-history.md"
	aiderInputHistory = "aider-input-history.txt"
	aiderOutput       = "aider.out"
	aiderArgsFile     = "aider.args.json"
)

// AiderFixedFlags are the flags every aider run gets, whatever the task
// (recorded in the results' settings). Why each:
//
//   - --model ollama_chat/MODEL: litellm's provider for Ollama's /api/chat,
//     the API flow uses too; the server comes from OLLAMA_API_BASE.
//   - --model-settings-file: extra_params.num_ctx, the context window flow
//     gets (-context-length). Without it aider sizes num_ctx to each prompt,
//     and Ollama reloads the model whenever the size changes.
//   - --model-metadata-file: the model's window and zero prices, so aider
//     does not fetch litellm's price list from GitHub for an unknown model.
//   - --no-git, --no-auto-commits: the workspace is a plain folder (as for
//     flow) and aider commits nothing.
//   - --yes-always: nobody is there to answer; aider then applies its edits
//     and, with --auto-test, tries to fix failing checks.
//   - --no-stream, --no-pretty: plain output; a non-streamed reply carries
//     the server's token counts, which aider then logs (streamed, it logs
//     its own estimate).
//   - --timeout: -call-timeout, flow's ollama.timeout, per model call.
//   - --no-check-update, --no-show-release-notes, --analytics-disable,
//     --no-show-model-warnings, --no-detect-urls: nothing reaches past the
//     model server (with LITELLM_LOCAL_MODEL_COST_MAP=True in the
//     environment: litellm fetches its price map at import otherwise).
//   - --llm-history-file and --analytics-log: where the model calls and
//     the tokens are read from (see readAiderFigures).
func AiderFixedFlags(o *Options) []string {
	return []string{
		"--model", aiderModel(o.Model),
		"--model-settings-file", aiderSettingsFile,
		"--model-metadata-file", aiderMetadataFile,
		"--no-git", "--no-auto-commits",
		"--yes-always",
		"--no-stream", "--no-pretty",
		"--timeout", strconv.FormatFloat(o.CallTimeout, 'f', -1, 64),
		"--no-check-update", "--no-show-release-notes", "--analytics-disable",
		"--no-show-model-warnings", "--no-detect-urls",
		"--llm-history-file", aiderLLMHistory,
		"--analytics-log", aiderAnalyticsLog,
		"--chat-history-file", aiderChatHistory,
		"--input-history-file", aiderInputHistory,
	}
}

// aiderFileFlags are the fixed flags whose value is a file of the run folder.
var aiderFileFlags = map[string]bool{
	"--model-settings-file": true, "--model-metadata-file": true, "--llm-history-file": true,
	"--analytics-log": true, "--chat-history-file": true, "--input-history-file": true,
}

// aiderArgs is the whole command line of one run, with the run folder's
// files named by absolute path: the fixed flags, the checks as the test
// command (when testCmd is not empty), the task as the message, then the
// files added to the chat.
func aiderArgs(o *Options, dir, testCmd, task string, files []string) []string {
	fixed := AiderFixedFlags(o)
	args := make([]string, 0, len(fixed)+len(files)+4)
	for i, a := range fixed {
		if i > 0 && aiderFileFlags[fixed[i-1]] {
			a = filepath.Join(dir, a)
		}
		args = append(args, a)
	}
	if testCmd != "" {
		args = append(args, "--test-cmd", testCmd, "--auto-test")
	}
	args = append(args, "--message="+task)
	return append(args, files...)
}

// aiderModelFiles writes the model settings (YAML; JSON is YAML) and the
// model metadata aider reads.
func aiderModelFiles(o *Options, dir string) error {
	name := aiderModel(o.Model)
	settings := []map[string]any{{"name": name, "extra_params": map[string]any{"num_ctx": o.ContextLength}}}
	meta := map[string]any{name: map[string]any{
		"max_tokens": o.ContextLength, "max_input_tokens": o.ContextLength, "max_output_tokens": o.ContextLength,
		"input_cost_per_token": 0, "output_cost_per_token": 0,
		"litellm_provider": "ollama_chat", "mode": "chat",
	}}
	for file, v := range map[string]any{aiderSettingsFile: settings, aiderMetadataFile: meta} {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, file), append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// sourceExts are the files of each language that aider gets in its chat:
// the code and its tests, not the build files.
var sourceExts = map[string][]string{
	"go":         {".go"},
	"python":     {".py"},
	"javascript": {".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx"},
	"typescript": {".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx"},
}

// sourceFiles lists the task's source files in ws (relative, sorted): what a
// user would add to aider's chat. The acceptance files are never in ws.
func sourceFiles(ws, language string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(ws, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != ws && skipInWorkspace(d.Name()) {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		for _, ext := range sourceExts[language] {
			if strings.HasSuffix(d.Name(), ext) {
				rel, err := filepath.Rel(ws, path)
				if err != nil {
					return err
				}
				out = append(out, filepath.ToSlash(rel))
				break
			}
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// skipInWorkspace names what is not the project's: the linked tools, a
// repository, caches and aider's own files.
func skipInWorkspace(name string) bool {
	return name == "node_modules" || name == ".git" || name == "__pycache__" || strings.HasPrefix(name, ".aider")
}

// testCommand is the task's checks as one shell command for aider's
// --test-cmd: each check's command, quoted, joined with &&.
func testCommand(checks []config.Check) string {
	parts := make([]string, len(checks))
	for i, ch := range checks {
		words := make([]string, len(ch.Cmd))
		for j, w := range ch.Cmd {
			words[j] = shellQuote(w)
		}
		parts[i] = strings.Join(words, " ")
	}
	return strings.Join(parts, " && ")
}

var shellPlain = regexp.MustCompile(`^[A-Za-z0-9_./:=,+@%-]+$`)

func shellQuote(s string) string {
	if shellPlain.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// taskChecks reads the checks of a task's flow.toml the way flow reads
// them (with flow's defaults), from the run's operator configuration.
func taskChecks(o *Options, t *Task, dir, ws string) ([]config.Check, error) {
	file := filepath.Join(dir, "checks.toml")
	if err := os.WriteFile(file, []byte(operatorConfig(o, t, ws)), 0o644); err != nil {
		return nil, err
	}
	cfg, err := config.Load(config.LoadOptions{ConfigFile: file, Cwd: dir, Getenv: func(string) string { return "" }})
	if err != nil {
		return nil, fmt.Errorf("the task's checks: %w", err)
	}
	return cfg.Checks, nil
}

// aiderEnv is the run's environment for aider: its own HOME in the run
// folder (aider writes ~/.aider there, so every run starts alike and the
// user's settings are untouched), the model server, no AIDER_* settings
// from the caller, litellm's bundled price map, and the Go caches of the
// caller's environment (a new HOME would otherwise mean a cold build cache
// for every check aider runs).
func aiderEnv(env []string, o *Options, dir string, goEnv []string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "AIDER_"), strings.HasPrefix(k, "LITELLM_"),
			k == "HOME", k == "OLLAMA_API_BASE", k == "SHELL":
			continue
		}
		out = append(out, kv)
	}
	out = append(out, goEnv...)
	return append(out,
		"HOME="+filepath.Join(dir, "home"),
		"OLLAMA_API_BASE="+o.BaseURL,
		"LITELLM_LOCAL_MODEL_COST_MAP=True",
		"SHELL=/bin/sh", // aider runs --test-cmd with $SHELL
	)
}

// goCacheEnv pins GOCACHE, GOMODCACHE and GOPATH to what they are for the
// harness, for processes whose HOME differs. Variables the environment
// already sets are left to it.
func goCacheEnv() []string {
	keys := []string{"GOCACHE", "GOMODCACHE", "GOPATH"}
	out, err := exec.Command("go", append([]string{"env"}, keys...)...).Output()
	if err != nil {
		return nil
	}
	var env []string
	for i, v := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if i < len(keys) && v != "" && os.Getenv(keys[i]) == "" {
			env = append(env, keys[i]+"="+v)
		}
	}
	return env
}

// aiderFigures are what aider's own logs say about its model calls.
type aiderFigures struct {
	Calls            int    // "TO LLM" entries of the LLM history
	PromptTokens     int    // message_send events of the analytics log
	CompletionTokens int    //
	EditFormat       string // of the last message_send event
}

var llmHistoryCall = regexp.MustCompile(`(?m)^TO LLM \d{4}-\d\d-\d\dT`)

// readAiderFigures reads the model calls from aider's --llm-history-file:
// one "TO LLM <time>" header per request its coder sends (every line of a
// message in it starts with the role, so a header cannot be forged by a
// reply). The tokens come from the message_send events of its
// --analytics-log, one per answered message: prompt_tokens and
// completion_tokens are the server's counts (prompt_eval_count, eval_count)
// when the reply carried them, which a non-streamed reply from Ollama does.
// A missing file means nothing was logged (aider never got that far).
func readAiderFigures(dir string) (aiderFigures, error) {
	var f aiderFigures
	hist, err := os.ReadFile(filepath.Join(dir, aiderLLMHistory))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return f, err
	}
	f.Calls = len(llmHistoryCall.FindAllIndex(hist, -1))
	log, err := os.Open(filepath.Join(dir, aiderAnalyticsLog))
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, err
	}
	defer log.Close()
	sc := bufio.NewScanner(log)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		var ev struct {
			Event      string `json:"event"`
			Properties struct {
				PromptTokens     *float64 `json:"prompt_tokens"`
				CompletionTokens *float64 `json:"completion_tokens"`
				EditFormat       string   `json:"edit_format"`
			} `json:"properties"`
		}
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if err := json.Unmarshal(line, &ev); err != nil {
			return f, fmt.Errorf("%s line %d: %v", aiderAnalyticsLog, n, err)
		}
		if ev.Event != "message_send" {
			continue
		}
		p := ev.Properties
		if p.PromptTokens == nil || p.CompletionTokens == nil {
			return f, fmt.Errorf("%s line %d: a message_send event without prompt_tokens and completion_tokens", aiderAnalyticsLog, n)
		}
		f.PromptTokens += int(*p.PromptTokens)
		f.CompletionTokens += int(*p.CompletionTokens)
		f.EditFormat = p.EditFormat
	}
	return f, sc.Err()
}

// CheckOutcome is one check the harness ran itself after a peer's run.
type CheckOutcome struct {
	Name   string `json:"name"`
	Passed bool   `json:"passed"`
	Output string `json:"output,omitempty"` // the tail, when it failed
}

// runChecks runs each check in ws as flow would (its command, the run's
// environment or the check's allowlist of it, its timeout), one after the
// other, all of them.
func runChecks(ctx context.Context, checks []config.Check, ws string, env []string) ([]CheckOutcome, error) {
	out := make([]CheckOutcome, 0, len(checks))
	for _, ch := range checks {
		if len(ch.Cmd) == 0 {
			return out, fmt.Errorf("check %s has no command", ch.Name)
		}
		timeout := time.Duration(ch.Timeout) * time.Millisecond
		if timeout <= 0 {
			timeout = time.Duration(config.DefaultCheckTimeout) * time.Millisecond
		}
		cctx, cancel := context.WithTimeout(ctx, timeout)
		cmd := exec.CommandContext(cctx, ch.Cmd[0], ch.Cmd[1:]...)
		cmd.Dir = ws
		cmd.Env = checkEnv(env, ch.Env)
		if exe, err := lookPath(ch.Cmd[0], envPath(env)); err == nil {
			cmd.Path, cmd.Err = exe, nil // found on the run's PATH: not the lookup of our own
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = 5 * time.Second
		b, err := cmd.CombinedOutput()
		timedOut := cctx.Err() != nil
		cancel()
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		o := CheckOutcome{Name: ch.Name, Passed: err == nil}
		if !o.Passed {
			o.Output = tailText(string(b), 1000)
			if strings.TrimSpace(o.Output) == "" {
				o.Output = err.Error() // no output: say how it ended
			}
			if timedOut {
				o.Output = fmt.Sprintf("did not finish within %s; %s", timeout, o.Output)
			}
		}
		out = append(out, o)
	}
	return out, nil
}

// checkEnv is env, or only its variables named in allow when the check has
// an allowlist (PATH always, so that the command is found).
func checkEnv(env, allow []string) []string {
	if allow == nil {
		return env
	}
	keep := map[string]bool{"PATH": true}
	for _, k := range allow {
		keep[k] = true
	}
	var out []string
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); keep[k] {
			out = append(out, kv)
		}
	}
	return out
}

func tailText(s string, n int) string {
	if end := text.Tail(s, n); end != s {
		return text.Ellipsis + end
	}
	return s
}

// changedFiles lists the files (relative, sorted) that differ between the
// original project and the workspace: changed, added or removed.
func changedFiles(orig, ws string) ([]string, error) {
	a, err := treeFiles(orig)
	if err != nil {
		return nil, err
	}
	b, err := treeFiles(ws)
	if err != nil {
		return nil, err
	}
	var out []string
	for rel, pa := range a {
		pb, ok := b[rel]
		if !ok {
			out = append(out, rel)
			continue
		}
		same, err := sameContent(pa, pb)
		if err != nil {
			return nil, err
		}
		if !same {
			out = append(out, rel)
		}
	}
	for rel := range b {
		if _, ok := a[rel]; !ok {
			out = append(out, rel)
		}
	}
	sort.Strings(out)
	return out, nil
}

// treeFiles maps the relative path of each regular file under dir to its
// path, leaving out what skipInWorkspace names.
func treeFiles(dir string) (map[string]string, error) {
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != dir && skipInWorkspace(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			rel, err := filepath.Rel(dir, path)
			if err != nil {
				return err
			}
			files[filepath.ToSlash(rel)] = path
		}
		return nil
	})
	return files, err
}

func sameContent(a, b string) (bool, error) {
	x, err := os.ReadFile(a)
	if err != nil {
		return false, err
	}
	y, err := os.ReadFile(b)
	if err != nil {
		return false, err
	}
	return bytes.Equal(x, y), nil
}

// aiderVerified is the harness's "verified" for aider, which makes no claim
// of its own: aider exited 0, changed a file, and every check passes. The
// changed file is flow's rule too (a run that changes no file is never
// verified); without it, a run that did nothing would count as verified
// wherever the checks pass on the untouched project (the bug-in-words
// tasks).
func aiderVerified(exitCode int, changed []string, checks []CheckOutcome) bool {
	if exitCode != 0 || len(changed) == 0 || len(checks) == 0 {
		return false
	}
	for _, c := range checks {
		if !c.Passed {
			return false
		}
	}
	return true
}

// runAider runs aider on ws, then the task's checks, and fills res.
func runAider(ctx context.Context, o *Options, rn Runner, t *Task, dir, ws string, env []string, res *Result) {
	fail := func(err error) {
		res.Status, res.Error = "harness_error", err.Error()
	}
	checks, args, err := prepareAider(o, rn, t, dir, ws)
	if err != nil {
		fail(err)
		return
	}
	runCtx, cancel := context.WithTimeout(ctx, o.TaskTimeout)
	defer cancel()
	runErr, err := execAider(runCtx, o, rn, dir, ws, env, args, res)
	if err != nil {
		fail(err)
		return
	}
	if ctx.Err() != nil {
		return // interrupted: the caller drops the run
	}
	output, _ := os.ReadFile(filepath.Join(dir, aiderOutput))

	fig, ferr := readAiderFigures(dir)
	res.ModelCalls = fig.Calls
	res.PromptTokens, res.CompletionTokens = fig.PromptTokens, fig.CompletionTokens
	if res.ChangedFiles, err = changedFiles(filepath.Join(t.Dir, "project"), ws); err != nil {
		fail(fmt.Errorf("compare the workspace: %w", err))
		return
	}
	outcomes, cerr := runChecks(ctx, checks, ws, env)
	res.Checks = outcomes
	if cerr != nil {
		fail(fmt.Errorf("checks: %w", cerr))
		return
	}
	passed := true
	for _, c := range outcomes {
		passed = passed && c.Passed
	}
	res.ChecksPassed = &passed
	res.Verified = aiderVerified(res.ExitCode, res.ChangedFiles, outcomes)
	judgeAider(res, runCtx.Err() != nil, runErr, string(output), o.TaskTimeout)
	if ferr != nil && res.Error == "" {
		res.Error = "aider's logs: " + ferr.Error()
	}
}

// prepareAider readies dir for an aider run on ws: the task's checks, the
// model's settings files, aider's own HOME; it returns the checks and
// aider's arguments, which it also writes to aiderArgsFile.
func prepareAider(o *Options, rn Runner, t *Task, dir, ws string) ([]config.Check, []string, error) {
	checks, err := taskChecks(o, t, dir, ws)
	if err != nil {
		return nil, nil, err
	}
	if err := aiderModelFiles(o, dir); err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "home"), 0o755); err != nil {
		return nil, nil, err
	}
	files, err := sourceFiles(ws, t.Language)
	if err != nil {
		return nil, nil, err
	}
	testCmd := ""
	if o.AiderChecks {
		testCmd = testCommand(checks)
	}
	args := aiderArgs(o, dir, testCmd, t.Text, files)
	if b, err := json.MarshalIndent(append([]string{rn.Path}, args...), "", "  "); err == nil {
		_ = os.WriteFile(filepath.Join(dir, aiderArgsFile), append(b, '\n'), 0o644)
	}
	return checks, args, nil
}

// execAider runs aider in ws until it ends or runCtx is done (then its
// process group is sent SIGTERM), its output going to aiderOutput, and
// records its wall time and exit code (-1 when it did not exit). runErr is
// the run's error; err is set when it could not be started.
func execAider(runCtx context.Context, o *Options, rn Runner, dir, ws string, env, args []string, res *Result) (runErr, err error) {
	start := time.Now()
	cmd := exec.CommandContext(runCtx, rn.Path, args...)
	cmd.Env = aiderEnv(env, o, dir, o.goEnv)
	cmd.Dir = ws
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	outFile, err := os.Create(filepath.Join(dir, aiderOutput))
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = outFile, outFile
	runErr = cmd.Run()
	outFile.Close()
	res.WallMS = time.Since(start).Milliseconds()
	res.ExitCode = -1
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	return runErr, nil
}

// judgeAider sets the status of an aider run whose checks ran: timedOut
// says it overran timeout, runErr is its run's error and output what it
// printed.
func judgeAider(res *Result, timedOut bool, runErr error, output string, timeout time.Duration) {
	switch {
	case timedOut:
		res.Status = "timeout"
		res.Error = fmt.Sprintf("aider did not finish within %s", timeout)
	case runErr != nil && res.ExitCode < 0:
		res.Status, res.Error = "harness_error", fmt.Sprintf("aider: %v", runErr)
	case res.ExitCode != 0:
		res.Status = "error"
		res.Error = fmt.Sprintf("aider exit %d: %s", res.ExitCode, lastLine(output))
	case res.Verified:
		res.Status = "ok"
	case len(res.ChangedFiles) == 0:
		res.Status = "unverified"
		res.Reason = "no file changed"
	default:
		res.Status = "unverified"
		var failed []string
		for _, c := range res.Checks {
			if !c.Passed {
				failed = append(failed, c.Name)
			}
		}
		res.Reason = "failing checks: " + strings.Join(failed, ", ")
	}
}

// aiderVersionOf asks the executable its version ("aider 0.86.2" → "0.86.2").
func aiderVersionOf(ctx context.Context, path string) (string, error) {
	vctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(vctx, path, "--version")
	cmd.Env = append(os.Environ(), "LITELLM_LOCAL_MODEL_COST_MAP=True")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s --version: %v: %s", path, err, text.OneLine(string(out), 300))
	}
	v := strings.TrimSpace(string(out))
	if last, _ := text.LastLines(v, 1); last != "" {
		v = last
	}
	return strings.TrimPrefix(v, "aider "), nil
}
