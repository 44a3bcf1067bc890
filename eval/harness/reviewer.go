package main

// The reviewer evaluation (make eval-reviewer, harness -reviewer): flow's
// reviewer, run by flow's own pipeline against a real model, on labelled
// changes of the evaluation tasks. Each case's change is made by a scripted
// coder (its answer gives the case's files whole); the project's checks
// must pass, so the reviewer is asked; its verdict is compared with the
// label. The two figures: the share of wrong changes rejected (the trust
// figure) and of correct ones approved.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"flow/bufferfs"
	"flow/internal/text"
	"flow/runtime/agent"
	"flow/runtime/config"
	"flow/runtime/measure"
	"flow/runtime/model"
	"flow/runtime/model/ollama"
	"flow/runtime/report"
)

// ReviewCase is one labelled change of a task: the whole new content of
// the files it changes.
type ReviewCase struct {
	Task  string `json:"task"`
	Name  string `json:"case"`
	Label string `json:"label"` // "correct" or "wrong"
	Why   string `json:"why"`
	Files []CaseFile
}

// CaseFile is one file of a case.
type CaseFile = measure.File

// Labels of a case.
const (
	labelCorrect = measure.LabelCorrect
	labelWrong   = measure.LabelWrong
)

// LoadReviewCases reads dir/<task>/<case>.txtar for the tasks named in
// tasks (all when empty), sorted by task and name.
func LoadReviewCases(dir string, tasks []string) ([]ReviewCase, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read the reviewer cases: %w", err)
	}
	var out []ReviewCase
	for _, e := range entries {
		if !e.IsDir() || len(tasks) > 0 && !selected(e.Name(), tasks) {
			continue
		}
		files, err := filepath.Glob(filepath.Join(dir, e.Name(), "*.txtar"))
		if err != nil {
			return nil, err
		}
		sort.Strings(files)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			c, err := ParseReviewCase(string(data))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			c.Task, c.Name = e.Name(), strings.TrimSuffix(filepath.Base(f), ".txtar")
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no reviewer cases under %s", dir)
	}
	return out, nil
}

// ParseReviewCase reads one case: the header lines "label: correct|wrong"
// and "why: ...", then txtar sections ("-- path --" and the file's whole
// new content), as the cases flow ships are read (runtime/measure).
func ParseReviewCase(data string) (ReviewCase, error) {
	c, err := measure.ParseCase(data)
	return ReviewCase{Label: c.Label, Why: c.Why, Files: c.Files}, err
}

// answer is the scripted coder's answer: every file whole, in the format
// flow's whole-file coder writes.
func (c ReviewCase) answer() string { return measure.Case{Files: c.Files}.Answer() }

// ReviewResult is one case's outcome.
type ReviewResult struct {
	Task  string `json:"task"`
	Case  string `json:"case"`
	Label string `json:"label"`
	Rep   int    `json:"rep"`
	// Judged: the checks passed and the reviewer was asked; otherwise
	// NotJudged says why, and the case does not count.
	Judged    bool   `json:"judged"`
	NotJudged string `json:"not_judged,omitempty"`
	// Verdict is "approved", "rejected" or "none" (no verdict: the
	// reviewer's error says why).
	Verdict      string   `json:"verdict,omitempty"`
	Summary      string   `json:"summary,omitempty"`
	Issues       []string `json:"issues,omitempty"`
	Error        string   `json:"error,omitempty"`
	ModelCalls   int      `json:"model_calls"`
	PromptTokens int      `json:"prompt_tokens"`
	WallMS       int64    `json:"wall_ms"`
}

// ReviewSummary are the evaluation's figures.
type ReviewSummary struct {
	Cases          int `json:"cases"`
	NotJudged      int `json:"not_judged"`
	Wrong          int `json:"wrong_judged"`
	WrongRejected  int `json:"wrong_rejected"`
	Correct        int `json:"correct_judged"`
	CorrectApprove int `json:"correct_approved"`
	NoVerdict      int `json:"no_verdict"`
	// TrustPct and ApprovalPct are WrongRejected/Wrong and
	// CorrectApprove/Correct in percent (-1 with nothing judged).
	TrustPct    float64 `json:"trust_pct"`
	ApprovalPct float64 `json:"approval_pct"`
	MedianMS    int64   `json:"median_ms_per_review"`
}

// ReviewFile is the JSON file of one reviewer evaluation.
type ReviewFile struct {
	StartedAt string         `json:"started_at"`
	Finished  bool           `json:"finished"`
	Settings  Settings       `json:"settings"`
	Machine   Machine        `json:"machine"`
	Results   []ReviewResult `json:"results"`
	Summary   ReviewSummary  `json:"summary"`
}

// SummarizeReviews computes the figures: flow's own (measure.Summarize,
// where a judged case without a verdict counts against the reviewer), the
// cases not judged, those without a verdict and the median time.
func SummarizeReviews(rs []ReviewResult) ReviewSummary {
	var s ReviewSummary
	var walls []int64
	mr := make([]measure.Result, 0, len(rs))
	for _, r := range rs {
		s.Cases++
		if !r.Judged {
			s.NotJudged++
			continue
		}
		walls = append(walls, r.WallMS)
		if r.Verdict == "none" {
			s.NoVerdict++
		}
		mr = append(mr, measure.Result{Label: r.Label, Judged: true, Verdict: r.Verdict})
	}
	m := measure.Summarize(mr, "", time.Time{})
	s.Wrong, s.WrongRejected, s.Correct, s.CorrectApprove = m.Wrong, m.Rejected, m.Correct, m.Approved
	s.TrustPct, s.ApprovalPct = m.TrustPct, m.ApprovalPct
	s.MedianMS = medianInt(walls)
	return s
}

// reviewRouter is the backend of a case's run: the coder's turns get the
// case's answer, a planner (a project too large for the brief) a one-line
// plan, and the reviewer's turns go to the real model server.
type reviewRouter struct {
	answer string
	real   model.Backend

	mu     sync.Mutex
	calls  int
	tokens int
}

func (r *reviewRouter) Chat(ctx context.Context, req model.Request) (model.Response, error) {
	role := ""
	// The role is named by the last message that names it: a user message
	// ("Your role now: the reviewer."), or a whole-file coder's system
	// message, which holds its instructions ("Your role in this
	// conversation: the coder."), before the example and the files in user
	// turns of their own (doc/design.md §6.7).
	for _, m := range req.Messages {
		if m.Role != model.RoleUser && m.Role != model.RoleSystem {
			continue
		}
		for _, mark := range []string{"Your role now: the ", "Your role in this conversation: the "} {
			if _, after, ok := strings.Cut(m.Content, mark); ok {
				role, _, _ = strings.Cut(after, ".")
			}
		}
	}
	switch role {
	case config.RoleCoder:
		return model.Response{Message: model.Message{Role: model.RoleAssistant, Content: r.answer}, DoneReason: "stop"}, nil
	case config.RolePlanner:
		return model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "1. Make the change the task asks for."}, DoneReason: "stop"}, nil
	}
	resp, err := r.real.Chat(ctx, req)
	r.mu.Lock()
	r.calls++
	r.tokens += resp.Usage.PromptTokens
	r.mu.Unlock()
	return resp, err
}

// ShowModel passes the server's description of a model through, so that
// the settings a run decides by it (agent.tool_declarations = "auto") are
// decided for a case as in a run.
func (r *reviewRouter) ShowModel(ctx context.Context, name string) (model.ModelInfo, error) {
	s, ok := r.real.(interface {
		ShowModel(context.Context, string) (model.ModelInfo, error)
	})
	if !ok {
		return model.ModelInfo{}, errors.New("the backend does not describe its models")
	}
	return s.ShowModel(ctx, name)
}

// reviewConfig is a case's configuration: the task's checks, the whole-file
// format (the scripted coder writes whole files), one cycle, and a change
// that is judged on its checks alone (behaviour_preserving), so that the
// reviewer is asked whenever they pass: the reviewer, not the evidence
// rule, is what this evaluation measures.
func reviewConfig(o *Options, t *Task, dir, ws string) (*config.Config, error) {
	ro := *o
	ro.Agent = strings.Trim(o.Agent+`;planner = "auto";max_cycles = 1;edit_format = "whole";answer_code = false`, ";")
	file := filepath.Join(dir, "flow.toml")
	body := operatorConfig(&ro, t, ws) + "\n[verify]\nbehaviour_preserving = true\n"
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		return nil, err
	}
	return config.Load(config.LoadOptions{ConfigFile: file, Cwd: dir, Trusted: true, Getenv: func(string) string { return "" }})
}

// ReviewOne runs one case: its change made by the scripted coder, the
// project's checks, and flow's reviewer on the real backend.
func ReviewOne(ctx context.Context, o *Options, t *Task, c ReviewCase, rep int, real model.Backend, scratch string) ReviewResult {
	res := ReviewResult{Task: c.Task, Case: c.Name, Label: c.Label, Rep: rep}
	dir := filepath.Join(scratch, fmt.Sprintf("%s-%s-%d", c.Task, c.Name, rep))
	ws := filepath.Join(dir, "workspace")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		res.NotJudged = err.Error()
		return res
	}
	if !o.Keep {
		defer os.RemoveAll(dir)
	}
	if err := prepareWorkspace(t, ws, o.ToolsDir); err != nil {
		res.NotJudged = "harness: " + err.Error()
		return res
	}
	cfg, err := reviewConfig(o, t, dir, ws)
	if err != nil {
		res.NotJudged = "harness: " + err.Error()
		return res
	}
	disk, err := bufferfs.NewDisk(ws, bufferfs.DiskOptions{Trusted: true, Protected: cfg.Protected(), ProtectGlobs: cfg.Verify.Protect})
	if err != nil {
		res.NotJudged = "harness: " + err.Error()
		return res
	}
	defer disk.Close()
	router := &reviewRouter{answer: c.answer(), real: real}
	// The checks run with the evaluation's tools on PATH, as in a run.
	restore := setPath(toolPath(o.ToolsDir))
	start := time.Now()
	rp := agent.NewService(cfg, agent.ServiceOptions{FS: disk, Backend: router}).Run(ctx, t.Text, nil)
	restore()
	res.WallMS = time.Since(start).Milliseconds()
	res.ModelCalls, res.PromptTokens = router.calls, router.tokens

	var reviewer *report.Role
	for i := range rp.Roles {
		if rp.Roles[i].Role == config.RoleReviewer {
			reviewer = &rp.Roles[i]
		}
	}
	switch {
	case !sameFiles(rp.ChangedFiles, c.Files):
		why := text.OneLine(rp.Reason, 200)
		for _, e := range rp.Events {
			if e.Tool != "" && e.Error != "" {
				why = e.Tool + ": " + text.OneLine(e.Error, 200)
				break
			}
		}
		res.NotJudged = fmt.Sprintf("the change was not made as the case gives it (changed %v): %s", rp.ChangedFiles, why)
	case reviewer == nil || reviewer.Status == report.StatusSkipped:
		res.NotJudged = "the reviewer was not asked: " + text.OneLine(rp.Reason, 300)
	default:
		res.Judged = true
		res.Summary, res.Issues, res.Error = reviewer.Summary, reviewer.Issues, reviewer.Error
		switch {
		case reviewer.Approved == nil:
			res.Verdict = "none"
		case *reviewer.Approved:
			res.Verdict = "approved"
		default:
			res.Verdict = "rejected"
		}
	}
	return res
}

// pathMu serialises the PATH the checks of a case see.
var pathMu sync.Mutex

// setPath puts path in front of PATH until the returned func restores it:
// flow's checks take the process's PATH.
func setPath(path string) func() {
	pathMu.Lock()
	old := os.Getenv("PATH")
	os.Setenv("PATH", path)
	return func() {
		os.Setenv("PATH", old)
		pathMu.Unlock()
	}
}

// sameFiles reports whether the run changed exactly the case's files.
func sameFiles(changed []string, files []CaseFile) bool {
	if len(changed) != len(files) {
		return false
	}
	want := map[string]bool{}
	for _, f := range files {
		want[f.Path] = true
	}
	for _, p := range changed {
		if !want[p] {
			return false
		}
	}
	return true
}

// runReviewer is the harness's -reviewer mode.
func runReviewer(ctx context.Context, o *Options, casesDir, out string, stdout, stderr io.Writer) int {
	cases, err := LoadReviewCases(casesDir, o.Tasks)
	if err != nil {
		fmt.Fprintf(stderr, "harness: %v\n", err)
		return 2
	}
	tasks := map[string]*Task{}
	for _, c := range cases {
		if tasks[c.Task] != nil {
			continue
		}
		t, err := LoadTask(filepath.Join(o.TasksDir, c.Task))
		if err != nil {
			fmt.Fprintf(stderr, "harness: case %s/%s: %v\n", c.Task, c.Name, err)
			return 2
		}
		if miss := MissingTools(t.Language, toolPath(o.ToolsDir)); len(miss) > 0 {
			fmt.Fprintf(stderr, "harness: task %s needs %s: install the evaluation's tools with `make eval-tools`\n", t.Name, strings.Join(miss, ", "))
			return 2
		}
		tasks[c.Task] = t
	}
	real, err := ollama.New(ollama.Options{BaseURL: o.BaseURL, API: o.API, Temperature: config.Default().Ollama.Temperature,
		ContextLength: o.ContextLength, Timeout: time.Duration(o.CallTimeout * float64(time.Second))})
	if err != nil {
		fmt.Fprintf(stderr, "harness: %v\n", err)
		return 2
	}
	scratch := o.WorkDir
	if scratch == "" {
		if scratch, err = os.MkdirTemp("", "flow-eval-reviewer-"); err != nil {
			fmt.Fprintf(stderr, "harness: %v\n", err)
			return 1
		}
		if !o.Keep {
			defer os.RemoveAll(scratch)
		}
	}
	if out == "" {
		out = filepath.Join(cacheDir(), "eval", "reviewer-"+time.Now().UTC().Format("20060102T150405Z")+".json")
	}
	f := ReviewFile{StartedAt: time.Now().UTC().Format(time.RFC3339), Machine: machine(), Settings: Settings{
		Model: o.Model, API: o.API, BaseURL: o.BaseURL, ContextLength: o.ContextLength, CallTimeout: o.CallTimeout,
		Reps: o.Reps, Agent: o.Agent, FlowVersion: "in process (this harness's build)",
	}}
	n := len(cases) * o.Reps
	i := 0
	for rep := 1; rep <= o.Reps; rep++ {
		for _, c := range cases {
			i++
			r := ReviewOne(ctx, o, tasks[c.Task], c, rep, real, scratch)
			if ctx.Err() != nil {
				break
			}
			f.Results = append(f.Results, r)
			f.Summary = SummarizeReviews(f.Results)
			verdict := r.Verdict
			if !r.Judged {
				verdict = "not judged: " + r.NotJudged
			}
			fmt.Fprintf(stderr, "[%d/%d] %s/%s (%s): %s %s\n", i, n, c.Task, c.Name, c.Label, text.OneLine(verdict, 160), fmtMS(r.WallMS))
			if err := writeJSON(out, f); err != nil {
				fmt.Fprintf(stderr, "harness: %v\n", err)
			}
		}
	}
	f.Finished = ctx.Err() == nil
	if err := writeJSON(out, f); err != nil {
		fmt.Fprintf(stderr, "harness: %v\n", err)
	}
	WriteReviewTable(stdout, f.Results, f.Summary)
	fmt.Fprintf(stdout, "results: %s\n", out)
	if !f.Finished {
		return 130
	}
	return 0
}

// WriteReviewTable prints each case's verdict and the two figures.
func WriteReviewTable(w io.Writer, rs []ReviewResult, s ReviewSummary) {
	fmt.Fprintf(w, "%-22s %-34s %-8s %-10s %s\n", "task", "case", "label", "verdict", "the reviewer's first issue, or its summary")
	for _, r := range rs {
		v, note := r.Verdict, r.Summary
		if len(r.Issues) > 0 {
			note = r.Issues[0]
		}
		if r.Error != "" {
			note = r.Error
		}
		if !r.Judged {
			v, note = "-", "not judged: "+r.NotJudged
		}
		mark := ""
		if r.Judged && (r.Label == labelWrong) == (r.Verdict == "approved") {
			mark = " ✗"
		}
		fmt.Fprintf(w, "%-22s %-34s %-8s %-10s %s%s\n", r.Task, r.Case, r.Label, v, text.OneLine(note, 90), mark)
	}
	pct := func(p float64) string {
		if p < 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.0f%%", p)
	}
	fmt.Fprintf(w, "\nwrong changes rejected (trust): %d/%d %s · correct changes approved: %d/%d %s · no verdict %d · not judged %d · median %s per review\n",
		s.WrongRejected, s.Wrong, pct(s.TrustPct), s.CorrectApprove, s.Correct, pct(s.ApprovalPct), s.NoVerdict, s.NotJudged, fmtMS(s.MedianMS))
}
