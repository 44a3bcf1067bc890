package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"flow/internal/text"
)

// Summary is the figures of one evaluation run.
type Summary struct {
	Runs             int     `json:"runs"`
	Passed           int     `json:"passed"`
	Verified         int     `json:"verified"`
	FalseVerified    int     `json:"false_verified"`
	HarnessErrors    int     `json:"harness_errors"`
	PassRate         float64 `json:"pass_rate"`
	VerifiedRate     float64 `json:"verified_rate"`
	MedianWallMS     int64   `json:"median_wall_ms"`
	MedianMSPerCall  int64   `json:"median_wall_ms_per_model_call"`
	MedianModelCalls float64 `json:"median_model_calls"`
	ModelCalls       int     `json:"model_calls"`
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	// Server sums the runs' server-log figures; nil when no run has them,
	// and ServerRuns says how many runs it covers.
	Server     *ServerFigures `json:"server,omitempty"`
	ServerRuns int            `json:"server_runs,omitempty"`
	// Prompt sums flow's prompt figures, and PromptRoles them per role;
	// EvaluatedPerDistinct and PromptEvalShare are the cache figures
	// (doc/eval.md §2.4): evaluated over distinct tokens for the runs with
	// both, and prompt_eval_ms over model time.
	Prompt               *PromptFigures            `json:"prompt,omitempty"`
	PromptRoles          map[string]*PromptFigures `json:"prompt_roles,omitempty"`
	EvaluatedPerDistinct float64                   `json:"evaluated_per_distinct,omitempty"`
	PromptEvalShare      float64                   `json:"prompt_eval_share,omitempty"`
}

// RunnerSummary is the summary of one runner's results.
type RunnerSummary struct {
	Runner  string  `json:"runner"`
	Type    string  `json:"type"`
	Summary Summary `json:"summary"`
}

// Summarize computes the figures over results.
func Summarize(results []Result) Summary {
	var s Summary
	var walls, perCall []int64
	var calls []float64
	var evaluated, distinct int
	for _, r := range results {
		s.Runs++
		if r.Pass {
			s.Passed++
		}
		if r.Verified {
			s.Verified++
		}
		if r.FalseVerified {
			s.FalseVerified++
		}
		if r.Status == "harness_error" {
			s.HarnessErrors++
		}
		walls = append(walls, r.WallMS)
		calls = append(calls, float64(r.ModelCalls))
		if r.ModelCalls > 0 {
			perCall = append(perCall, r.WallMS/int64(r.ModelCalls))
		}
		s.ModelCalls += r.ModelCalls
		s.PromptTokens += r.PromptTokens
		s.CompletionTokens += r.CompletionTokens
		if r.Server != nil {
			if s.Server == nil {
				s.Server = &ServerFigures{}
			}
			s.Server.Add(r.Server.withoutCalls())
			s.ServerRuns++
		}
		if p := r.Prompt; p != nil {
			if s.Prompt == nil {
				s.Prompt, s.PromptRoles = &PromptFigures{}, map[string]*PromptFigures{}
			}
			s.Prompt.add(*p)
			for role, rp := range p.Roles {
				if s.PromptRoles[role] == nil {
					s.PromptRoles[role] = &PromptFigures{}
				}
				s.PromptRoles[role].add(*rp)
			}
			if p.Evaluated > 0 && p.Distinct > 0 {
				evaluated += p.Evaluated
				distinct += p.Distinct
			}
		}
	}
	if s.Runs > 0 {
		s.PassRate = float64(s.Passed) / float64(s.Runs)
		s.VerifiedRate = float64(s.Verified) / float64(s.Runs)
	}
	s.MedianWallMS = medianInt(walls)
	s.MedianMSPerCall = medianInt(perCall)
	s.MedianModelCalls = medianFloat(calls)
	if distinct > 0 {
		s.EvaluatedPerDistinct = float64(evaluated) / float64(distinct)
	}
	if s.Prompt != nil && s.Prompt.ModelMS > 0 {
		s.PromptEvalShare = float64(s.Prompt.PromptEvalMS) / float64(s.Prompt.ModelMS)
	}
	return s
}

// SummarizeByRunner summarizes each runner's results, in the runners'
// order.
func SummarizeByRunner(results []Result, runners []Runner) []RunnerSummary {
	out := make([]RunnerSummary, 0, len(runners))
	for _, rn := range runners {
		out = append(out, RunnerSummary{Runner: rn.Label, Type: rn.Type, Summary: Summarize(ofRunner(results, rn.Label))})
	}
	return out
}

func ofRunner(results []Result, label string) []Result {
	var out []Result
	for _, r := range results {
		if r.Runner == label {
			out = append(out, r)
		}
	}
	return out
}

func medianInt(xs []int64) int64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]int64(nil), xs...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func medianFloat(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// ProgressLine is the line printed after each run; withRunner names the
// runner (when there are several).
func ProgressLine(i, n int, r Result, withRunner bool) string {
	mark := "FAIL"
	if r.Pass {
		mark = "pass"
	}
	if r.FalseVerified {
		mark = "FALSE-VERIFIED"
	}
	task := fmt.Sprintf("%-24s rep %d", r.Task, r.Rep)
	if withRunner {
		task += fmt.Sprintf("  %-8s", r.Runner)
	}
	line := fmt.Sprintf("[%d/%d] %s  %-14s status=%s verified=%t acceptance=%t calls=%d tools=%d tokens=%d+%d %s",
		i, n, task, mark, r.Status, r.Verified, r.AcceptancePassed, r.ModelCalls, r.ToolCalls,
		r.PromptTokens, r.CompletionTokens, fmtMS(r.WallMS))
	if r.Server != nil {
		line += fmt.Sprintf(" server=%d requests, %d prompt tokens (%d evaluated)", r.Server.Requests, r.Server.PromptTokens, r.Server.EvaluatedTokens)
		// flow's report counts each of its model calls; more requests in
		// the log mean that someone else used the server meanwhile.
		if r.RunnerType == runnerFlow && r.Server.Requests > r.ModelCalls {
			line += fmt.Sprintf(" (more requests than the run's %d model calls: another client?)", r.ModelCalls)
		}
	}
	if r.Error != "" {
		line += "  error: " + text.OneLine(r.Error, 160)
	} else if !r.Pass && r.Reason != "" {
		line += "  reason: " + text.OneLine(r.Reason, 160)
	}
	return line
}

// WriteTable prints the per-task table and the totals.
func WriteTable(w io.Writer, results []Result) {
	byTask := map[string][]Result{}
	var order []string
	for _, r := range results {
		if _, ok := byTask[r.Task]; !ok {
			order = append(order, r.Task)
		}
		byTask[r.Task] = append(byTask[r.Task], r)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "task\tkind\truns\tpass\tverified\tfalse verified\tmedian time\tmedian calls\tstatuses")
	for _, name := range order {
		rs := byTask[name]
		s := Summarize(rs)
		statuses := map[string]int{}
		for _, r := range rs {
			statuses[r.Status]++
		}
		var parts []string
		for _, k := range sortedKeys(statuses) {
			parts = append(parts, fmt.Sprintf("%s×%d", k, statuses[k]))
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%s\t%g\t%s\n", name, rs[0].Kind, s.Runs, s.Passed, s.Verified,
			s.FalseVerified, fmtMS(s.MedianWallMS), s.MedianModelCalls, strings.Join(parts, " "))
	}
	tw.Flush()
	s := Summarize(results)
	fmt.Fprintf(w, "\nruns %d · pass rate %.0f%% (%d) · verified rate %.0f%% (%d) · false verified %d · median time per task %s · median time per model call %s · harness errors %d\n",
		s.Runs, 100*s.PassRate, s.Passed, 100*s.VerifiedRate, s.Verified, s.FalseVerified,
		fmtMS(s.MedianWallMS), fmtMS(s.MedianMSPerCall), s.HarnessErrors)
	writePromptLines(w, "", s)
}

// writePromptLines prints flow's prompt figures of s, overall and per
// role: what was sent, the distinct tokens, what the server evaluated, and
// the share of model time spent evaluating prompts.
func writePromptLines(w io.Writer, who string, s Summary) {
	if s.Prompt == nil {
		return
	}
	line := func(name string, p *PromptFigures) string {
		out := fmt.Sprintf("%sprompt tokens sent %d · distinct ~%d", name, p.Sent, p.Distinct)
		if p.Evaluated > 0 {
			out += fmt.Sprintf(" · evaluated %d", p.Evaluated)
			if p.Distinct > 0 {
				out += fmt.Sprintf(" (%.2f× distinct)", float64(p.Evaluated)/float64(p.Distinct))
			}
		}
		if p.ModelMS > 0 && p.PromptEvalMS > 0 {
			out += fmt.Sprintf(" · prompt evaluation %.0f%% of %s model time", 100*float64(p.PromptEvalMS)/float64(p.ModelMS), fmtMS(p.ModelMS))
		}
		return out + "\n"
	}
	fmt.Fprint(w, line(who, s.Prompt))
	for _, role := range sortedRoleNames(s.PromptRoles) {
		fmt.Fprint(w, line(who+"  "+role+": ", s.PromptRoles[role]))
	}
}

// sortedRoleNames are the roles in the run's order.
func sortedRoleNames(m map[string]*PromptFigures) []string {
	var out []string
	for _, r := range []string{"planner", "coder", "reviewer"} {
		if m[r] != nil {
			out = append(out, r)
		}
	}
	return out
}

func fmtMS(ms int64) string {
	return (time.Duration(ms) * time.Millisecond).Round(100 * time.Millisecond).String()
}

// WriteComparison prints the runners side by side: for each task one row
// per runner, then the totals per runner. The server columns appear when
// the runs have server-log figures.
func WriteComparison(w io.Writer, results []Result, runners []Runner) {
	var order []string
	seen := map[string]bool{}
	for _, r := range results {
		if !seen[r.Task] {
			seen[r.Task] = true
			order = append(order, r.Task)
		}
	}
	server := false
	for _, r := range results {
		server = server || r.Server != nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "task\trunner\truns\tpass\tverified\tfalse verified\tmodel calls\tprompt tokens\tmedian time"
	if server {
		head += "\tserver requests\tserver prompt\tevaluated"
	}
	fmt.Fprintln(tw, head)
	row := func(task string, rn Runner, rs []Result) {
		s := Summarize(rs)
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s", task, rn.Label, s.Runs, s.Passed, s.Verified,
			s.FalseVerified, s.ModelCalls, s.PromptTokens, fmtMS(s.MedianWallMS))
		if server {
			if s.Server != nil && s.ServerRuns == s.Runs {
				fmt.Fprintf(tw, "\t%d\t%d\t%d", s.Server.Requests, s.Server.PromptTokens, s.Server.EvaluatedTokens)
			} else {
				fmt.Fprint(tw, "\t-\t-\t-")
			}
		}
		fmt.Fprintln(tw)
	}
	for _, name := range order {
		var rs []Result
		for _, r := range results {
			if r.Task == name {
				rs = append(rs, r)
			}
		}
		for i, rn := range runners {
			label := ""
			if i == 0 {
				label = name
			}
			row(label, rn, ofRunner(rs, rn.Label))
		}
	}
	for i, rn := range runners {
		label := ""
		if i == 0 {
			label = "all tasks"
		}
		row(label, rn, ofRunner(results, rn.Label))
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, rn := range runners {
		s := Summarize(ofRunner(results, rn.Label))
		fmt.Fprintf(w, "%s (%s %s): runs %d · pass rate %.0f%% (%d) · verified rate %.0f%% (%d) · false verified %d · median time per task %s · model calls %d · prompt tokens %d · harness errors %d\n",
			rn.Label, rn.Type, rn.Version, s.Runs, 100*s.PassRate, s.Passed, 100*s.VerifiedRate, s.Verified, s.FalseVerified,
			fmtMS(s.MedianWallMS), s.ModelCalls, s.PromptTokens, s.HarnessErrors)
		writePromptLines(w, "  "+rn.Label+" ", s)
	}
}
