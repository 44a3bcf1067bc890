package verify

import (
	"context"
	"strings"

	"flow/runtime/editor"
	"flow/runtime/report"
)

// Reasons of the editor freshness rules (doc/design.md §9, §12.4).
const (
	// ReasonUnsavedBuffers: checks refused while workspace buffers have
	// unsaved changes (the checks would not see them).
	ReasonUnsavedBuffers = "Unsaved editor buffers would not be checked; save them manually first"
	// ReasonEditorChanged: the editor snapshot changed while checks ran.
	ReasonEditorChanged = "Editor changed while running checks"
	// ReasonEditorStale: the editor's files or buffers changed between
	// verification and the end of review.
	ReasonEditorStale = "Editor buffers or files changed during verification/review"
	// ReasonEditorUnavailable prefixes a failed freshness probe.
	ReasonEditorUnavailable = "Editor context unavailable: "
)

// EditorState probes the editor's freshness API v1: the freshness part of
// the attached editor's session.
type EditorState = editor.Freshness

// CheckRunner runs named checks (name "" runs all).
type CheckRunner interface {
	Run(ctx context.Context, name string) report.CheckReport
}

// EditorChecks runs checks under the editor rules of doc/design.md §9 (doc/design.md
// §9.6): before the checks, a failed probe makes the report unverified and
// unsaved workspace buffers make it stale without running anything; after
// them, unsaved buffers, a failed probe or any difference in the workspace
// snapshot make it stale.
type EditorChecks struct {
	Checks CheckRunner
	Editor EditorState
}

// Run runs the checks named name ("" = all).
func (c *EditorChecks) Run(ctx context.Context, name string) report.CheckReport {
	before, err := c.Editor.Context(ctx)
	if err != nil {
		return editorReport(report.StatusUnverified, ReasonEditorUnavailable+err.Error(), nil)
	}
	if before.Dirty() {
		return editorReport(report.StatusStale, UnsavedReason(before), nil)
	}
	rep := c.Checks.Run(ctx, name)
	if ctx.Err() != nil {
		return rep
	}
	after, err := c.Editor.Context(ctx)
	switch {
	case err != nil:
		MarkCheckStale(&rep, ReasonEditorUnavailable+err.Error())
	case after.Dirty():
		MarkCheckStale(&rep, UnsavedReason(after))
	case !editor.SameSnapshot(before.Snapshot, after.Snapshot):
		MarkCheckStale(&rep, ReasonEditorChanged)
	}
	return rep
}

// editorReport is a check report in which no check ran.
func editorReport(status, reason string, checks []report.CheckResult) report.CheckReport {
	if checks == nil {
		checks = []report.CheckResult{}
	}
	return report.CheckReport{Status: status, Checks: checks, Reason: reason}
}

// MarkCheckStale makes a check report stale with reason.
func MarkCheckStale(r *report.CheckReport, reason string) {
	r.Status = report.StatusStale
	r.Verified = false
	r.Reason = reason
}

// EditorSnapshot takes the snapshot verification compares at the end of
// review. It returns nil and a reason when the editor is unavailable or has
// unsaved buffers (the verification is then stale).
func EditorSnapshot(ctx context.Context, ed EditorState) (map[string]any, string) {
	c, err := ed.Context(ctx)
	if err != nil {
		return nil, ReasonEditorUnavailable + err.Error()
	}
	if c.Dirty() {
		return nil, UnsavedReason(c)
	}
	if c.Snapshot == nil {
		return map[string]any{}, ""
	}
	return c.Snapshot, ""
}

// EditorUnchanged compares the editor with an earlier snapshot (doc/design.md §11.7):
// every earlier path keeps an equal disk record and every earlier buffer is
// unchanged, and nothing is unsaved. It returns "" when fresh, else the
// reason the verification is stale.
func EditorUnchanged(ctx context.Context, ed EditorState, earlier map[string]any) string {
	c, err := ed.Context(ctx)
	if err != nil {
		return ReasonEditorUnavailable + err.Error()
	}
	if c.Dirty() {
		return ReasonEditorStale
	}
	if ok, _ := editor.SameObserved(earlier, c.Snapshot); !ok {
		return ReasonEditorStale
	}
	return ""
}

// UnsavedReason is the sentence of checks refused for unsaved buffers: which
// files, and what to do ("save or discard"). Without the files' names it is
// [ReasonUnsavedBuffers].
func UnsavedReason(c editor.Context) string {
	var paths []string
	seen := map[string]bool{}
	add := func(p string) {
		if p != "" && !seen[p] {
			seen[p] = true
			paths = append(paths, p)
		}
	}
	if c.Modified {
		p, _ := c.Raw["path"].(string)
		add(p)
	}
	for _, b := range c.DirtyBuffers {
		if m, ok := b.(map[string]any); ok {
			p, _ := m["path"].(string)
			add(p)
		}
	}
	switch len(paths) {
	case 0:
		return ReasonUnsavedBuffers
	case 1:
		return paths[0] + " has unsaved changes in the editor, which the checks would not see: save or discard it, then run again"
	}
	return strings.Join(paths[:len(paths)-1], ", ") + " and " + paths[len(paths)-1] +
		" have unsaved changes in the editor, which the checks would not see: save or discard them, then run again"
}
