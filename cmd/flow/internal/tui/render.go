package tui

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"flow/internal/text"
	"flow/runtime/progress"
	"flow/runtime/report"
)

// Bounds of what one answer adds to the log.
const (
	maxListedFiles   = 20 // changed files listed in a run summary
	maxSummaryLines  = 40 // lines of a run's summary text
	maxOutputTail    = 8  // output lines shown for a failing check
	maxDiffLines     = 40 // lines of one file's diff
	detailWidth      = 200
	eventDetailWidth = 60
)

// eventLine renders one progress event as a stable, greppable line whose
// columns are separated by two spaces, for example
// "coder  file_edit main.go  ok  3ms". key pairs a start event with its end
// event; ok is false for events the log does not show (run_end: the run's
// summary follows).
func eventLine(e progress.Event) (line logLine, key string, ok bool) {
	if e.Kind == progress.RunEnd {
		return logLine{}, "", false
	}
	render, known := eventLines[e.Kind]
	if !known {
		return cols(lineDim, e.Role, string(e.Kind), e.Status), "", true
	}
	line, key = render(e)
	return line, key, true
}

// eventLines renders each kind of event the log shows: its line and the
// key that pairs a start with its end.
var eventLines = map[progress.Kind]func(e progress.Event) (logLine, string){
	progress.RunStart: func(e progress.Event) (logLine, string) {
		return cols(lineDim, "run", "started", e.RunID), ""
	},
	progress.RoleStart: func(e progress.Event) (logLine, string) {
		return cols(lineHeading, e.Role, "start", e.Message), ""
	},
	progress.RoleEnd: func(e progress.Event) (logLine, string) {
		turns := ""
		if e.Turn > 0 {
			turns = text.Count(e.Turn, "turn")
		}
		return cols(kindOfStatus(e.Status), e.Role, e.Status, turns, duration(e.DurationMS), text.OneLine(e.Message, detailWidth), problem(e)), ""
	},
	progress.ModelTurn: func(e progress.Event) (logLine, string) {
		return cols(lineDim, e.Role, fmt.Sprintf("turn %d", e.Turn), "…"), turnKey(e)
	},
	progress.ModelReply: func(e progress.Event) (logLine, string) {
		return cols(dimWhenOK(e.Status), e.Role, fmt.Sprintf("turn %d", e.Turn), e.Status, duration(e.DurationMS), problem(e)), turnKey(e)
	},
	progress.ToolStart: func(e progress.Event) (logLine, string) {
		return cols(lineDim, e.Role, toolColumn(e), "…"), toolKey(e)
	},
	progress.ToolEnd: func(e progress.Event) (logLine, string) {
		truncated := ""
		if e.Truncated {
			truncated = "truncated"
		}
		kind := lineText
		if e.Status != report.StatusOK {
			kind = kindOfStatus(e.Status)
		}
		return cols(kind, e.Role, toolColumn(e), e.Status, diffStat(e.Diff), duration(e.DurationMS), truncated, problem(e)), toolKey(e)
	},
	progress.CheckStart: func(e progress.Event) (logLine, string) {
		return cols(lineDim, "check", e.Check, "…"), "check/" + e.Check
	},
	progress.CheckEnd: func(e progress.Event) (logLine, string) {
		return cols(kindOfStatus(e.Status), "check", e.Check, e.Status, duration(e.DurationMS), problem(e)), "check/" + e.Check
	},
	progress.Verification: func(e progress.Event) (logLine, string) {
		detail := "not verified"
		if v := e.Verification; v != nil && v.Verified {
			detail = "verified"
		} else if v != nil && v.Reason != "" {
			detail = text.OneLine(v.Reason, detailWidth)
		}
		return cols(kindOfStatus(e.Status), "verify", e.Status, detail), ""
	},
}

// cols joins the nonempty columns of a line.
func cols(kind lineKind, parts ...string) logLine {
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return logLine{kind: kind, text: strings.Join(kept, "  ")}
}

// problem is the event's error column, "" without one.
func problem(e progress.Event) string {
	if e.Error == "" {
		return ""
	}
	return "error: " + text.OneLine(e.Error, detailWidth)
}

// dimWhenOK is the line kind of a model reply: dim unless it went wrong.
func dimWhenOK(status string) lineKind {
	if status != report.StatusOK {
		return kindOfStatus(status)
	}
	return lineDim
}

func turnKey(e progress.Event) string { return fmt.Sprintf("turn/%s/%d", e.Role, e.Turn) }

func toolKey(e progress.Event) string {
	return fmt.Sprintf("tool/%s/%d/%s/%s", e.Role, e.Turn, e.ToolCallID, e.Tool)
}

// toolColumn names the tool and what it worked on.
func toolColumn(e progress.Event) string {
	if e.Message != "" {
		return e.Tool + " " + text.OneLine(e.Message, eventDetailWidth)
	}
	return e.Tool
}

// eventDetailLines renders what follows an event's line: an edit's diff,
// the output tail of the checks a verification found failing. It records
// in shown what it rendered.
func eventDetailLines(e progress.Event, sh *shown) []logLine {
	switch e.Kind {
	case progress.ToolEnd:
		if e.Diff == nil || e.Status != report.StatusOK {
			return nil
		}
		if sh.diffs != nil {
			sh.diffs[e.Diff.Path] = true
		}
		return diffLines(*e.Diff, "    ")
	case progress.Verification:
		v := e.Verification
		if v == nil {
			return nil
		}
		var lines []logLine
		for _, c := range v.Checks {
			if c.Status != report.StatusOK {
				lines = append(lines, logLine{kind: kindOfStatus(c.Status), text: "  failing check  " + checkDetail(c)})
				lines = append(lines, checkTail(c, "    ")...)
				sh.checkTail = true
			}
		}
		return lines
	}
	return nil
}

// diffStat renders a diff's size, "+3 -1"; "" without a diff.
func diffStat(d *report.FileDiff) string {
	switch {
	case d == nil:
		return ""
	case d.Binary:
		return "binary"
	}
	return fmt.Sprintf("+%d -%d", d.Added, d.Removed)
}

// diffLines renders a unified diff as coloured log lines, without its file
// header, at most maxDiffLines of them, marking a cut.
func diffLines(d report.FileDiff, indent string) []logLine {
	if d.Binary {
		return []logLine{{kind: lineDim, text: indent + "binary file " + d.Change}}
	}
	var lines []logLine
	all := strings.Split(strings.TrimRight(d.Diff, "\n"), "\n")
	for i, l := range all {
		if strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ") || strings.HasPrefix(l, "diff ") || l == "" {
			continue
		}
		if len(lines) == maxDiffLines {
			lines = append(lines, logLine{kind: lineDim, text: fmt.Sprintf("%s… (%d more diff lines)", indent, len(all)-i)})
			return lines
		}
		kind := lineDim
		switch {
		case strings.HasPrefix(l, "@@"):
			kind = lineDiffHunk
		case strings.HasPrefix(l, "+"):
			kind = lineDiffAdd
		case strings.HasPrefix(l, "-"):
			kind = lineDiffDel
		}
		lines = append(lines, logLine{kind: kind, text: indent + expandTabs(strings.TrimRight(l, "\r"))})
	}
	if d.Truncated {
		lines = append(lines, logLine{kind: lineDim, text: indent + "… (diff cut)"})
	}
	return lines
}

// expandTabs replaces tabs with four spaces (code keeps its indentation;
// sanitize would make each tab one space).
func expandTabs(s string) string { return strings.ReplaceAll(s, "\t", "    ") }

// checkTail returns the tail of a failing check's output: its stderr, or
// its stdout when stderr is blank.
func checkTail(c report.CheckResult, indent string) []logLine {
	out := c.Stderr
	if strings.TrimSpace(out) == "" {
		out = c.Stdout
	}
	return tail(out, indent, maxOutputTail)
}

// runSummaryLines renders the end of a run: a greppable first line such as
// "run ok · verified · 1 changed file · 3.2s", then the reason (when the
// run is not verified) or error, the changed files with their diffstat
// (and the diffs the log did not show yet), the failing checks with their
// exit codes and output tail (unless the log showed it), the reviewer's
// verdict and issues, and the run's summary.
func runSummaryLines(r report.Run, sh shown) []logLine {
	b := &summaryLines{run: r, shown: sh}
	b.headline()
	b.reasons()
	b.changedFiles()
	b.failingChecks()
	reviewer := reviewerRole(r)
	b.reviewer(reviewer)
	b.summary(reviewer)
	if r.Status == report.StatusCancelled && len(r.ChangedFiles) > 0 {
		b.add(lineWarn, "note", "edits already written remain (see /undo)")
	}
	if !r.Verified && len(r.ChangedFiles) > 0 && r.RunID != "" {
		b.add(lineWarn, "next", msgReviewOffer)
	}
	if r.RunID != "" {
		b.add(lineDim, "run id", r.RunID)
	}
	return append(b.lines, logLine{})
}

// summaryLines builds a run's summary, one section per method.
type summaryLines struct {
	run   report.Run
	shown shown
	lines []logLine
}

func (b *summaryLines) add(kind lineKind, label, text string) {
	b.lines = append(b.lines, logLine{kind: kind, text: "  " + label + "  " + text})
}

// headline is the first line: status, verified, files, time.
func (b *summaryLines) headline() {
	r := b.run
	verified := "not verified"
	if r.Verified {
		verified = "verified"
	}
	head := fmt.Sprintf("run %s · %s · %s", r.Status, verified, text.Count(len(r.ChangedFiles), "changed file"))
	if d := duration(r.DurationMS); d != "" {
		head += " · " + d
	}
	b.lines = append(b.lines, logLine{kind: kindOfStatus(r.Status), text: head})
}

// reasons: the reason leads, it is what a person acts on; then the error
// when it says something else.
func (b *summaryLines) reasons() {
	r := b.run
	if r.Reason != "" && (r.Status != report.StatusOK || !r.Verified) {
		b.add(lineWarn, "reason", text.OneLine(r.Reason, detailWidth))
	}
	if r.Reviewer != nil && r.Reviewer.Warning != "" {
		// Next to the verdict: the reviewer that gave one does not
		// discriminate (doc/design.md §8.10).
		b.add(lineWarn, "note", text.OneLine(r.Reviewer.Warning, detailWidth))
	}
	if r.Error != "" && r.Error != r.Reason {
		b.add(lineError, "error", text.OneLine(r.Error, detailWidth))
	}
}

// changedFiles lists the changed files with their diffs, unless the log
// already showed a file's.
func (b *summaryLines) changedFiles() {
	r := b.run
	for i, f := range r.ChangedFiles {
		if i == maxListedFiles {
			b.add(lineDim, "changed", fmt.Sprintf("… and %d more", len(r.ChangedFiles)-i))
			return
		}
		d := diffOf(r, f)
		b.add(lineText, "changed", strings.Join(nonEmpty(f, diffStat(d)), "  "))
		if d != nil && !b.shown.diffs[f] {
			b.lines = append(b.lines, diffLines(*d, "    ")...)
		}
	}
}

// diffOf returns the report's diff of path, nil when it has none.
func diffOf(r report.Run, path string) *report.FileDiff {
	var d *report.FileDiff
	for j := range r.Diffs {
		if r.Diffs[j].Path == path {
			d = &r.Diffs[j]
		}
	}
	return d
}

// failingChecks names each check that did not pass, with its output's
// tail unless the log showed it.
func (b *summaryLines) failingChecks() {
	checks := b.run.Checks
	if len(checks) == 0 && b.run.Verification != nil {
		checks = b.run.Verification.Checks
	}
	for _, c := range checks {
		if c.Status != report.StatusOK {
			b.add(kindOfStatus(c.Status), "failing check", checkDetail(c))
			if !b.shown.checkTail {
				b.lines = append(b.lines, checkTail(c, "    ")...)
			}
		}
	}
}

// reviewerRole returns the run's last reviewer, nil when none ran.
func reviewerRole(r report.Run) *report.Role {
	var reviewer *report.Role
	for i := range r.Roles {
		if r.Roles[i].Role == "reviewer" {
			reviewer = &r.Roles[i]
		}
	}
	return reviewer
}

// reviewer is the reviewer's verdict and issues.
func (b *summaryLines) reviewer(reviewer *report.Role) {
	if reviewer == nil {
		return
	}
	verdict, kind := reviewer.Status, kindOfStatus(reviewer.Status)
	if a := reviewer.Approved; a != nil && *a {
		verdict, kind = "approved", lineOK
	} else if a != nil {
		verdict, kind = "rejected", lineError
	}
	b.add(kind, "reviewer", strings.TrimSpace(verdict+"  "+text.OneLine(reviewer.Summary, detailWidth)))
	for _, issue := range reviewer.Issues {
		b.add(lineWarn, "issue", text.OneLine(issue, detailWidth))
	}
}

// summary is the run's summary, unless it is the reviewer's word again.
func (b *summaryLines) summary(reviewer *report.Role) {
	s := strings.TrimSpace(b.run.Summary)
	if s == "" || (reviewer != nil && s == strings.TrimSpace(reviewer.Summary)) {
		return
	}
	b.lines = append(b.lines, logLine{kind: lineText, text: "  summary"})
	b.lines = append(b.lines, block(s, "    ", maxSummaryLines)...)
}

// checkDetail renders a check result's name, status, exit code, duration
// and error: "go-test  failed  exit 1  1.2s".
func checkDetail(c report.CheckResult) string {
	parts := []string{c.Name, c.Status}
	if c.Returncode != nil {
		parts = append(parts, fmt.Sprintf("exit %d", *c.Returncode))
	}
	if d := duration(c.DurationMS); d != "" {
		parts = append(parts, d)
	}
	if c.Error != "" {
		parts = append(parts, "error: "+text.OneLine(c.Error, detailWidth))
	}
	return strings.Join(parts, "  ")
}

// checkReportLines renders the answer of /check: "check failed · not
// verified", each check, and the tail of a failing check's output.
func checkReportLines(r report.CheckReport) []logLine {
	verified := "not verified"
	if r.Verified {
		verified = "verified"
	}
	lines := []logLine{{kind: kindOfStatus(r.Status), text: fmt.Sprintf("check %s · %s", r.Status, verified)}}
	for _, c := range r.Checks {
		lines = append(lines, logLine{kind: kindOfStatus(c.Status), text: "  " + checkDetail(c)})
		if c.Status != report.StatusOK {
			lines = append(lines, checkTail(c, "    ")...)
		}
	}
	if r.Reason != "" && r.Status != report.StatusOK {
		lines = append(lines, logLine{kind: lineWarn, text: "  reason  " + text.OneLine(r.Reason, detailWidth)})
	}
	if r.Error != "" && r.Error != r.Reason {
		lines = append(lines, logLine{kind: lineError, text: "  error  " + text.OneLine(r.Error, detailWidth)})
	}
	return append(lines, logLine{})
}

// undoLines renders the answer of /undo: what it restored or removed,
// with the diff of what it gave back.
func undoLines(v report.Undo, err error) []logLine {
	switch {
	case errors.Is(err, ErrUndoUnavailable):
		return []logLine{{kind: lineWarn, text: "undo unavailable · " + msgUndoUnavailable}, {}}
	case err != nil:
		return []logLine{errorLine("undo failed: " + err.Error()), {}}
	}
	status := v.Status
	head := "undo " + status
	if v.RunID != "" {
		head += " · run " + v.RunID
	}
	lines := []logLine{{kind: kindOfStatus(status), text: head}}
	add := func(kind lineKind, label, text string) {
		lines = append(lines, logLine{kind: kind, text: "  " + label + "  " + text})
	}
	if v.Message != "" {
		add(lineText, "message", text.OneLine(v.Message, detailWidth))
	}
	diffOf := func(path string) *report.FileDiff {
		for i := range v.Diffs {
			if v.Diffs[i].Path == path {
				return &v.Diffs[i]
			}
		}
		return nil
	}
	for _, group := range []struct {
		label string
		files []string
	}{{"restored", v.Restored}, {"removed", v.Removed}} {
		for i, f := range group.files {
			if i == maxListedFiles {
				add(lineDim, group.label, fmt.Sprintf("… and %d more", len(group.files)-i))
				break
			}
			d := diffOf(f)
			add(lineText, group.label, strings.Join(nonEmpty(f, diffStat(d)), "  "))
			if d != nil {
				lines = append(lines, diffLines(*d, "    ")...)
			}
		}
	}
	for _, c := range v.Conflicts {
		add(lineWarn, "conflict", c.Path+"  "+text.OneLine(c.Reason, detailWidth))
	}
	if v.Error != "" && v.Error != v.Message {
		add(lineError, "error", text.OneLine(v.Error, detailWidth))
	}
	return append(lines, logLine{})
}

// statusLines renders the answer of /status.
func statusLines(st report.Status) []logLine {
	head := "status " + st.Status
	if st.Version != "" {
		head += " · flow " + st.Version
	}
	lines := []logLine{{kind: kindOfStatus(st.Status), text: head}}
	add := func(kind lineKind, label, text string) {
		lines = append(lines, logLine{kind: kind, text: "  " + label + "  " + text})
	}
	add(lineText, "workspace", st.Workspace)
	add(lineText, "mode", modeText(st.Trusted))
	b := st.Backend
	add(lineText, "backend", strings.Join(nonEmpty(b.Type, b.API, b.BaseURL), " ")+" (connectivity "+orDash(b.Connectivity)+")")
	add(lineText, "models", modelsText(st.Models))
	if len(st.Checks) == 0 {
		add(lineDim, "checks", "none configured")
	}
	for _, c := range st.Checks {
		req := "optional"
		if c.Required {
			req = "required"
		}
		detail := []string{c.Name, req}
		detail = append(detail, nonEmpty(c.Kind)...)
		if len(c.Filetypes) > 0 {
			detail = append(detail, strings.Join(c.Filetypes, ","))
		}
		add(lineText, "check", strings.Join(detail, "  "))
	}
	editor := orDash(st.Editor.Status)
	if st.Editor.Attached {
		editor += "  attached"
	}
	add(lineText, "editor", editor)
	busy := "no"
	if st.Busy {
		busy = "yes"
	}
	add(lineText, "busy", busy)
	add(lineText, "last run", lastRunText(st.LastReport))
	for _, w := range st.Warnings {
		add(lineWarn, "warning", text.OneLine(w, detailWidth))
	}
	if st.Error != "" {
		add(lineError, "error", text.OneLine(st.Error, detailWidth))
	}
	return append(lines, logLine{})
}

// lastRunText summarises a status report's last_report (any JSON shape
// with the run report's keys).
func lastRunText(last any) string {
	if last == nil {
		return "none"
	}
	var r struct {
		Status   string `json:"status"`
		Verified bool   `json:"verified"`
		Task     string `json:"task"`
		RunID    string `json:"run_id"`
	}
	if b, err := json.Marshal(last); err != nil || json.Unmarshal(b, &r) != nil || r.Status == "" {
		return "unknown"
	}
	verified := "not verified"
	if r.Verified {
		verified = "verified"
	}
	return strings.Join(nonEmpty(r.Status, verified, text.OneLine(r.Task, eventDetailWidth), r.RunID), " · ")
}

// helpLines renders the answer of /help.
func helpLines() []logLine {
	lines := []logLine{{kind: lineHeading, text: "commands"}}
	for _, c := range commandHelp {
		lines = append(lines, logLine{kind: lineText, text: fmt.Sprintf("  %-18s %s", c.usage, c.what)})
	}
	lines = append(lines,
		logLine{kind: lineDim, text: "  any other text is a task · Ctrl-C cancels a running task · PgUp/PgDn scroll"},
		logLine{},
	)
	return lines
}

// toolLines renders the answer of /tools.
func toolLines(names []string) []logLine {
	lines := []logLine{{kind: lineHeading, text: "tools  " + text.Count(len(names), "tool")}}
	for _, n := range names {
		lines = append(lines, logLine{kind: lineText, text: "  " + n})
	}
	return append(lines, logLine{})
}

// modelLines renders the answer of /models, marking the models in use.
func modelLines(names []string, inUse report.Models) []logLine {
	lines := []logLine{{kind: lineHeading, text: "models  " + text.Count(len(names), "installed model")}}
	for _, n := range names {
		text := "  " + n
		if n == inUse.Planner || n == inUse.Coder || n == inUse.Reviewer {
			text += "  (in use)"
		}
		lines = append(lines, logLine{kind: lineText, text: text})
	}
	return append(lines, logLine{})
}

// errorLine is the log line of an error message.
func errorLine(msg string) logLine { return logLine{kind: lineError, text: "error  " + msg} }
