package agent

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"flow/bufferfs"
	"flow/runtime/config"
	"flow/runtime/lang"
	"flow/runtime/repomap"
	"flow/runtime/report"
)

// The brief is what a role is handed about the workspace up front, so that
// a small model spends its turns on the change instead of on navigation
// (doc/design.md §6's role context, packed): a map of the source files with their
// top-level symbols, then the current text of the files the task most
// likely concerns (repomap.Relevant), within agent.brief_chars characters.
// The host reads the files through the run's file system, so in Neovim
// the text is the buffers' text.

// briefMapShare is the share of the brief the file map may take.
const briefMapShare = 4

// briefHeading is the line above a file's fenced text in the brief.
const briefHeading = " (as the run found it):"

// brief returns the brief's text for a role, "" when agent.brief_chars is
// 0 or the workspace has no source files, and whether it holds the text of
// every source file. output is failing check output (its file:line
// references rank files) and first are paths that come first (the changed
// files, for the reviewer and a repair). heading follows each file's path
// on the line above its text: briefHeading, or "" for the path alone, as
// the whole-file format's answer names a file (doc/design.md §6.7).
func (r *run) brief(ctx context.Context, output string, first []string, heading string) (string, bool) {
	m := r.sourceMap(ctx)
	if m == nil {
		return "", false
	}
	return r.renderBrief(m, output, first, heading)
}

// sourceMap reads the workspace's source files for a brief: nil when
// agent.brief_chars is 0 or there are none.
func (r *run) sourceMap(ctx context.Context) *repomap.Map {
	if r.cfg.Agent.BriefChars <= 0 || r.deps.FS == nil {
		return nil
	}
	m, err := repomap.Build(ctx, r.deps.FS)
	if err != nil || len(m.Files) == 0 {
		return nil
	}
	return &m
}

// renderBrief writes the brief (see brief) from the files of m, which it
// does not read again.
func (r *run) renderBrief(m *repomap.Map, output string, first []string, heading string) (string, bool) {
	budget := r.cfg.Agent.BriefChars
	var b strings.Builder
	b.WriteString("Source files (path: top-level definitions):\n")
	b.WriteString(m.Render(max(budget/briefMapShare, 400)))

	relevant := m.Relevant(repomap.Hints{Task: r.task, Output: output, Paths: first})
	shown := map[string]bool{}
	// In a small workspace every source file fits: show them all, the
	// relevant ones first.
	for _, f := range m.Files {
		if !slices.ContainsFunc(relevant, func(g repomap.File) bool { return g.Path == f.Path }) {
			relevant = append(relevant, f)
		}
	}
	var skipped []string
	for _, f := range relevant {
		text, ok := f.Text()
		if !ok {
			skipped = append(skipped, f.Path)
			continue
		}
		block := "\n" + f.Path + heading + "\n```" + lang.Fence(f.Language) + "\n" + text
		if !strings.HasSuffix(text, "\n") {
			block += "\n"
		}
		block += "```\n"
		if b.Len()+len(block) > budget {
			skipped = append(skipped, f.Path)
			continue
		}
		b.WriteString(block)
		shown[f.Path] = true
	}
	if len(shown) == 0 {
		return b.String(), false
	}
	if n := len(skipped); n > 0 && n <= 8 {
		b.WriteString("\nNot shown (read with file_read when needed): " + strings.Join(skipped, ", ") + "\n")
	}
	return b.String(), len(skipped) == 0
}

// failureOutput joins the output of the failing checks of results, for
// the brief's ranking.
func failureOutput(results []report.CheckResult) string {
	var b strings.Builder
	for _, c := range results {
		if c.Status == report.StatusOK {
			continue
		}
		b.WriteString(c.Stdout)
		b.WriteString("\n")
		b.WriteString(c.Stderr)
		b.WriteString("\n")
	}
	return b.String()
}

// failingBefore is the bounded view of the baseline's failing checks that
// the planner and the first coder see: the project's own failure is the
// best pointer to what the task is about.
func failingBefore(results []report.CheckResult) checkList {
	var out checkList
	l := levels[1]
	for _, c := range results {
		if c.Status != report.StatusOK && len(out) < l.checks {
			out = append(out, summariseCheck(c, l))
		}
	}
	return out
}

// failingRequired names the required checks of results that failed or ran
// out of time: what they say is about the code (a check that could not
// run says nothing about it).
func failingRequired(results []report.CheckResult) []string {
	var names []string
	for _, c := range results {
		if c.Required && (c.Status == report.StatusFailed || c.Status == report.StatusTimeout) {
			names = append(names, c.Name)
		}
	}
	return names
}

// contextOrder is the order of the known context sections in a role's
// message; others follow in name order.
var contextOrder = []string{"plan", "failing_checks_before_changes", "changed_files", "diffs", "verification", "test_and_check_changes", "repair", "current_files"}

// contextTitles are the section headings of the known context keys.
var contextTitles = map[string]string{
	"plan":                          "Plan (written before any change)",
	"failing_checks_before_changes": "Failing checks before any change (run by the host)",
	"changed_files":                 "Changed files",
	"diffs":                         "Diffs of the changed files (by the host)",
	"verification":                  "Checks run by the host",
	"test_and_check_changes":        "Changes to tests and check definitions",
	"repair":                        "What failed in the last cycle",
	"current_files":                 "Current content of the files changed since the run began",
	"workspace":                     "Workspace",
}

// sharedMessage returns the run's shared part, made on first use.
func (r *run) sharedMessage(ctx context.Context) *sharedPart {
	if r.shared == nil {
		task := taskPart(r.task)
		r.shared = &sharedPart{text: task, task: task, files: r.sourceMap(ctx)}
		if r.shared.files != nil {
			brief, all := r.renderBrief(r.shared.files, failureOutput(r.baseline), nil, briefHeading)
			r.shared.text += "\n" + brief
			r.shared.all = all
		}
	}
	return r.shared
}

// fileListing is the brief as the whole-file coder is handed it, in a
// message of its own: each file's path on a line of its own above its
// text, as its answer must name a file (doc/design.md §6.7). Made on
// first use, from the files the shared part read.
func (r *run) fileListing(ctx context.Context) string {
	if r.listing == nil {
		var brief string
		if m := r.sharedMessage(ctx).files; m != nil {
			brief, _ = r.renderBrief(m, failureOutput(r.baseline), nil, "")
		}
		r.listing = &brief
	}
	return *r.listing
}

// taskPart is the task as a role's message begins with it.
func taskPart(task string) string {
	return "Task:\n" + strings.TrimSpace(task) + "\n"
}

// roleSeparator ends the shared part of a role's message; the role's part
// follows.
const roleSeparator = "\n-----\n"

// renderUserMessage renders a role's single user message as text: the
// run's shared part (the task and the brief), then the role's part — each
// context section under a heading (strings as they are, a texter as its
// text, other values as JSON) — then the role's instructions, and last
// the context's "now" entry, when there is one ("Now: …"). Small models
// follow headed text better than one JSON document, and what comes last
// weighs most.
func renderUserMessage(shared string, roleCtx map[string]any, instructions string) (string, error) {
	var b strings.Builder
	b.WriteString(shared)
	b.WriteString(roleSeparator)
	keys := make([]string, 0, len(roleCtx))
	for k := range roleCtx {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, c string) int {
		ia, ic := slices.Index(contextOrder, a), slices.Index(contextOrder, c)
		switch {
		case ia >= 0 && ic >= 0:
			return ia - ic
		case ia >= 0:
			return -1
		case ic >= 0:
			return 1
		}
		return strings.Compare(a, c)
	})
	for _, k := range keys {
		if k == nowKey {
			continue // after the instructions
		}
		if s, ok := roleCtx[k].(string); ok && strings.TrimSpace(s) == "" {
			continue // no plan, for one
		}
		title := contextTitles[k]
		if title == "" {
			title = k
		}
		b.WriteString("\n" + title + ":\n")
		switch v := roleCtx[k].(type) {
		case string:
			b.WriteString(strings.TrimSpace(v))
			b.WriteString("\n")
		case []string:
			b.WriteString(strings.Join(v, "\n"))
			b.WriteString("\n")
		case texter:
			b.WriteString(strings.TrimSpace(v.promptText()))
			b.WriteString("\n")
		default:
			raw, err := json.Marshal(v)
			if err != nil {
				return "", err
			}
			b.Write(raw)
			b.WriteString("\n")
		}
	}
	if instructions != "" {
		b.WriteString("\n")
		b.WriteString(strings.TrimSpace(instructions))
		b.WriteString("\n")
	}
	if now, _ := roleCtx[nowKey].(string); strings.TrimSpace(now) != "" {
		b.WriteString("\nNow: " + strings.TrimSpace(now) + "\n")
	}
	return b.String(), nil
}

// currentFiles is the current text of the files changed since the run
// began, for a coder: the shared part shows them as the run found them,
// and an edit must copy what is there now. Within agent.brief_chars; a
// file that does not fit is named instead.
func (r *run) currentFiles(ctx context.Context) string {
	changed := r.changedList()
	budget := r.cfg.Agent.BriefChars
	if len(changed) == 0 || budget <= 0 {
		return ""
	}
	var b strings.Builder
	var skipped []string
	for _, p := range changed {
		f, err := r.deps.FS.Read(ctx, p, int64(budget))
		if errors.Is(err, bufferfs.ErrTooLarge) {
			skipped = append(skipped, p)
			continue
		}
		if err != nil || !f.Exists {
			continue // deleted, or unreadable: the diff says what happened
		}
		text := string(f.Data)
		block := p + ":\n```" + lang.Fence(lang.Of(p)) + "\n" + text
		if !strings.HasSuffix(text, "\n") {
			block += "\n"
		}
		block += "```\n"
		if b.Len()+len(block) > budget {
			skipped = append(skipped, p)
			continue
		}
		b.WriteString(block)
	}
	if len(skipped) > 0 {
		b.WriteString("Not shown (read with file_read): " + strings.Join(skipped, ", ") + "\n")
	}
	return b.String()
}

// msgPlannerSkipped is the skipped planner's summary: why it did not run.
const msgPlannerSkipped = "the coder is handed the text of every source file, so there is nothing for a planner to find (agent.planner = \"auto\"; set it to \"always\" to plan anyway)"

// plannerSkip returns why the planner need not run, or "" when it must: a
// trusted run with agent.planner = "auto" whose coder brief holds the text
// of every source file. The planner then has nothing to find that the
// coder is not handed, and in the evaluation a small model's plan led its
// coder astray (it took the plan's code for the change made, or followed
// a wrong step such as "update the test").
func (r *run) plannerSkip(ctx context.Context) string {
	if !r.cfg.Trusted || r.cfg.Agent.Planner == config.PlannerAlways {
		return ""
	}
	if !r.sharedMessage(ctx).all {
		return ""
	}
	return msgPlannerSkipped
}

// maxReviewerDiffs bounds the diffs the reviewer is handed.
const maxReviewerDiffs = 6000

// diffText is the unified diff of the changed files as the host sees
// them, within maxReviewerDiffs characters, for the reviewer: a small
// model judges a diff better than it finds one.
func (r *run) diffText(ctx context.Context, changed []string) string {
	var b strings.Builder
	for _, d := range r.reportDiffs(ctx, changed) {
		if b.Len()+len(d.Diff) > maxReviewerDiffs {
			b.WriteString("… more diffs omitted; read the files with file_read\n")
			break
		}
		b.WriteString(d.Diff)
	}
	return b.String()
}
