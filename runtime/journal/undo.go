package journal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"flow/bufferfs"
	"flow/internal/text"
	"flow/runtime/diff"
	"flow/runtime/report"
)

// StatusConflict is the status of an undo that left some files untouched.
const StatusConflict = report.StatusConflict

// Undo reverts the run runID ("" for the workspace's last run) through
// fsys, which must be the workspace's file system: the same bufferfs
// implementation the run used, so that in Neovim loaded buffers are
// refreshed and unsaved ones are never overwritten. For each journalled
// file, in path order:
//   - it already has its state from before the run: unchanged;
//   - its raw bytes and mode are those of a version the run wrote: the old
//     content is written back with the old mode, or the file is removed
//     when the run created it;
//   - otherwise it changed after the run: a conflict, left untouched.
//
// When every file ends in its old state the run is marked undone, and a
// later Undo of it is a no-op that says so. Undo never runs git. The caller
// should hold the workspace [Lock]. The returned error is non-nil only
// together with status "error"; the report is always complete.
func (s *Store) Undo(ctx context.Context, fsys bufferfs.FS, runID string) (report.Undo, error) {
	rep := report.Undo{RunID: runID, Workspace: s.root}.Normalize()
	if runID == "" {
		id, err := s.LastRunID()
		if err != nil {
			return undoFailed(rep, err)
		}
		if id == "" {
			rep.Status = report.StatusUnverified
			rep.Message = "no run to undo in workspace " + s.root
			return rep, nil
		}
		runID = id
		rep.RunID = id
	}
	if err := checkRunID(runID); err != nil {
		return undoFailed(rep, err)
	}
	run, ok, err := s.findRun(runID)
	if err != nil {
		return undoFailed(rep, err)
	}
	if !ok {
		return undoFailed(rep, s.missingRun(runID))
	}
	dir := s.runPath(run)
	if _, err := os.Stat(filepath.Join(dir, undoneFile)); err == nil {
		rep.Status = report.StatusOK
		rep.AlreadyUndone = true
		rep.Message = "run " + runID + " was already undone"
		return rep, nil
	}
	entries, err := readLog(dir)
	if err != nil {
		return undoFailed(rep, err)
	}
	if err := s.sameRoot(fsys); err != nil {
		return undoFailed(rep, err)
	}
	failed := false
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return undoFailed(rep, fmt.Errorf("undo of run %s interrupted: %w", runID, err))
		}
		if !s.undoEntry(ctx, fsys, dir, e, &rep) {
			failed = true
		}
	}
	summarise(&rep, len(entries), failed)
	if rep.Status == report.StatusOK {
		if b, err := json.Marshal(rep); err == nil {
			if err := writeAtomic(dir, undoneFile, b); err != nil {
				// The files are restored; only the no-op marker is missing, and
				// a repeated undo would find every file unchanged anyway.
				rep.Message += fmt.Sprintf(" (could not mark the run undone: %v)", err)
			}
		}
	}
	return rep, nil
}

// undoFailed turns err into an error report.
func undoFailed(rep report.Undo, err error) (report.Undo, error) {
	msg := strings.TrimPrefix(err.Error(), "journal: ")
	rep.Status = report.StatusError
	rep.Message = msg
	rep.Error = msg
	return rep, err
}

// missingRun explains why a run id is not in the journal.
func (s *Store) missingRun(id string) error {
	kept := fmt.Sprintf("the last %d runs and at most %s are kept", s.opts.MaxRuns, formatBytes(s.opts.MaxBytes))
	if s.wasEvicted(id) {
		return fmt.Errorf("run %s was removed from the journal by retention (%s); it can no longer be undone", id, kept)
	}
	return fmt.Errorf("run %s is not in the journal (it may have been removed by retention: %s)", id, kept)
}

// sameRoot checks that fsys is the Store's workspace.
func (s *Store) sameRoot(fsys bufferfs.FS) error {
	a, err := os.Stat(s.root)
	if err != nil {
		return fmt.Errorf("workspace %s: %w", s.root, err)
	}
	b, err := os.Stat(fsys.Root())
	if err != nil || !os.SameFile(a, b) {
		return fmt.Errorf("undo got the file system of %s, not of workspace %s", fsys.Root(), s.root)
	}
	return nil
}

// undoEntry reverts one file and records the outcome; it returns false when
// an operation failed (as opposed to a conflict or success).
func (s *Store) undoEntry(ctx context.Context, fsys bufferfs.FS, dir string, e *entry, rep *report.Undo) bool {
	cur, err := fsys.Stat(ctx, e.path)
	if err != nil {
		return undoConflict(rep, e, "left untouched: cannot examine the file: "+err.Error())
	}
	if cur.Exists && cur.SHA256 == "" {
		return undoConflict(rep, e, "left untouched: the file's content could not be hashed")
	}
	if e.hasOldState(cur) {
		rep.Unchanged = append(rep.Unchanged, e.path)
		return true
	}
	if reason := e.changedAfterRun(cur); reason != "" {
		return undoConflict(rep, e, reason)
	}
	// What the file holds now, for the diff of what undo gives back.
	now, nowErr := fsys.Read(ctx, e.path, 0)
	if !e.existed {
		if err := fsys.Remove(ctx, e.path); err != nil {
			return undoFailure(rep, e, "removing the file the run created failed: "+err.Error())
		}
		rep.Removed = append(rep.Removed, e.path)
		addUndoDiff(rep, e.path, now.Data, nil, nowErr, false)
		return true
	}
	old, reason := e.oldContent(dir)
	if reason == "" {
		reason = e.writeBack(ctx, fsys, old)
	}
	if reason != "" {
		return undoFailure(rep, e, reason)
	}
	rep.Restored = append(rep.Restored, e.path)
	addUndoDiff(rep, e.path, now.Data, old, nowErr, true)
	return true
}

// undoConflict records that e's file was left untouched for reason; a
// conflict is not a failure, so it returns true.
func undoConflict(rep *report.Undo, e *entry, reason string) bool {
	rep.Conflicts = append(rep.Conflicts, report.Conflict{Path: e.path, Reason: reason})
	return true
}

// undoFailure records that restoring e's file failed for reason, and
// returns false.
func undoFailure(rep *report.Undo, e *entry, reason string) bool {
	rep.Conflicts = append(rep.Conflicts, report.Conflict{Path: e.path, Reason: reason})
	if rep.Error == "" {
		// The first failure is the cause the report leads with.
		rep.Error = e.path + " could not be restored: " + reason
	}
	return false
}

// hasOldState reports whether the file, as cur finds it, is already as it
// was before the run: absent when it did not exist, or with its old content
// and mode.
func (e *entry) hasOldState(cur bufferfs.Info) bool {
	if !cur.Exists {
		return !e.existed
	}
	return e.existed && cur.SHA256 == e.oldSHA256 && cur.Mode.Perm() == e.oldMode
}

// changedAfterRun says why the file, as cur finds it, must be left
// untouched: it was deleted, or it holds no version the run wrote with
// that version's mode. It returns "" when undo may revert it.
func (e *entry) changedAfterRun(cur bufferfs.Info) string {
	if !cur.Exists {
		return "left untouched: the file was deleted after the run"
	}
	curMode := cur.Mode.Perm()
	contentMatch := false
	var last version
	for _, v := range e.written {
		if v.sha != cur.SHA256 {
			continue
		}
		if v.mode == curMode {
			return ""
		}
		contentMatch = true
		last = v
	}
	if contentMatch {
		return fmt.Sprintf("left untouched: its mode changed after the run (now %#o, the run left %#o)", curMode, last.mode)
	}
	return "left untouched: the file changed after the run"
}

// oldContent reads the file's pre-run content from the journal's blob in
// dir and checks it against the recorded size and hash; the reason is ""
// unless the copy is missing or damaged.
func (e *entry) oldContent(dir string) ([]byte, string) {
	old, err := os.ReadFile(filepath.Join(dir, blobsDir, e.blob))
	if err != nil {
		return nil, "left untouched: the journal's copy of the old content is missing: " + err.Error()
	}
	if int64(len(old)) != e.oldSize || hashHex(old) != e.oldSHA256 {
		return nil, "left untouched: the journal's copy of the old content is damaged"
	}
	return old, ""
}

// writeBack writes old with the old mode and checks that the file then
// holds exactly that; it returns why not, or "".
func (e *entry) writeBack(ctx context.Context, fsys bufferfs.FS, old []byte) string {
	if _, err := fsys.Write(ctx, e.path, old, bufferfs.WriteOptions{Mode: e.oldMode}); err != nil {
		if errors.Is(err, bufferfs.ErrDirtyBuffer) {
			return "it has unsaved changes in the editor: save or discard it, then run flow undo again"
		}
		return "restoring the old content failed: " + err.Error()
	}
	after, err := fsys.Stat(ctx, e.path)
	if err != nil || !after.Exists || after.SHA256 != e.oldSHA256 || after.Mode.Perm() != e.oldMode {
		if err == nil && after.Exists && after.SHA256 == e.oldSHA256 {
			return fmt.Sprintf("the old content was written back but its mode is %#o, not %#o", after.Mode.Perm(), e.oldMode)
		}
		return "the old content was written back but could not be verified"
	}
	return ""
}

// maxUndoDiffs bounds the undo report's diffs together (each file's is
// bounded by diff.DefaultLimit); a file past it keeps its counts.
const maxUndoDiffs = 64000

// addUndoDiff appends the diff from what path held before the undo (cur,
// unknown when readErr is set) to what it holds after (old, exists).
func addUndoDiff(rep *report.Undo, path string, cur, old []byte, readErr error, exists bool) {
	if readErr != nil {
		rep.Diffs = append(rep.Diffs, report.FileDiff{Path: path, Change: report.ChangeModified, Truncated: true, Hunks: []int{},
			Diff: "… diff unavailable: " + path + " could not be read before the undo (" + readErr.Error() + ")\n"})
		return
	}
	used := 0
	for _, d := range rep.Diffs {
		used += len(d.Diff)
	}
	limit := max(min(diff.DefaultLimit, maxUndoDiffs-used), 200)
	rep.Diffs = append(rep.Diffs, diff.File(path, cur, old, true, exists, limit))
}

// summarise sets the status and message once every file was handled.
func summarise(rep *report.Undo, files int, failed bool) {
	switch {
	case failed:
		rep.Status = report.StatusError
	case len(rep.Conflicts) > 0:
		rep.Status = StatusConflict
	default:
		rep.Status = report.StatusOK
	}
	if files == 0 {
		rep.Message = "run " + rep.RunID + " changed no files; nothing to undo"
		return
	}
	var parts []string
	if n := len(rep.Restored); n > 0 {
		parts = append(parts, "restored "+text.Count(n, "file"))
	}
	if n := len(rep.Removed); n > 0 {
		parts = append(parts, "removed "+text.Count(n, "created file"))
	}
	if n := len(rep.Unchanged); n > 0 {
		parts = append(parts, text.Count(n, "file")+" already as before the run")
	}
	if n := len(rep.Conflicts); n > 0 {
		parts = append(parts, text.Count(n, "file")+" left untouched (see conflicts)")
	}
	switch rep.Status {
	case report.StatusOK:
		rep.Message = "undid run " + rep.RunID + ": " + strings.Join(parts, ", ")
	case StatusConflict:
		rep.Message = "undid run " + rep.RunID + " partly: " + strings.Join(parts, ", ") + "; run flow undo again after resolving them"
	default:
		rep.Message = "undo of run " + rep.RunID + " failed for some files: " + strings.Join(parts, ", ")
		if rep.Error == "" {
			rep.Error = "some files could not be restored"
		}
	}
}

// formatBytes renders a byte count for a message ("256 MiB").
func formatBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
