package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"flow/internal/text"
	"flow/runtime/report"
)

// The review view (doc/design.md §13): `/review [run]` walks the run's
// pending hunks one at a time, as `flow review` does on a terminal, and
// each key is applied at once through the runtime, so stopping anywhere
// loses nothing. `/review keep|revert SEL[,SEL…] [run]` decides without
// the walk (a selector is a hunk id, a changed file's path or "all").

const (
	msgReviewUsage = "Usage: /review [run] or /review keep|revert ID[,ID…]|PATH|all [run]"
	// msgReviewOffer ends a run that changed files but is not verified.
	msgReviewOffer = "review the change hunk by hunk: /review"
)

// reviewKeysHelp is the walk's `?` answer, one line per key.
var reviewKeysHelp = []string{
	"y  keep this hunk",
	"n  revert this hunk (its old lines go back)",
	"a  keep this hunk and the rest of this file's",
	"d  revert this hunk and the rest of this file's",
	"q  stop; the hunks not answered stay pending (also Esc)",
	"?  this help",
}

// reviewHints are the keys the hint line names while a walk waits.
var reviewHints = []string{"y keep", "n revert", "a keep file", "d revert file", "q stop", "? help"}

// reviewRequest is a parsed `/review` argument.
type reviewRequest struct {
	runID        string
	keep, revert []string
}

// parseReview parses the argument of `/review`.
func parseReview(arg string) (reviewRequest, error) {
	f := strings.Fields(arg)
	if len(f) == 0 {
		return reviewRequest{}, nil
	}
	switch f[0] {
	case "keep", "revert":
		if len(f) < 2 || len(f) > 3 {
			return reviewRequest{}, errors.New(msgReviewUsage)
		}
		var r reviewRequest
		sel := strings.Split(f[1], ",")
		if f[0] == "keep" {
			r.keep = sel
		} else {
			r.revert = sel
		}
		if len(f) == 3 {
			r.runID = f[2]
		}
		return r, nil
	}
	if len(f) > 1 {
		return reviewRequest{}, errors.New(msgReviewUsage)
	}
	return reviewRequest{runID: f[0]}, nil
}

// reviewWalk is the state of a walk through a run's pending hunks.
type reviewWalk struct {
	runID string
	hunks []report.Hunk // the hunks pending when the walk began, in order
	at    int           // the hunk being asked about (or applied)
	// rest maps a file to the answer its remaining hunks get (a, d).
	rest map[string]string
	// applying is set while an answer is with the runtime.
	applying bool
}

// reviewOpenedMsg is the answer of `/review`: the run's hunks, or why not.
type reviewOpenedMsg struct {
	place int64
	req   reviewRequest
	rep   report.ReviewReport
	err   error
}

// reviewAppliedMsg is the runtime's answer to one key of the walk.
type reviewAppliedMsg struct {
	hunk report.Hunk
	keep bool
	rep  report.ReviewReport
	err  error
}

// startReview handles `/review …`.
func (m *ui) startReview(arg string) tea.Cmd {
	req, err := parseReview(arg)
	if err != nil {
		m.appendLines(errorLine(err.Error()))
		return nil
	}
	if err := m.rt.Busy(); err != nil {
		m.appendLines(errorLine(err.Error()))
		return nil
	}
	ctx, rt, place := m.ctx, m.rt, m.reserve()
	return func() tea.Msg {
		rep, err := rt.Review(ctx, req.runID, req.keep, req.revert)
		return reviewOpenedMsg{place: place, req: req, rep: rep, err: err}
	}
}

// openReview shows the answer of `/review` and, for a plain `/review`
// with hunks pending, begins the walk.
func (m *ui) openReview(msg reviewOpenedMsg) {
	if msg.err != nil {
		m.fill(msg.place, []logLine{errorLine("review: " + msg.err.Error()), {}})
		return
	}
	m.fill(msg.place, reviewLines(msg.rep))
	if msg.rep.Status != report.StatusOK || len(msg.req.keep)+len(msg.req.revert) > 0 {
		return
	}
	w := &reviewWalk{runID: msg.rep.RunID, rest: map[string]string{}}
	for _, h := range msg.rep.Hunks {
		if h.State == report.HunkPending {
			w.hunks = append(w.hunks, h)
		}
	}
	if len(w.hunks) == 0 {
		return
	}
	m.review = w
	m.appendLines(hunkLines(w.hunks[0], 1, len(w.hunks))...)
}

// reviewKey handles a key press while a walk waits for an answer; it
// returns handled false for keys the walk leaves to the rest of the UI.
func (m *ui) reviewKey(key string) (cmd tea.Cmd, handled bool) {
	w := m.review
	switch key {
	case "ctrl+c", "pgup", "pgdown":
		return nil, false
	}
	if w.applying {
		return nil, true
	}
	h := w.hunks[w.at]
	switch key {
	case "y", "n":
		return m.applyHunk(h, key == "y"), true
	case "a", "d":
		w.rest[h.Path] = map[string]string{"a": "y", "d": "n"}[key]
		return m.applyHunk(h, key == "a"), true
	case "q", "esc":
		m.stopReview()
	case "?":
		m.appendLines(reviewHelpLines()...)
	}
	return nil, true
}

// applyHunk asks the runtime to keep or revert h.
func (m *ui) applyHunk(h report.Hunk, keep bool) tea.Cmd {
	m.review.applying = true
	ctx, rt, runID := m.ctx, m.rt, m.review.runID
	return func() tea.Msg {
		var k, r []string
		if keep {
			k = []string{h.ID}
		} else {
			r = []string{h.ID}
		}
		rep, err := rt.Review(ctx, runID, k, r)
		return reviewAppliedMsg{hunk: h, keep: keep, rep: rep, err: err}
	}
}

// applied shows what became of one answer and moves to the next hunk;
// hunks of a file answered with a or d are applied without asking.
func (m *ui) applied(msg reviewAppliedMsg) tea.Cmd {
	w := m.review
	if w == nil {
		return nil
	}
	w.applying = false
	m.appendLines(appliedLine(msg))
	w.at++
	if w.at == len(w.hunks) {
		m.endReview(msg.rep)
		return nil
	}
	next := w.hunks[w.at]
	if d := w.rest[next.Path]; d != "" {
		return m.applyHunk(next, d == "y")
	}
	m.appendLines(hunkLines(next, w.at+1, len(w.hunks))...)
	return nil
}

// stopReview ends the walk at the person's request.
func (m *ui) stopReview() {
	left := len(m.review.hunks) - m.review.at
	verb := "stay"
	if left == 1 {
		verb = "stays"
	}
	m.appendLines(logLine{kind: lineWarn, text: fmt.Sprintf("review stopped · %s %s pending (/review goes on)", text.Count(left, "hunk"), verb)}, logLine{})
	m.review = nil
}

// endReview ends the walk after its last hunk with the review's summary.
func (m *ui) endReview(rep report.ReviewReport) {
	m.review = nil
	line := logLine{kind: lineOK, text: "review done"}
	if rep.Review.Summary != "" {
		line.text += " · " + rep.Review.Summary
	}
	m.appendLines(line, logLine{})
}

// appliedLine says in one line what became of an answer.
func appliedLine(msg reviewAppliedMsg) logLine {
	verb := "reverted"
	if msg.keep {
		verb = "kept"
	}
	switch {
	case msg.err != nil:
		return errorLine(fmt.Sprintf("  %s not %s: %v", msg.hunk.ID, verb, msg.err))
	case msg.rep.Status != report.StatusOK:
		reason := msg.rep.Message
		if n := len(msg.rep.Conflicts); n > 0 {
			reason = msg.rep.Conflicts[n-1].Reason
		}
		return errorLine(fmt.Sprintf("  %s not %s: %s", msg.hunk.ID, verb, reason))
	}
	kind := lineOK
	if !msg.keep {
		kind = lineWarn
	}
	return logLine{kind: kind, text: fmt.Sprintf("  %s %s (%s)", verb, msg.hunk.ID, msg.hunk.Path)}
}

// reviewLines renders a review report: its headline, the person's summary
// beside the host's verdict, what was refused, and one line per hunk.
func reviewLines(r report.ReviewReport) []logLine {
	head := "review " + r.Status
	if r.RunID != "" {
		head += " · run " + r.RunID
	}
	head += " · " + text.Count(len(r.Hunks), "hunk")
	lines := []logLine{{kind: kindOfStatus(r.Status), text: head}}
	add := func(kind lineKind, label, s string) {
		lines = append(lines, logLine{kind: kind, text: "  " + label + "  " + text.OneLine(s, detailWidth)})
	}
	if r.Status != report.StatusOK && r.Message != "" {
		add(lineError, "reason", r.Message)
	}
	for _, c := range r.Conflicts {
		add(lineError, "refused", c.Path+" — "+c.Reason)
	}
	if r.Review.Summary != "" {
		add(lineText, "summary", r.Review.Summary)
	}
	for _, h := range r.Hunks {
		add(hunkStateKind(h.State), fmt.Sprintf("%-8s", h.State), fmt.Sprintf("%s %s -%d,%d +%d,%d · %s", h.ID, h.Path, h.OldStart, h.OldLines, h.NewStart, h.NewLines, h.Evidence.Shows))
	}
	return append(lines, logLine{})
}

// hunkStateKind styles a hunk's state.
func hunkStateKind(state string) lineKind {
	switch state {
	case report.HunkKept:
		return lineOK
	case report.HunkReverted:
		return lineWarn
	}
	return lineText
}

// hunkLines shows one hunk of the walk: its place, file and id, its
// file's evidence, its coloured text and the question.
func hunkLines(h report.Hunk, n, of int) []logLine {
	lines := []logLine{
		{kind: lineHeading, text: fmt.Sprintf("hunk %d/%d · %s · %s", n, of, h.Path, h.ID)},
		{kind: lineDim, text: "  " + text.OneLine(h.Evidence.Sentence, detailWidth)},
	}
	lines = append(lines, diffLines(report.FileDiff{Path: h.Path, Diff: h.Text}, "    ")...)
	return append(lines, logLine{kind: lineInput, text: "keep this hunk? [y,n,a,d,q,?]"})
}

// reviewHelpLines is the answer of `?` during a walk.
func reviewHelpLines() []logLine {
	lines := make([]logLine, 0, len(reviewKeysHelp))
	for _, l := range reviewKeysHelp {
		lines = append(lines, logLine{kind: lineDim, text: "  " + l})
	}
	return lines
}

// answerReview is the line mode's answer of `/review …`: the review
// report, or an error answer naming why it cannot be made.
func answerReview(ctx context.Context, rt Runtime, arg string) any {
	req, err := parseReview(arg)
	if err != nil {
		return errorAnswer(err.Error())
	}
	rep, err := rt.Review(ctx, req.runID, req.keep, req.revert)
	if err != nil {
		return errorAnswer(err.Error())
	}
	return rep
}
