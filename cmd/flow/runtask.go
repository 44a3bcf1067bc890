package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"flow/runtime/diff"
	"flow/runtime/progress"
	"flow/runtime/report"
)

// cmdRun implements `flow run TASK...`: one run, one JSON report. Progress
// goes to stderr when it is a terminal (unless --quiet).
func cmdRun(ctx context.Context, e *env) (any, string, error) {
	svc, closeAll, err := openService(e)
	if err != nil {
		return nil, "", err
	}
	defer closeAll()
	task := strings.Join(e.opts.args, " ")
	// Onboarding warnings go to stderr whether or not it is a terminal:
	// a run that can never be verified should say so before it starts.
	for _, w := range svc.Onboarding(ctx) {
		fmt.Fprintf(e.stderr, "flow: warning: %s\n", w)
	}
	rep := svc.Run(ctx, task, progressSink(e))
	if ctx.Err() != nil && len(rep.ChangedFiles) > 0 {
		fmt.Fprintf(e.stderr, "flow: edits written before the interrupt (run %s):\n", rep.RunID)
		for _, f := range rep.ChangedFiles {
			fmt.Fprintf(e.stderr, "  %s\n", f)
		}
	}
	return rep, rep.Status, nil
}

// progressSink returns the event printer for stderr, or nil when stderr is
// not a terminal or --quiet was given.
func progressSink(e *env) func(progress.Event) {
	if e.opts.quiet || !isTerminal(e.stderr) {
		return nil
	}
	color := e.color()
	return func(ev progress.Event) {
		if s := progress.Column(ev); s != "" {
			fmt.Fprintln(e.stderr, s)
		}
		if ev.Kind == progress.ToolEnd && ev.Diff != nil {
			fmt.Fprint(e.stderr, editHunks(*ev.Diff, maxProgressDiffLines, color))
		}
	}
}

// maxProgressDiffLines bounds the hunks printed after one edit.
const maxProgressDiffLines = 24

// editHunks renders an edit's diff for the progress stream: its hunks
// without the file header (the edit line above names the file), indented,
// coloured on request, at most max lines and a note of how many more.
func editHunks(d report.FileDiff, max int, color bool) string {
	if d.Binary || d.Diff == "" {
		return ""
	}
	var lines []string
	inHunks := false
	for _, l := range strings.Split(strings.TrimRight(d.Diff, "\n"), "\n") {
		inHunks = inHunks || strings.HasPrefix(l, "@@")
		if inHunks {
			lines = append(lines, l)
		}
	}
	more := 0
	if len(lines) > max {
		more = len(lines) - max
		lines = lines[:max]
	}
	body := strings.Join(lines, "\n") + "\n"
	if color {
		body = diff.ANSI(body)
	}
	var b strings.Builder
	for _, l := range strings.SplitAfter(body, "\n") {
		if l != "" {
			b.WriteString("           " + l)
		}
	}
	if more > 0 {
		fmt.Fprintf(&b, "           … %d more lines (the report's diffs have the whole change)\n", more)
	}
	return b.String()
}

// isTerminal reports whether w is a terminal.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
