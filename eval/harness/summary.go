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
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
}

// Summarize computes the figures over results.
func Summarize(results []Result) Summary {
	var s Summary
	var walls, perCall []int64
	var calls []float64
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
		s.PromptTokens += r.PromptTokens
		s.CompletionTokens += r.CompletionTokens
	}
	if s.Runs > 0 {
		s.PassRate = float64(s.Passed) / float64(s.Runs)
		s.VerifiedRate = float64(s.Verified) / float64(s.Runs)
	}
	s.MedianWallMS = medianInt(walls)
	s.MedianMSPerCall = medianInt(perCall)
	s.MedianModelCalls = medianFloat(calls)
	return s
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

// ProgressLine is the line printed after each task × repetition.
func ProgressLine(i, n int, r Result) string {
	mark := "FAIL"
	if r.Pass {
		mark = "pass"
	}
	if r.FalseVerified {
		mark = "FALSE-VERIFIED"
	}
	line := fmt.Sprintf("[%d/%d] %-24s rep %d  %-14s status=%s verified=%t acceptance=%t calls=%d tools=%d tokens=%d+%d %s",
		i, n, r.Task, r.Rep, mark, r.Status, r.Verified, r.AcceptancePassed, r.ModelCalls, r.ToolCalls,
		r.PromptTokens, r.CompletionTokens, fmtMS(r.WallMS))
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
}

func fmtMS(ms int64) string {
	return (time.Duration(ms) * time.Millisecond).Round(100 * time.Millisecond).String()
}
