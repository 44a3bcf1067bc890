package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// The stand-ins: the test binary acting as a flow build or as aider
// (FLOW_EVAL_STANDIN=flow|aider, set by a wrapper script the harness runs),
// so that the harness's runners, interleaving, checks, acceptance, tables
// and JSON can be tested without aider installed. Each invocation takes the
// next step of a plan file (FLOW_EVAL_STANDIN_PLAN) and fails loudly when
// the step is for another run: the plan is the order the runs must come in.
// A step does on disk what the real program would (writes files), prints or
// logs what it would (flow's report; aider's LLM history and analytics
// log), and appends the model server's log lines of its requests to
// FLOW_EVAL_STANDIN_LOG.

// standInStep is one run of a stand-in.
type standInStep struct {
	// Run is the run folder's name the step is for (task-rep-runner), and
	// Task the task's name.
	Run   string            `json:"run"`
	Task  string            `json:"task"`
	Write map[string]string `json:"write"` // files to write in the workspace
	Exit  int               `json:"exit"`
	// Verified is the stand-in flow's claim in its report.
	Verified bool `json:"verified"`
	// Calls is flow's model_calls, or aider's TO LLM entries.
	Calls int `json:"calls"`
	// Prompt is the prompt tokens of each answered model call.
	Prompt []int `json:"prompt"`
	// Server is the (prompt, used, remaining) of each request, as the
	// server logs them.
	Server [][3]int `json:"server"`
}

const (
	standInRole  = "FLOW_EVAL_STANDIN"
	standInPlan  = "FLOW_EVAL_STANDIN_PLAN"
	standInLog   = "FLOW_EVAL_STANDIN_LOG"
	standInTasks = "FLOW_EVAL_STANDIN_TASKS"
	// standInTestCmd is the file in the run folder where the stand-in aider
	// notes the exit status of the --test-cmd it ran.
	standInTestCmd = "standin-test-cmd.txt"
)

// writeStandIn writes a wrapper script that runs this test binary as role.
func writeStandIn(dir, role, plan, serverLog, tasks string) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, role)
	script := fmt.Sprintf("#!/bin/sh\n%s=%s %s=%s %s=%s %s=%s exec %s \"$@\"\n",
		standInRole, role, standInPlan, shellQuote(plan), standInLog, shellQuote(serverLog),
		standInTasks, shellQuote(tasks), shellQuote(exe))
	return path, os.WriteFile(path, []byte(script), 0o755)
}

// standIn is the whole stand-in program; its exit status is the step's, or
// 90 and more when the harness did not call it as the plan says.
func standIn(role string, args []string) int {
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "stand-in %s: %s\n", role, fmt.Sprintf(format, a...))
		return code
	}
	if len(args) == 1 && (args[0] == "version" || args[0] == "--version") {
		if role == runnerAider {
			fmt.Println("aider 0.0.0-standin")
		} else {
			fmt.Println("flow 0.0.0-standin")
		}
		return 0
	}
	var ws, message string
	var files []string
	flags := map[string]string{}
	switch role {
	case runnerFlow:
		// run --trusted -q -c CFG -w WS TEXT
		if len(args) != 8 || args[0] != "run" || args[5] != "-w" {
			return fail(90, "unexpected arguments %q", args)
		}
		ws, message = args[6], args[7]
	case runnerAider:
		var err error
		if ws, err = os.Getwd(); err != nil {
			return fail(90, "%v", err)
		}
		for i := 0; i < len(args); i++ {
			a := args[i]
			switch {
			case strings.HasPrefix(a, "--message="):
				message = strings.TrimPrefix(a, "--message=")
			case strings.HasPrefix(a, "--") && i+1 < len(args) && !strings.HasPrefix(args[i+1], "--"):
				flags[a] = args[i+1]
				i++
			case strings.HasPrefix(a, "--"):
				flags[a] = ""
			default:
				files = append(files, a)
			}
		}
	default:
		return fail(90, "unknown role")
	}
	step, err := nextStep()
	if err != nil {
		return fail(91, "%v", err)
	}
	runDir := filepath.Dir(ws)
	if got := filepath.Base(runDir); got != step.Run {
		return fail(92, "called for %s, but the plan's next run is %s", got, step.Run)
	}
	task, err := LoadTask(filepath.Join(os.Getenv(standInTasks), step.Task))
	if err != nil {
		return fail(93, "%v", err)
	}
	if message != task.Text {
		return fail(94, "the task text is %q, want %q", message, task.Text)
	}
	project := filepath.Join(task.Dir, "project")
	if changed, err := changedFiles(project, ws); err != nil || len(changed) > 0 {
		return fail(95, "the workspace is not a fresh copy of the project: %v %v", changed, err)
	}
	if role == runnerAider {
		want, err := sourceFiles(project, task.Language)
		if err != nil || strings.Join(files, " ") != strings.Join(want, " ") {
			return fail(96, "files in the chat %q, want the project's source files %q (%v)", files, want, err)
		}
	}
	for rel, content := range step.Write {
		if err := os.WriteFile(filepath.Join(ws, rel), []byte(content), 0o644); err != nil {
			return fail(97, "%v", err)
		}
	}
	if err := appendServerLog(step.Server); err != nil {
		return fail(97, "%v", err)
	}
	if role == runnerFlow {
		changed := make([]string, 0, len(step.Write))
		for rel := range step.Write {
			changed = append(changed, rel)
		}
		sort.Strings(changed)
		report := map[string]any{
			"status": map[bool]string{true: "ok", false: "unverified"}[step.Verified], "verified": step.Verified,
			"changed_files": changed, "model_calls": step.Calls, "tool_calls": len(changed), "cycles": 1,
			"usage": map[string]int{"prompt_tokens": sum(step.Prompt), "completion_tokens": 10 * len(step.Prompt)},
		}
		b, _ := json.Marshal(report)
		fmt.Println(string(b))
		return step.Exit
	}
	if err := writeAiderLogs(flags, step); err != nil {
		return fail(97, "%v", err)
	}
	if _, ok := flags["--auto-test"]; ok {
		cmd := exec.Command("/bin/sh", "-c", flags["--test-cmd"])
		cmd.Dir = ws
		out, err := cmd.CombinedOutput()
		code := 0
		if err != nil {
			code = -1
			if cmd.ProcessState != nil {
				code = cmd.ProcessState.ExitCode()
			}
		}
		note := fmt.Sprintf("exit %d\n%s", code, out)
		if err := os.WriteFile(filepath.Join(runDir, standInTestCmd), []byte(note), 0o644); err != nil {
			return fail(97, "%v", err)
		}
	}
	return step.Exit
}

// nextStep takes the first step off the plan file.
func nextStep() (standInStep, error) {
	path := os.Getenv(standInPlan)
	b, err := os.ReadFile(path)
	if err != nil {
		return standInStep{}, err
	}
	var plan []standInStep
	if err := json.Unmarshal(b, &plan); err != nil {
		return standInStep{}, err
	}
	if len(plan) == 0 {
		return standInStep{}, fmt.Errorf("the plan is done; no run was expected")
	}
	rest, err := json.Marshal(plan[1:])
	if err != nil {
		return standInStep{}, err
	}
	return plan[0], os.WriteFile(path, rest, 0o644)
}

// appendServerLog writes one Ollama debug line per request.
func appendServerLog(reqs [][3]int) error {
	path := os.Getenv(standInLog)
	if path == "" || len(reqs) == 0 {
		return nil
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	for _, r := range reqs {
		now := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
		fmt.Fprintf(f, "time=%s level=DEBUG source=server.go:1536 msg=\"completion request\" images=0 prompt=%d format=\"\"\n", now, 4*r[0])
		fmt.Fprintf(f, "time=%s level=DEBUG source=cache.go:104 msg=\"loading cache slot\" id=0 cache=%d prompt=%d used=%d remaining=%d\n", now, r[1], r[0], r[1], r[2])
		fmt.Fprintf(f, "[GIN] 2026/12/03 - 07:54:47 | 200 |  255.392768ms |       127.0.0.1 | POST     \"/api/chat\"\n")
	}
	return f.Close()
}

// writeAiderLogs writes what aider 0.86.2 writes to --llm-history-file and
// --analytics-log for the step's calls.
func writeAiderLogs(flags map[string]string, step standInStep) error {
	var hist strings.Builder
	for i := 0; i < step.Calls; i++ {
		ts := time.Now().Format("2006-01-02T15:04:05")
		fmt.Fprintf(&hist, "TO LLM %s\n-------\nSYSTEM Act as an expert software developer.\n-------\nUSER fix it\n", ts)
		// A reply quoting a header cannot count as a call: aider prefixes
		// every line with the role.
		fmt.Fprintf(&hist, "LLM RESPONSE %s\nASSISTANT TO LLM %s\nASSISTANT done\n", ts, ts)
	}
	if err := os.WriteFile(flags["--llm-history-file"], []byte(hist.String()), 0o644); err != nil {
		return err
	}
	var log strings.Builder
	for _, e := range []string{"launched", "no-repo", "auto_commits"} {
		fmt.Fprintf(&log, "{\"event\": %q, \"properties\": {}, \"user_id\": \"u\", \"time\": 1}\n", e)
	}
	for _, p := range step.Prompt {
		fmt.Fprintf(&log, "{\"event\": \"message_send_starting\", \"properties\": {}, \"user_id\": \"u\", \"time\": 1}\n")
		fmt.Fprintf(&log, "{\"event\": \"message_send\", \"properties\": {\"main_model\": \"ollama_chat/m\", \"edit_format\": \"whole\", \"prompt_tokens\": %d, \"completion_tokens\": 10, \"total_tokens\": %d, \"cost\": 0, \"total_cost\": 0.0}, \"user_id\": \"u\", \"time\": 1}\n", p, p+10)
	}
	log.WriteString("{\"event\": \"exit\", \"properties\": {\"reason\": \"Completed --message\"}, \"user_id\": \"u\", \"time\": 1}\n")
	return os.WriteFile(flags["--analytics-log"], []byte(log.String()), 0o644)
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}
