// Package review is a person's review of a finished run's change, hunk by
// hunk (doc/design.md §12.7): the hunks with ids stable across processes,
// their states (pending, kept, reverted) from the decisions the journal
// keeps, the host's evidence for each hunk's file, and keep and revert
// applied through the same file system the run used, so that in Neovim a
// revert is an edit of the buffer and an unsaved buffer is never
// overwritten. A review never changes the host's verdict.
package review

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"flow/bufferfs"
	"flow/runtime/journal"
	"flow/runtime/report"
)

// InputError is a review that cannot be made as asked: no such run, a run
// with no change, an unknown hunk. Nothing was written.
type InputError struct{ msg string }

func (e *InputError) Error() string { return e.msg }

// inputErr builds an [InputError].
func inputErr(format string, args ...any) error {
	return &InputError{msg: fmt.Sprintf(format, args...)}
}

// Review is one run's change as it stands for a review: open it with
// [Open], read it with [Review.Report], decide with [Review.Apply]. The
// caller holds the workspace lock from Open until it is done.
type Review struct {
	store *journal.Store
	fsys  bufferfs.FS
	runID string
	rep   *report.Run
	files []*file
	// unreadable are files whose change cannot be shown, with why.
	unreadable []report.Conflict
	// state maps a hunk id to its state; a hunk not in it is pending.
	state map[string]string
	at    string
	now   func() time.Time
}

// file is one changed file and its hunks.
type file struct {
	change journal.FileChange
	after  []byte
	hunks  []*hunk
}

// decision is one line of a run's review.jsonl.
type decision struct {
	At    string `json:"at"`
	By    string `json:"by"`
	Hunk  string `json:"hunk"`
	Path  string `json:"path"`
	State string `json:"state"`
}

// Open reads run runID's change ("" for the workspace's last run) from
// store and the files as fsys shows them now.
func Open(ctx context.Context, store *journal.Store, fsys bufferfs.FS, runID string) (*Review, error) {
	if runID == "" {
		id, err := store.LastRunID()
		if err != nil {
			return nil, err
		}
		if id == "" {
			return nil, inputErr("workspace %s has no run to review", store.Root())
		}
		runID = id
	}
	rc, err := store.Change(runID)
	if err != nil {
		return nil, inputErr("%s", trimJournal(err))
	}
	if err := reviewable(rc, store.Root()); err != nil {
		return nil, err
	}
	rep, err := store.Report(runID)
	if err != nil {
		return nil, err
	}
	rv := &Review{store: store, fsys: fsys, runID: runID, rep: rep, state: map[string]string{}, now: time.Now}
	for _, fc := range rc.Files {
		if err := rv.addFile(ctx, fc); err != nil {
			return nil, err
		}
	}
	if err := rv.readDecisions(); err != nil {
		return nil, err
	}
	return rv, nil
}

// reviewable says why run rc cannot be reviewed, or nil.
func reviewable(rc journal.RunChange, root string) error {
	switch {
	case !rc.Finished:
		return inputErr("run %s has not finished (or was cut off before its report was stored); review it once it has a report", rc.RunID)
	case rc.Undone:
		return inputErr("run %s was undone; it has no change left to review", rc.RunID)
	case len(rc.Files) == 0:
		return inputErr("run %s changed no files in %s; there is nothing to review", rc.RunID, root)
	}
	return nil
}

// trimJournal drops the package prefix of a journal error for a person.
func trimJournal(err error) string {
	msg := err.Error()
	const p = "journal: "
	if len(msg) > len(p) && msg[:len(p)] == p {
		return msg[len(p):]
	}
	return msg
}

// addFile computes fc's hunks. The content the run left is the journal's
// copy, or the file as it is when it still holds exactly that.
func (rv *Review) addFile(ctx context.Context, fc journal.FileChange) error {
	after := fc.After
	if after == nil {
		cur, err := rv.fsys.Read(ctx, fc.Path, 0)
		if err != nil || cur.SHA256 != fc.AfterSHA256 {
			rv.unreadable = append(rv.unreadable, report.Conflict{Path: fc.Path,
				Reason: "the journal keeps no copy of what the run wrote here and the file changed since, so its hunks cannot be shown; use flow undo or your editor"})
			return nil
		}
		after = cur.Data
	}
	f := &file{change: fc, after: after, hunks: hunksOf(fc.Path, fc.Old, after)}
	rv.files = append(rv.files, f)
	return nil
}

// readDecisions replays the review's decisions: the last one of each hunk
// is its state.
func (rv *Review) readDecisions() error {
	lines, err := rv.store.Decisions(rv.runID)
	if err != nil {
		return err
	}
	known := map[string]bool{}
	for _, f := range rv.files {
		for _, h := range f.hunks {
			known[h.id] = true
		}
	}
	for _, line := range lines {
		var d decision
		if json.Unmarshal(line, &d) != nil || !known[d.Hunk] {
			continue
		}
		if d.State == report.HunkKept || d.State == report.HunkReverted {
			rv.state[d.Hunk] = d.State
			rv.at = d.At
		}
	}
	return nil
}

// stateOf returns h's state.
func (rv *Review) stateOf(h *hunk) string {
	if s, ok := rv.state[h.id]; ok {
		return s
	}
	return report.HunkPending
}

// RunID returns the reviewed run's id.
func (rv *Review) RunID() string { return rv.runID }

// Report describes the review as it stands.
func (rv *Review) Report() report.ReviewReport {
	out := report.ReviewReport{Status: report.StatusOK, RunID: rv.runID, Workspace: rv.store.Root(),
		Conflicts: append([]report.Conflict(nil), rv.unreadable...)}
	if rv.rep != nil {
		out.Host, out.Verified = rv.rep.Status, rv.rep.Verified
	}
	for _, f := range rv.files {
		ev := evidenceFor(rv.rep, f.change.Path)
		for _, h := range f.hunks {
			oldStart, oldLines, newStart, newLines := h.ranges()
			out.Hunks = append(out.Hunks, report.Hunk{ID: h.id, Path: f.change.Path, OldStart: oldStart, OldLines: oldLines,
				NewStart: newStart, NewLines: newLines, State: rv.stateOf(h), Evidence: ev, Text: h.text})
		}
	}
	out.Review = rv.record()
	out.Message = out.Review.Summary
	return out
}
